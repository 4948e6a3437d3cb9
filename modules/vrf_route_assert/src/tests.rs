//! The evaluation on recorded kernel answers: the mission's exit node hv02 with tenant VRF
//! vrf_tdemo (table 1001), transit vmbr0.50 to gateway 10.20.50.1 and the management bridge
//! vmbr0 on 10.20.99.0/24, before and after each fault is fixed.

use super::*;
use crate::params::{DefaultExpectation, ExpectedTable, LookupCheck, Request, VrfCheck};
use deevnet_runtime::netlink::{Link, Refusal, RouteKind, RouteQuery};
use deevnet_runtime::Failure;
use std::collections::HashMap;
use std::net::IpAddr;

const VRF_INDEX: u32 = 10;
const VRF_TABLE: u32 = 1001;
const LO: u32 = 1;
const VMBR0: u32 = 2;
const TRANSIT: u32 = 3;
const TENANT_BRIDGE: u32 = 11;
const OTHER_VLAN: u32 = 4;
const CATCH_ALL_METRIC: u32 = 4278198272;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn link(index: u32, name: &str, kind: Option<&str>) -> Link {
    Link {
        index,
        name: name.into(),
        kind: kind.map(str::to_string),
        ..Link::default()
    }
}

fn hv02_links() -> Vec<Link> {
    let mut vrf = link(VRF_INDEX, "vrf_tdemo", Some("vrf"));
    vrf.vrf_table = Some(VRF_TABLE);
    let mut tenant_bridge = link(TENANT_BRIDGE, "tdemo", Some("bridge"));
    tenant_bridge.controller = Some(VRF_INDEX);
    let mut transit = link(TRANSIT, "vmbr0.50", Some("vlan"));
    transit.parent = Some(VMBR0);
    vec![
        link(LO, "lo", None),
        link(VMBR0, "vmbr0", Some("bridge")),
        transit,
        link(OTHER_VLAN, "vmbr0.60", Some("vlan")),
        vrf,
        tenant_bridge,
    ]
}

fn route(family: Family, kind: RouteKind) -> Route {
    Route::new(family, VRF_TABLE, kind)
}

/// What every tenant VRF table holds: the tenant subnet on its bridge, and its local address.
fn connected_routes() -> Vec<Route> {
    let mut subnet = route(Family::V4, RouteKind::Unicast);
    subnet.destination = "10.77.0.0/24".parse().unwrap();
    subnet.oif = Some(TENANT_BRIDGE);
    subnet.protocol = 2;
    let mut local = route(Family::V4, RouteKind::Local);
    local.destination = "10.77.0.1/32".parse().unwrap();
    local.oif = Some(TENANT_BRIDGE);
    local.protocol = 2;
    vec![subnet, local]
}

/// hv02's main table: the management subnet on vmbr0 and its default via 10.20.99.1, the
/// transit subnet on vmbr0.50, as `ip route show table main` lists them.
fn main_table() -> Vec<Route> {
    let connected = |prefix: &str, oif: u32, own: &str| {
        let mut route = Route::new(Family::V4, 254, RouteKind::Unicast);
        route.destination = prefix.parse().unwrap();
        route.oif = Some(oif);
        route.protocol = 2;
        route.pref_source = Some(ip(own));
        route
    };
    let mut default = Route::new(Family::V4, 254, RouteKind::Unicast);
    default.gateway = Some(ip("10.20.99.1"));
    default.oif = Some(VMBR0);
    default.protocol = 3;
    vec![
        default,
        connected("10.20.99.0/24", VMBR0, "10.20.99.2"),
        connected("10.20.50.0/24", TRANSIT, "10.20.50.2"),
    ]
}

/// The node's own addresses (table local).
fn local_table() -> Vec<Route> {
    ["10.20.99.2", "10.20.50.2"]
        .into_iter()
        .map(|own| {
            let mut route = Route::new(Family::V4, 255, RouteKind::Local);
            route.destination = format!("{own}/32").parse().unwrap();
            route.protocol = 2;
            route
        })
        .collect()
}

/// The leaked default `0.0.0.0/0 via 10.20.50.1 dev vmbr0.50` (nexthop-vrf default).
fn transit_default() -> Route {
    let mut default = route(Family::V4, RouteKind::Unicast);
    default.gateway = Some(ip("10.20.50.1"));
    default.oif = Some(TRANSIT);
    default.protocol = 3;
    default
}

fn catch_all(family: Family) -> Route {
    let mut unreachable = route(family, RouteKind::Unreachable);
    unreachable.metric = Some(CATCH_ALL_METRIC);
    unreachable.protocol = 3;
    unreachable
}

