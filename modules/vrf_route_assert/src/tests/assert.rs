//! The assertion flow on hv02's recorded answers: the mission's two faults, each fix, the
//! defaults and lookups they name, and a kernel that cannot answer.

use super::*;

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
        fn nft_ruleset(&mut self) -> Result<Ruleset, String> {
            self.0.nft_ruleset()
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
