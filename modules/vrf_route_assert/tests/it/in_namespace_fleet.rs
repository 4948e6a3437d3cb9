//! The fleet and all-exit modes on a real kernel, in namespaces each test makes for itself
//! (needs root): no_fall_through, forbidden_interfaces, undeclared VRFs and asymmetric returns
//! against hv02 in miniature with its VRFs emulated (see in_namespace.rs); settle_timeout and
//! the default VRF through the binary, which needs no VRF device.

use crate::in_namespace::{
    fix_routes, hv02, kernel_may_have_vrfs, mission_checks, without_vrf_support_note, Namespace,
};
use serde_json::{json, Value};
use std::time::Duration;
use vrf_route_assert::params::{Request, UndeclaredVrfs, VrfCheck};

fn guarded() -> Vec<VrfCheck> {
    vec![VrfCheck {
        location: "vrfs[0]".into(),
        no_fall_through: true,
        forbidden_interfaces: vec!["vmbr0".into()],
        forwarding: false,
        ..VrfCheck::new("vrf_tdemo")
    }]
}

#[test]
fn no_fall_through_and_forbidden_interfaces_catch_the_leak_then_pass() {
    let ns = hv02();
    let report = ns.assert(guarded());
    let failures = report.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    // Where the lookups leave is read from the namespace's own main table.
    assert!(
        failures[0].starts_with("vrf_tdemo: table 1001 has no IPv4 default route")
            && failures[0].contains(
                "fall through to the main table and leave by the main table's default via \
                 10.20.99.1 dev vmbr0;"
            ),
        "{failures:?}"
    );
    // The node's own 10.20.99.2 (from the local table) is not the address looked up.
    assert_eq!(
        failures[1],
        "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via dev vmbr0 \
         (table main: fall-through), expected not dev vmbr0"
    );

    // The catch-all alone: nothing falls through, the management side is unreachable.
    ns.ip("route add unreachable default metric 4278198272 table 1001");
    let report = ns.assert(guarded());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[1].msg,
        "vrf_tdemo: table 1001 stops IPv4 lookups (unreachable default metric 4278198272)"
    );
    assert_eq!(
        report.checks[2].msg,
        "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) is unreachable (an \
         unreachable route matched)"
    );

    // The leaked default too: the management side is reached by the transit interface.
    ns.ip("route add default via 10.20.50.1 dev vmbr0.50 table 1001");
    let report = ns.assert(guarded());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[2].msg,
        "vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via 10.20.50.1 \
         dev vmbr0.50 (table 1001)"
    );

    let mut unknown = guarded();
    unknown[0].forbidden_interfaces.push("vmbr9".into());
    let error = ns.assert_plan(Request::of(unknown)).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("vrfs[0].forbidden_interfaces[1]: 'vmbr9' is no interface on this node"),
        "{error}"
    );
}

#[test]
fn an_undeclared_vrf_without_a_catch_all_is_reported_and_one_with_it_is_not() {
    let mut ns = hv02();
    ns.extra_vrfs = vec![("vrf_tnew".into(), 1002)];
    fix_routes(&ns);
    let plan = || Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(vec![VrfCheck {
            forwarding: false,
            ..VrfCheck::new("vrf_tdemo")
        }])
    };
    let report = ns.assert_plan(plan()).unwrap();
    assert_eq!(
        serde_json::to_value(&report.leaking_vrfs).unwrap(),
        json!([{"name": "vrf_tnew", "table": 1002, "family": "IPv4",
                "leaves_by": {"dev": "vmbr0", "via": "10.20.99.1"}}]),
        "IPv4 only: the namespace's main table has no IPv6 route beyond link-local"
    );
    assert_eq!(report.failures().len(), 1);
    assert!(report.failures()[0].starts_with("vrf_tnew: undeclared VRF (not in vrfs): table 1002"));

    ns.ip("route add blackhole default table 1002");
    let report = ns.assert_plan(plan()).unwrap();
    assert!(report.leaking_vrfs.is_empty(), "{:?}", report.leaking_vrfs);
    assert!(report.failures().is_empty());
}

#[test]
fn asymmetric_returns_read_the_namespaces_own_rp_filter() {
    let ns = hv02();
    fix_routes(&ns);
    ns.set_forwarding("vmbr0.50", "1");
    ns.set_ipv4_conf("all", "rp_filter", "2");
    ns.set_ipv4_conf("vmbr0.50", "rp_filter", "0");
    let checks = || {
        vec![VrfCheck {
            asymmetric_returns: true,
            ..mission_checks().remove(0)
        }]
    };
    let report = ns.assert(checks());
    assert_eq!(report.failures().len(), 1, "{:?}", report.failures());
    assert!(
        report.failures()[0].starts_with(
            "vrf_tdemo: vmbr0.50 drops asymmetric returns: effective rp_filter 2 (the larger of \
             net.ipv4.conf.all.rp_filter = 2, net.ipv4.conf.vmbr0/50.rp_filter = 0)"
        ),
        "{:?}",
        report.failures()
    );
    ns.set_ipv4_conf("all", "rp_filter", "0");
    let report = ns.assert(checks());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
}

/// A node with the management bridge and no default route yet.
fn bare_node() -> Namespace {
    let ns = Namespace::new();
    for command in [
        "link add vmbr0 type veth peer name mgmt-peer",
        "link set vmbr0 up",
        "link set mgmt-peer up",
        "addr add 10.20.99.2/24 dev vmbr0",
    ] {
        ns.ip(command);
    }
    ns
}