fn answer(table: u32, gateway: Option<&str>, oif: u32) -> Lookup {
    let mut route = Route::new(Family::V4, table, RouteKind::Unicast);
    route.gateway = gateway.map(ip);
    route.oif = Some(oif);
    Lookup::Route(route)
}

struct RecordedKernel {
    links: Vec<Link>,
    routes: Vec<Route>,
    lookups: HashMap<IpAddr, Lookup>,
    forwarding: HashMap<String, String>,
    rp_filter: HashMap<String, String>,
    /// The answers to input lookups (with iif), by destination.
    arriving: HashMap<IpAddr, Lookup>,
    forwarding_v6: HashMap<String, String>,
    force_forwarding: HashMap<String, String>,
    asked: Vec<(IpAddr, Option<u32>)>,
    queries: Vec<RouteQuery>,
    /// What the kernel says of its VRF support when no VRF exists.
    vrf_support: VrfSupport,
}

impl RecordedKernel {
    /// hv02 as found: neither fault fixed.
    fn faulty() -> Self {
        RecordedKernel {
            links: hv02_links(),
            routes: [connected_routes(), main_table(), local_table()].concat(),
            lookups: HashMap::from([
                // No default and no catch-all in 1001: main answers, by the management bridge.
                (ip("10.20.99.5"), answer(254, None, VMBR0)),
                (ip("8.8.8.8"), answer(254, Some("10.20.99.1"), VMBR0)),
                (ip("10.20.99.1"), answer(254, None, VMBR0)),
            ]),
            forwarding: HashMap::from([
                ("vmbr0".to_string(), "1".to_string()),
                ("vmbr0.50".to_string(), "0".to_string()),
            ]),
            // Debian's default: loose on every interface.
            rp_filter: HashMap::from([
                ("all".to_string(), "2".to_string()),
                ("vmbr0".to_string(), "2".to_string()),
                ("vmbr0.50".to_string(), "2".to_string()),
            ]),
            arriving: HashMap::new(),
            forwarding_v6: HashMap::new(),
            force_forwarding: HashMap::new(),
            asked: Vec::new(),
            queries: Vec::new(),
            vrf_support: VrfSupport::Present,
        }
    }

    /// Fault 2 fixed (leaked default and catch-all), fault 1 still there.
    fn routes_fixed() -> Self {
        let mut kernel = Self::faulty();
        kernel.routes.push(transit_default());
        kernel.routes.push(catch_all(Family::V4));
        kernel.routes.push(catch_all(Family::V6));
        for dst in ["10.20.99.5", "8.8.8.8", "10.20.99.1"] {
            kernel
                .lookups
                .insert(ip(dst), answer(VRF_TABLE, Some("10.20.50.1"), TRANSIT));
        }
        kernel
    }

    fn leaked_default(&mut self) -> &mut Route {
        self.routes
            .iter_mut()
            .find(|r| r.table == VRF_TABLE && r.gateway.is_some())
            .unwrap()
    }

    fn fixed() -> Self {
        let mut kernel = Self::routes_fixed();
        kernel.forwarding.insert("vmbr0.50".into(), "1".into());
        kernel
    }
}

impl Kernel for RecordedKernel {
    fn links(&mut self) -> Result<Links, Failure> {
        Ok(Links::new(self.links.clone()))
    }
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
        Ok(self
            .routes
            .iter()
            .filter(|r| r.family == family && r.table == table)
            .cloned()
            .collect())
    }
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
        let destination = query.destination;
        self.asked.push((destination, query.oif));
        self.queries.push(*query);
        let answers = match query.iif {
            Some(_) => &self.arriving,
            None => &self.lookups,
        };
        answers
            .get(&destination)
            .cloned()
            .ok_or_else(|| Failure::new(format!("no recorded answer for {destination}")))
    }
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
        Ok(match family {
            Family::V4 => self.forwarding.get(dev).cloned(),
            Family::V6 => self.forwarding_v6.get(dev).cloned(),
        })
    }
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        Ok(self.rp_filter.get(dev).cloned())
    }
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        Ok(self.force_forwarding.get(dev).cloned())
    }
    fn vrf_support(&mut self) -> VrfSupport {
        self.vrf_support.clone()
    }
}

fn lookup(dst: &str) -> LookupCheck {
    LookupCheck::of(ip(dst))
}

