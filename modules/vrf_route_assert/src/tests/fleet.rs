//! The modes for a real fleet (issue "Every node of a real fleet"), on hv02's recorded answers:
//! no_fall_through, forbidden_interfaces, undeclared_vrfs and settle_timeout.

use super::*;
use crate::params::UndeclaredVrfs;
use crate::settle::{settle, Clock};
use deevnet_runtime::Failure;
use std::time::Duration;

const NEW_VRF_INDEX: u32 = 20;
const NEW_VRF_TABLE: u32 = 1002;

fn no_fall_through() -> Vec<VrfCheck> {
    vec![VrfCheck {
        no_fall_through: true,
        forwarding: false,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

#[test]
fn no_fall_through_names_where_the_lookups_would_leave() {
    let mut kernel = RecordedKernel::faulty();
    let report = run(&mut kernel, &no_fall_through());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: table 1001 has no IPv4 default route and no catch-all (unreachable, \
             blackhole or prohibit default), so its lookups fall through to the main table and \
             leave by the main table's default via 10.20.99.1 dev vmbr0; give the VRF a default \
             route (such as the leaked transit default) or the catch-all (ip route add vrf \
             vrf_tdemo unreachable default metric 4278198272)"
        ]
    );
    assert_eq!(
        report.checks[1].actual,
        json!({"leaves_by": {"dev": "vmbr0", "via": "10.20.99.1"}})
    );

    // Without a default in main, the lookups still reach its connected prefixes.
    kernel
        .routes
        .retain(|r| !(r.table == 254 && r.is_default()));
    let report = run(&mut kernel, &no_fall_through());
    assert!(
        report.failures()[0].contains(
            "fall through to the main table and reach what the main table routes (it has no \
             IPv4 default, so the node's connected prefixes)"
        ),
        "{:?}",
        report.failures()
    );
}

#[test]
fn a_default_or_any_catch_all_stops_the_lookups_but_throw_does_not() {
    for (kind, stopped) in [
        (RouteKind::Unreachable, true),
        (RouteKind::Blackhole, true),
        (RouteKind::Prohibit, true),
        (RouteKind::Throw, false),
    ] {
        let mut kernel = RecordedKernel::faulty();
        kernel.routes.push(route(Family::V4, kind));
        let report = run(&mut kernel, &no_fall_through());
        assert_eq!(report.failures().is_empty(), stopped, "{kind:?}");
    }
    let mut kernel = RecordedKernel::routes_fixed();
    kernel.routes.retain(|r| r.kind != RouteKind::Unreachable);
    let report = run(&mut kernel, &no_fall_through());
    assert_eq!(
        report.checks[1].msg,
        "vrf_tdemo: table 1001 stops IPv4 lookups (default via 10.20.50.1 dev vmbr0.50)"
    );
}

#[test]
fn no_fall_through_covers_ipv6_when_the_entry_checks_ipv6() {
    let mut kernel = RecordedKernel::faulty();
    kernel.routes.push(catch_all(Family::V4));
    let mut checks = no_fall_through();
    let report = run(&mut kernel, &checks);
    assert!(
        report.failures().is_empty(),
        "IPv4 only: {:?}",
        report.failures()
    );
    checks[0].ipv6 = true;
    let report = run(&mut kernel, &checks);
    assert_eq!(report.failures().len(), 1);
    assert!(
        report.failures()[0]
            .starts_with("vrf_tdemo: table 1001 has no IPv6 default route and no catch-all")
            && report.failures()[0]
                .ends_with("(ip -6 route add vrf vrf_tdemo unreachable default metric 4278198272)"),
        "{:?}",
        report.failures()
    );
    kernel.routes.push(catch_all(Family::V6));
    assert!(run(&mut kernel, &checks).failures().is_empty());
}

fn forbidden(interfaces: &[&str]) -> Vec<VrfCheck> {
    vec![VrfCheck {
        location: "vrfs[0]".into(),
        forbidden_interfaces: interfaces.iter().map(|s| s.to_string()).collect(),
        forwarding: false,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

#[test]
fn forbidden_interfaces_generate_a_lookup_per_connected_prefix() {
    let mut kernel = RecordedKernel::faulty();
    let report = run(&mut kernel, &forbidden(&["vmbr0"]));
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via dev vmbr0 \
             (table main: fall-through), expected not dev vmbr0"
        ]
    );
    // The node's own address (10.20.99.2) is not the one looked up, and the lookup is
    // pinned to the VRF like a hand-written one.
    assert_eq!(kernel.asked, vec![(ip("10.20.99.1"), Some(VRF_INDEX))]);
    let generated = &report.checks[1];
    assert_eq!(generated.check, "lookup 10.20.99.1");
    assert_eq!(
        generated.expected,
        json!({"not_dev": "vmbr0", "table": 1001, "connected_prefix": "10.20.99.0/24"})
    );

    let mut kernel = RecordedKernel::routes_fixed();
    let report = run(&mut kernel, &forbidden(&["vmbr0"]));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[1].msg,
        "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via 10.20.50.1 \
         dev vmbr0.50 (table 1001)"
    );
}

#[test]
fn a_forbidden_interface_without_a_prefix_is_a_warning_and_an_unknown_one_an_error() {
    let mut kernel = RecordedKernel::routes_fixed();
    let report = run(&mut kernel, &forbidden(&["vmbr0.60"]));
    assert!(report.failures().is_empty());
    assert_eq!(
        report.checks.len(),
        1,
        "only the VRF check: no lookup generated"
    );
    assert_eq!(
        report.warnings(),
        vec![
            "vrf_tdemo: vmbr0.60 (in forbidden_interfaces) has no connected IPv4 prefix in the \
             main table, so no lookup was generated for it"
        ]
    );
    let error = assert_vrfs(&mut kernel, &Request::of(forbidden(&["vmbr0", "vmbr9"]))).unwrap_err();
    assert_eq!(
        error.to_string(),
        "vrfs[0].forbidden_interfaces[1]: 'vmbr9' is no interface on this node; give the \
         interfaces tenant traffic must never leave by as ip link names them (such as the \
         management bridge vmbr0), or remove it"
    );
}

/// hv02 with a second VRF, vrf_tnew (table 1002), that the inventory does not list.
fn with_new_vrf(routes: Vec<Route>) -> RecordedKernel {
    let mut kernel = RecordedKernel::fixed();
    let mut vrf = link(NEW_VRF_INDEX, "vrf_tnew", Some("vrf"));
    vrf.vrf_table = Some(NEW_VRF_TABLE);
    kernel.links.push(vrf);
    kernel.routes.extend(routes.into_iter().map(|mut r| {
        r.table = NEW_VRF_TABLE;
        r
    }));
    kernel
}

fn plan_with(undeclared_vrfs: UndeclaredVrfs) -> Request {
    Request {
        undeclared_vrfs,
        ..Request::of(mission_checks())
    }
}

#[test]
fn an_undeclared_leaking_vrf_fails_or_warns_as_asked() {
    let mut kernel = with_new_vrf(vec![]);
    let leak = "vrf_tnew: undeclared VRF (not in vrfs): table 1002 has no IPv4 default route and \
                no catch-all (unreachable, blackhole or prohibit default), so its lookups fall \
                through to the main table and leave by the main table's default via 10.20.99.1 \
                dev vmbr0; declare it in vrfs with its checks, give it a default route or the \
                catch-all (ip route add vrf vrf_tnew unreachable default metric 4278198272), or \
                set undeclared_vrfs=ignore";

    let report = assert_vrfs(&mut kernel, &plan_with(UndeclaredVrfs::Fail)).unwrap();
    assert_eq!(report.failures(), vec![leak]);
    assert_eq!(
        serde_json::to_value(&report.leaking_vrfs).unwrap(),
        json!([{"name": "vrf_tnew", "table": 1002, "family": "IPv4",
                "leaves_by": {"dev": "vmbr0", "via": "10.20.99.1"}}])
    );
    assert_eq!(
        report.checks.len(),
        5,
        "the declared VRF's checks are unchanged"
    );

    let report = assert_vrfs(&mut kernel, &plan_with(UndeclaredVrfs::Warn)).unwrap();
    assert!(report.failures().is_empty());
    assert_eq!(report.warnings(), vec![leak]);

    let report = assert_vrfs(&mut kernel, &plan_with(UndeclaredVrfs::Ignore)).unwrap();
    assert!(report.failures().is_empty() && report.warnings().is_empty());
    assert!(report.leaking_vrfs.is_empty(), "not inspected");
}

#[test]
fn an_undeclared_vrf_with_a_catch_all_or_a_declared_one_is_no_leak() {
    let mut kernel = with_new_vrf(vec![catch_all(Family::V4)]);
    let report = assert_vrfs(&mut kernel, &plan_with(UndeclaredVrfs::Fail)).unwrap();
    assert!(report.leaking_vrfs.is_empty(), "{:?}", report.leaking_vrfs);

    // The declared VRF is not inspected again, even when it leaks.
    let mut kernel = RecordedKernel::faulty();
    let plan = Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(vec![VrfCheck::new("vrf_tdemo")])
    };
    let report = assert_vrfs(&mut kernel, &plan).unwrap();
    assert!(report.leaking_vrfs.is_empty());

    // With no VRF declared at all, every VRF of the node is inspected.
    let plan = Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(vec![])
    };
    let report = assert_vrfs(&mut kernel, &plan).unwrap();
    assert_eq!(report.leaking_vrfs.len(), 1);
    assert_eq!(report.leaking_vrfs[0].name, "vrf_tdemo");
}

