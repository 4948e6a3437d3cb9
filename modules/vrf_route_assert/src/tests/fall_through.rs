//! Fall-through on hv02's recorded answers: `no_fall_through` naming where the lookups would
//! leave and what stops them, and the undeclared VRFs that leak, reported as
//! `undeclared_vrfs` asks.

use super::*;
use crate::params::UndeclaredVrfs;

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