/// The mission's checks: the transit interface forwards; the VRF has a default via the
/// transit gateway; management-bound tenant traffic leaves by the transit interface, not the
/// management bridge; and the internet resolves from the VRF's own table.
fn mission_checks() -> Vec<VrfCheck> {
    vec![VrfCheck {
        defaults: vec![DefaultExpectation {
            family: Family::V4,
            via: Some(ip("10.20.50.1")),
            dev: Some("vmbr0.50".into()),
        }],
        lookups: vec![
            LookupCheck {
                dev: Some("vmbr0.50".into()),
                not_dev: Some("vmbr0".into()),
                ..lookup("10.20.99.5")
            },
            lookup("8.8.8.8"),
        ],
        forwarding: true,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

fn run(kernel: &mut RecordedKernel, checks: &[VrfCheck]) -> Report {
    assert_vrfs(kernel, &Request::of(checks.to_vec())).unwrap()
}

#[test]
fn before_the_fixes_both_faults_are_reported_and_fall_through_is_named() {
    let mut kernel = RecordedKernel::faulty();
    let report = run(&mut kernel, &mission_checks());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: table 1001 has no IPv4 default route and no unreachable catch-all, so \
             lookups fall through to the main table; expected default via 10.20.50.1 dev vmbr0.50",
            "vrf_tdemo: 10.20.99.5 resolves via dev vmbr0 (table main: fall-through), expected \
             dev vmbr0.50, not dev vmbr0",
            "vrf_tdemo: 8.8.8.8 resolves via 10.20.99.1 dev vmbr0 (table main: fall-through), \
             expected an answer from table 1001 (the VRF's own)",
        ]
    );
    // Every lookup is pinned to the VRF device, as `ip route get DST vrf vrf_tdemo` does.
    assert!(kernel.asked.iter().all(|(_, oif)| *oif == Some(VRF_INDEX)));
    let lookup = &report.checks[2];
    assert_eq!(lookup.check, "lookup 10.20.99.5");
    assert_eq!(lookup.actual["fall_through"], json!(true));
    assert_eq!(lookup.actual["table"], json!(254));
    assert_eq!(
        lookup.expected,
        json!({"dev": "vmbr0.50", "not_dev": "vmbr0", "table": 1001})
    );
    let state = &report.vrfs[0];
    assert_eq!((state.table, state.ifindex), (VRF_TABLE, VRF_INDEX));
    assert!(state.defaults.is_empty());
    assert!(!state.unreachable_catch_all);
}

#[test]
fn with_the_routes_fixed_the_transit_interface_not_forwarding_is_reported() {
    let mut kernel = RecordedKernel::routes_fixed();
    let report = run(&mut kernel, &mission_checks());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: vmbr0.50 has IPv4 forwarding off (net.ipv4.conf.vmbr0/50.forwarding = \
             0), expected 1: tenant traffic leaves by it and replies coming back by it are not \
             forwarded"
        ]
    );
    // One forwarding check per interface, however many routes leave by it.
    let forwarding: Vec<&str> = report
        .checks
        .iter()
        .filter(|r| r.check.starts_with("forwarding"))
        .map(|r| r.check.as_str())
        .collect();
    assert_eq!(forwarding, ["forwarding vmbr0.50"]);
}

#[test]
fn after_both_fixes_every_check_passes_and_the_catch_all_is_reported() {
    let mut kernel = RecordedKernel::fixed();
    let report = run(&mut kernel, &mission_checks());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks.len(),
        5,
        "vrf, default, 2 lookups, forwarding"
    );
    assert_eq!(
        report.checks[2].msg,
        "vrf_tdemo: 10.20.99.5 resolves via 10.20.50.1 dev vmbr0.50 (table 1001)"
    );
    let state = &report.vrfs[0];
    assert!(state.unreachable_catch_all && state.unreachable_catch_all_ipv6);
    assert_eq!(
        serde_json::to_value(&state.defaults).unwrap(),
        json!([
            {"family": "IPv4", "type": "unicast", "gateway": "10.20.50.1", "dev": "vmbr0.50",
             "metric": null, "protocol": "boot"},
            {"family": "IPv4", "type": "unreachable", "gateway": null, "dev": null,
             "metric": CATCH_ALL_METRIC, "protocol": "boot"},
            {"family": "IPv6", "type": "unreachable", "gateway": null, "dev": null,
             "metric": CATCH_ALL_METRIC, "protocol": "boot"},
        ])
    );
}