#[test]
fn ipv6_leaks_count_only_where_the_main_table_reaches_ipv6_beyond_the_link() {
    let mut kernel = with_new_vrf(vec![catch_all(Family::V4)]);
    let mut link_local = Route::new(Family::V6, 254, RouteKind::Unicast);
    link_local.destination = "fe80::/64".parse().unwrap();
    link_local.oif = Some(VMBR0);
    link_local.protocol = 2;
    kernel.routes.push(link_local);
    let report = assert_vrfs(&mut kernel, &plan_with(UndeclaredVrfs::Fail)).unwrap();
    assert!(report.leaking_vrfs.is_empty(), "{:?}", report.leaking_vrfs);

    let mut default = Route::new(Family::V6, 254, RouteKind::Unicast);
    default.gateway = Some(ip("fe80::1"));
    default.oif = Some(VMBR0);
    kernel.routes.push(default);
    let report = assert_vrfs(&mut kernel, &plan_with(UndeclaredVrfs::Fail)).unwrap();
    assert_eq!(
        serde_json::to_value(&report.leaking_vrfs).unwrap(),
        json!([{"name": "vrf_tnew", "table": 1002, "family": "IPv6",
                "leaves_by": {"dev": "vmbr0", "via": "fe80::1"}}])
    );
}