#[test]
fn settle_timeout_waits_for_a_default_added_later_and_reports_how_long() {
    let ns = bare_node();
    let args = json!({"vrfs": [{"name": "default", "default_via": "10.20.99.1"}],
                      "settle_timeout": 20});
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_secs(2));
            ns.ip("route add default via 10.20.99.1 dev vmbr0");
        });
        ns.run_module(args)
    });
    assert_eq!(result["failed"], Value::Null, "{result}");
    let settled_after = result["settled_after"].as_f64().unwrap();
    let attempts = result["attempts"].as_u64().unwrap();
    assert!(
        (1.5..15.0).contains(&settled_after),
        "{settled_after} s: the route came after 2 s"
    );
    assert!(attempts >= 3, "{attempts} attempts, one every half second");
    assert!(
        result["msg"]
            .as_str()
            .unwrap()
            .ends_with(&format!("after {settled_after} s ({attempts} attempts)")),
        "{result}"
    );

    // A route that never comes: the findings stand once the timeout has passed.
    ns.ip("route del default");
    let result = ns.run_module(json!({"vrf": "default", "settle_timeout": 1}));
    assert_eq!(result["failed"], json!(true));
    assert_eq!(
        result["msg"],
        json!("default: table main has no IPv4 default route; expected a usable IPv4 default")
    );
    assert!(result["settled_after"].as_f64().unwrap() >= 1.0, "{result}");
    assert_eq!(result["attempts"], json!(3), "at 0, 0.5 and 1 s");
}

#[test]
fn the_default_vrf_with_only_an_ipv6_default_names_the_ipv6_only_fabric() {
    let ns = bare_node();
    ns.ip("-6 route add default via fe80::1 dev vmbr0");
    let args = json!({"vrfs": [{"name": "default", "ipv6_default_dev": "vmbr0"}]});
    let result = ns.run_module(args.clone());
    assert_eq!(result["failed"], json!(true), "{result}");
    assert_eq!(
        result["msg"],
        json!(
            "default: table main has no usable IPv4 default but has the IPv6 default via \
             fe80::1 dev vmbr0 metric 1024: the fabric activates only IPv6 (its BGP peers are \
             activated only in address-family ipv6 unicast), so no IPv4 default is learned; \
             activate the peers in address-family ipv4 unicast (in frr.conf.local: router bgp \
             ASN / address-family ipv4 unicast / neighbor PEER activate / exit-address-family) \
             or define the fabric dual-stack"
        )
    );
    assert_eq!(result["vrfs"][0]["ifindex"], json!(0));
    assert_eq!(result["vrfs"][0]["table"], json!(254));

    ns.ip("route add default via 10.20.99.1 dev vmbr0");
    let result = ns.run_module(args);
    assert_eq!(result["failed"], Value::Null, "{result}");
    let checks: Vec<&str> = result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["msg"].as_str().unwrap())
        .collect();
    assert_eq!(
        checks,
        [
            "default: the default VRF (table main, lookups without a VRF)",
            "default: IPv4 default via 10.20.99.1 dev vmbr0 (table main)",
            "default: IPv6 default via fe80::1 dev vmbr0 metric 1024 (table main)",
        ]
    );
}

#[test]
fn undeclared_vrfs_alone_inspects_the_node_and_says_what_passed() {
    let ns = bare_node();
    let result = ns.run_module(json!({"undeclared_vrfs": "fail"}));
    assert_eq!(result["leaking_vrfs"], json!([]));
    assert_eq!(result["checks"], json!([]));
    if kernel_may_have_vrfs() {
        assert_eq!(result["failed"], Value::Null, "{result}");
        assert_eq!(result["msg"], json!("no undeclared VRF falls through"));
        assert_eq!(result["warnings"], Value::Null, "{result}");
        return;
    }
    // A kernel without VRF support (this machine's): "none falls through" would be said of
    // nothing; the run cannot tell, says why, and under undeclared_vrfs=fail fails.
    assert_eq!(result["failed"], json!(true), "{result}");
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "undeclared VRFs: cannot tell whether one falls through: this kernel has no VRF support (kernel "
        ),
        "{msg}"
    );
    assert!(msg.contains("it was built without CONFIG_NET_VRF"), "{msg}");
    assert!(!msg.contains("no undeclared VRF falls through"), "{msg}");
    // warn: a warning and a message that says it could not tell.
    let result = ns.run_module(json!({"undeclared_vrfs": "warn"}));
    assert_eq!(result["failed"], Value::Null, "{result}");
    assert_eq!(
        result["msg"],
        json!("cannot tell whether an undeclared VRF falls through: this kernel has no VRF support, see the warnings")
    );
    assert!(result["warnings"][0]
        .as_str()
        .unwrap()
        .starts_with("undeclared VRFs: cannot tell"));
}

#[test]
fn a_missing_vrf_is_not_waited_for() {
    let ns = bare_node();
    let result = ns.run_module(
        json!({"vrfs": [{"name": "vrf_tdemo", "default_via": "10.20.99.1"}],
                                      "settle_timeout": 20}),
    );
    assert_eq!(result["failed"], json!(true), "{result}");
    assert_eq!(
        result["attempts"],
        json!(1),
        "a VRF does not appear by waiting: {result}"
    );
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo)"
        ),
        "{msg}"
    );
    assert!(msg.ends_with(&without_vrf_support_note()), "{msg}");
}