#[test]
fn the_catch_all_alone_is_not_a_usable_default() {
    let mut kernel = RecordedKernel::faulty();
    kernel.routes.push(catch_all(Family::V4));
    kernel
        .lookups
        .insert(ip("10.20.99.5"), Lookup::Refused(Refusal::Unreachable));
    kernel
        .lookups
        .insert(ip("8.8.8.8"), Lookup::Refused(Refusal::Unreachable));
    let report = run(&mut kernel, &mission_checks());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: table 1001 has only the catch-all (unreachable default metric \
             4278198272), no usable IPv4 default; expected default via 10.20.50.1 dev vmbr0.50",
            "vrf_tdemo: 10.20.99.5 is unreachable (an unreachable route matched), expected dev \
             vmbr0.50",
        ],
        "an unreachable answer with no expectation is the VRF isolating the tenant: not a failure"
    );
}

#[test]
fn a_wrong_default_names_what_is_there() {
    let mut kernel = RecordedKernel::fixed();
    let default = kernel.leaked_default();
    default.gateway = Some(ip("10.20.60.1"));
    default.oif = Some(OTHER_VLAN);
    default.metric = Some(20);
    kernel.forwarding.insert("vmbr0.60".into(), "1".into());
    let checks = vec![VrfCheck {
        lookups: vec![],
        ..mission_checks().remove(0)
    }];
    let report = run(&mut kernel, &checks);
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: table 1001 has default via 10.20.60.1 dev vmbr0.60 metric 20, expected \
             default via 10.20.50.1 dev vmbr0.50"
        ]
    );
}

#[test]
fn a_multipath_default_matches_by_any_of_its_paths() {
    use deevnet_runtime::netlink::NextHop;
    let mut kernel = RecordedKernel::fixed();
    let default = kernel.leaked_default();
    default.gateway = None;
    default.oif = None;
    default.nexthops = vec![
        NextHop {
            gateway: Some(ip("10.20.60.1")),
            oif: OTHER_VLAN,
            weight: 1,
        },
        NextHop {
            gateway: Some(ip("10.20.50.1")),
            oif: TRANSIT,
            weight: 1,
        },
    ];
    kernel.forwarding.insert("vmbr0.60".into(), "0".into());
    let report = run(&mut kernel, &mission_checks());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: vmbr0.60 has IPv4 forwarding off (net.ipv4.conf.vmbr0/60.forwarding = \
             0), expected 1: tenant traffic leaves by it and replies coming back by it are not \
             forwarded"
        ],
        "both paths of the default carry tenant traffic, so both must forward"
    );
    assert_eq!(
        report.vrfs[0].defaults.len(),
        4,
        "each path, and the IPv4 and IPv6 catch-alls"
    );
}

#[test]
fn a_missing_vrf_says_the_tenant_has_none_here() {
    let mut kernel = RecordedKernel::fixed();
    let mut checks = mission_checks();
    checks.push(VrfCheck {
        lookups: vec![lookup("8.8.8.8")],
        forwarding: true,
        ..VrfCheck::new("vrf_tother")
    });
    checks.push(VrfCheck {
        lookups: vec![],
        forwarding: true,
        ..VrfCheck::new("vmbr0")
    });
    let report = run(&mut kernel, &checks);
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tother: the tenant has no VRF on this node (no interface named vrf_tother)",
            "vmbr0: the tenant has no VRF on this node (vmbr0 is a bridge, not a VRF)",
        ]
    );
    assert_eq!(
        report.vrfs.len(),
        1,
        "only the VRFs that exist are described"
    );
    assert_eq!(
        kernel.asked.len(),
        2,
        "no lookup is made in a VRF that does not exist"
    );
}

#[test]
fn reachable_false_and_not_dev_hold_for_a_refused_lookup() {
    let mut kernel = RecordedKernel::fixed();
    kernel
        .lookups
        .insert(ip("10.20.99.5"), Lookup::Refused(Refusal::Unreachable));
    let checks = vec![VrfCheck {
        lookups: vec![LookupCheck {
            reachable: Some(false),
            not_dev: Some("vmbr0".into()),
            ..lookup("10.20.99.5")
        }],
        forwarding: true,
        ..VrfCheck::new("vrf_tdemo")
    }];
    let report = run(&mut kernel, &checks);
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[1].actual,
        json!({"type": "refused", "reason": "unreachable"})
    );

    kernel.lookups.insert(
        ip("10.20.99.5"),
        answer(VRF_TABLE, Some("10.20.50.1"), TRANSIT),
    );
    let report = run(&mut kernel, &checks);
    assert_eq!(
        report.failures(),
        vec!["vrf_tdemo: 10.20.99.5 resolves via 10.20.50.1 dev vmbr0.50 (table 1001), expected unreachable"]
    );
}