/// A clock that only moves when slept on.
#[derive(Default)]
struct FakeClock {
    now: Duration,
    sleeps: Vec<Duration>,
}

impl Clock for FakeClock {
    fn elapsed(&self) -> Duration {
        self.now
    }
    fn sleep(&mut self, duration: Duration) {
        self.sleeps.push(duration);
        self.now += duration;
    }
}

/// hv02 whose leaked default and forwarding arrive with the given attempt.
struct ArrivingKernel {
    kernel: RecordedKernel,
    attempt: u32,
    fixed_at: u32,
}

impl Kernel for ArrivingKernel {
    fn links(&mut self) -> Result<Links, Failure> {
        // One links dump per attempt.
        self.attempt += 1;
        if self.attempt == self.fixed_at {
            self.kernel = RecordedKernel::fixed();
        }
        self.kernel.links()
    }
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
        self.kernel.routes(family, table)
    }
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
        self.kernel.route_get(query)
    }
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
        self.kernel.forwarding(family, dev)
    }
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        self.kernel.rp_filter(dev)
    }
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        self.kernel.ipv6_force_forwarding(dev)
    }
    fn vrf_support(&mut self) -> VrfSupport {
        self.kernel.vrf_support()
    }
}

#[test]
fn settle_retries_until_the_routes_arrive_or_the_timeout_passes() {
    let plan = Request {
        settle_timeout: Duration::from_secs(3),
        ..Request::of(mission_checks())
    };
    let mut kernel = ArrivingKernel {
        kernel: RecordedKernel::faulty(),
        attempt: 0,
        fixed_at: 4,
    };
    let mut clock = FakeClock::default();
    let settled = settle(&mut kernel, &plan, &mut clock).unwrap();
    assert!(settled.report.failures().is_empty());
    assert_eq!(settled.attempts, 4);
    assert_eq!(settled.settled_after, Duration::from_millis(1500));

    // Never fixed: attempts every 500 ms, the last sleep cut to the time left, then the
    // findings of the last attempt stand.
    let plan = Request {
        settle_timeout: Duration::from_millis(1200),
        ..plan
    };
    let mut kernel = ArrivingKernel {
        kernel: RecordedKernel::faulty(),
        attempt: 0,
        fixed_at: 0,
    };
    let mut clock = FakeClock::default();
    let settled = settle(&mut kernel, &plan, &mut clock).unwrap();
    assert_eq!(settled.report.failures().len(), 3);
    assert_eq!(settled.attempts, 4);
    assert_eq!(
        clock.sleeps,
        [500, 500, 200].map(Duration::from_millis).to_vec()
    );
    assert_eq!(settled.settled_after, Duration::from_millis(1200));

    // Zero: one attempt, no sleep.
    let mut clock = FakeClock::default();
    let settled = settle(
        &mut RecordedKernel::faulty(),
        &Request::of(mission_checks()),
        &mut clock,
    )
    .unwrap();
    assert_eq!((settled.attempts, clock.sleeps.len()), (1, 0));
}

#[test]
fn a_missing_vrf_ends_the_wait_at_once() {
    let plan = Request {
        settle_timeout: Duration::from_secs(30),
        ..Request::of(vec![VrfCheck::new("vrf_tgone")])
    };
    let mut clock = FakeClock::default();
    let settled = settle(&mut RecordedKernel::faulty(), &plan, &mut clock).unwrap();
    assert_eq!(
        settled.report.failures(),
        ["vrf_tgone: the tenant has no VRF on this node (no interface named vrf_tgone)"]
    );
    assert_eq!((settled.attempts, clock.sleeps.len()), (1, 0));
}

/// hv02 on a kernel built without VRF support: no VRF device, and the kernel says why.
fn without_vrf_support() -> RecordedKernel {
    let mut kernel = RecordedKernel::faulty();
    kernel.links.retain(|link| !link.is_vrf());
    kernel.vrf_support = VrfSupport::Absent("built without CONFIG_NET_VRF".into());
    kernel
}

#[test]
fn without_vrf_support_no_undeclared_vrf_is_not_claimed() {
    let cannot_tell = "undeclared VRFs: cannot tell whether one falls through: this kernel has no VRF \
                       support (built without CONFIG_NET_VRF), so there is no VRF to inspect and nothing \
                       about tenant traffic was proven; run the assertion on the node's own kernel, or set \
                       undeclared_vrfs=ignore";
    let mut plan = Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(Vec::new())
    };
    let report = assert_vrfs(&mut without_vrf_support(), &plan).unwrap();
    assert_eq!(report.failures(), [cannot_tell]);
    assert!(!report.may_settle());
    plan.undeclared_vrfs = UndeclaredVrfs::Warn;
    let report = assert_vrfs(&mut without_vrf_support(), &plan).unwrap();
    assert!(report.failures().is_empty());
    assert_eq!(report.warnings(), [cannot_tell]);
    plan.undeclared_vrfs = UndeclaredVrfs::Ignore;
    let report = assert_vrfs(&mut without_vrf_support(), &plan).unwrap();
    assert!(report.failures().is_empty() && report.warnings().is_empty());
    // A declared VRF's absence names the kernel's lack.
    let report = assert_vrfs(
        &mut without_vrf_support(),
        &Request::of(vec![VrfCheck::new("vrf_tdemo")]),
    )
    .unwrap();
    assert_eq!(
        report.failures(),
        ["vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo); this kernel \
          cannot have VRFs: built without CONFIG_NET_VRF"]
    );
}

#[test]
fn with_a_vrf_present_the_kernel_is_not_asked_about_support() {
    let mut kernel = RecordedKernel::faulty();
    kernel.vrf_support = VrfSupport::Absent("not to be read".into());
    let plan = Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(mission_checks())
    };
    let report = assert_vrfs(&mut kernel, &plan).unwrap();
    assert_eq!(report.undeclared_unknown(), None);
}