#[test]
fn an_expected_table_replaces_the_fall_through_check() {
    let mut kernel = RecordedKernel::faulty();
    let checks = |table: u32| {
        vec![VrfCheck {
            lookups: vec![LookupCheck {
                table: Some(ExpectedTable::Id(table)),
                ..lookup("8.8.8.8")
            }],
            forwarding: false,
            ..VrfCheck::new("vrf_tdemo")
        }]
    };
    let report = run(&mut kernel, &checks(254));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks.len(),
        2,
        "forwarding=false: no forwarding check"
    );
    let report = run(&mut kernel, &checks(VRF_TABLE));
    assert_eq!(
        report.failures(),
        vec!["vrf_tdemo: 8.8.8.8 resolves via 10.20.99.1 dev vmbr0 (table main: fall-through), expected table 1001"]
    );
}

#[test]
fn via_expectations_and_local_answers() {
    let mut kernel = RecordedKernel::fixed();
    let mut local = Route::new(Family::V4, VRF_TABLE, RouteKind::Local);
    local.oif = Some(VRF_INDEX);
    kernel.lookups.insert(ip("10.77.0.1"), Lookup::Route(local));
    let checks = vec![VrfCheck {
        lookups: vec![
            LookupCheck {
                via: Some(ip("10.20.50.2")),
                ..lookup("8.8.8.8")
            },
            lookup("10.77.0.1"),
        ],
        forwarding: true,
        ..VrfCheck::new("vrf_tdemo")
    }];
    let report = run(&mut kernel, &checks);
    assert_eq!(
        report.failures(),
        vec!["vrf_tdemo: 8.8.8.8 resolves via 10.20.50.1 dev vmbr0.50 (table 1001), expected via 10.20.50.2"]
    );
    assert_eq!(
        report.checks[2].msg,
        "vrf_tdemo: 10.77.0.1 is local to the node, delivered via dev vrf_tdemo (table 1001)"
    );
    let forwarding: Vec<&str> = report
        .checks
        .iter()
        .filter(|r| r.check.starts_with("forwarding"))
        .map(|r| r.check.as_str())
        .collect();
    assert_eq!(
        forwarding,
        ["forwarding vmbr0.50"],
        "a local answer leaves by nothing"
    );
}

#[test]
fn ipv6_defaults_and_lookups_use_ipv6_routes_and_forwarding() {
    struct V6Kernel(RecordedKernel, Vec<(Family, String)>);
    impl Kernel for V6Kernel {
        fn links(&mut self) -> Result<Links, Failure> {
            self.0.links()
        }
        fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
            self.0.routes(family, table)
        }
        fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
            self.0.route_get(query)
        }
        fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
            self.1.push((family, dev.to_string()));
            Ok(Some("0".into()))
        }
        fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
            self.0.rp_filter(dev)
        }
        fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
            self.0.ipv6_force_forwarding(dev)
        }
        fn vrf_support(&mut self) -> VrfSupport {
            self.0.vrf_support()
        }
    }
    let mut recorded = RecordedKernel::faulty();
    let mut default = Route::new(Family::V6, VRF_TABLE, RouteKind::Unicast);
    default.gateway = Some(ip("fd00:50::1"));
    default.oif = Some(TRANSIT);
    recorded.routes.push(default.clone());
    default.table = 254;
    recorded
        .lookups
        .insert(ip("2001:db8::1"), Lookup::Route(default));
    let mut kernel = V6Kernel(recorded, Vec::new());
    let checks = vec![VrfCheck {
        defaults: vec![DefaultExpectation {
            family: Family::V6,
            via: Some(ip("fd00:50::1")),
            dev: None,
        }],
        lookups: vec![lookup("2001:db8::1")],
        forwarding: true,
        ..VrfCheck::new("vrf_tdemo")
    }];
    let report = assert_vrfs(&mut kernel, &Request::of(checks)).unwrap();
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: 2001:db8::1 resolves via fd00:50::1 dev vmbr0.50 (table main: \
             fall-through), expected an answer from table 1001 (the VRF's own)",
            "vrf_tdemo: vmbr0.50 has IPv6 forwarding off (net.ipv6.conf.vmbr0/50.forwarding = \
             0), expected 1: tenant traffic leaves by it and replies coming back by it are not \
             forwarded",
        ]
    );
    assert_eq!(kernel.1, vec![(Family::V6, "vmbr0.50".to_string())]);
}

#[test]
fn a_kernel_that_cannot_answer_fails_the_run_instead_of_passing() {
    let mut kernel = RecordedKernel::fixed();
    kernel.lookups.clear();
    let error = assert_vrfs(&mut kernel, &Request::of(mission_checks())).unwrap_err();
    assert_eq!(error.to_string(), "no recorded answer for 10.20.99.5");
}

mod all_exit;
mod fleet;
mod input;
