//! Lookups on the input path (`src`, `iif`) on a real kernel, in namespaces each test makes for
//! itself (needs root; no VRF needed): a node whose uplink nic5 (10.1.1.1/24) takes returns
//! from 203.0.113.0/24 towards the workload 192.0.2.11 behind `tenant` (192.0.2.1/24), as
//! `ip route get 192.0.2.11 from 203.0.113.8 iif nic5` routes them. The kernel's own refusals
//! (forwarding off, the reverse-path filter) are told apart through the namespace's own sysctls.

use crate::in_namespace::Namespace;
use serde_json::{json, Value};
use std::net::IpAddr;
use vrf_route_assert::params::{ExpectedTable, LookupCheck, VrfCheck};

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// The node: nic5 and tenant forward, rp_filter 0 everywhere, 203.0.113.0/24 routed back by
/// nic5 and 198.51.100.0/24 by tenant.
fn node() -> Namespace {
    let ns = Namespace::new();
    for command in [
        "link add nic5 type veth peer name nic5-peer",
        "link add tenant type veth peer name tenant-peer",
        "link set nic5 up",
        "link set nic5-peer up",
        "link set tenant up",
        "link set tenant-peer up",
        "addr add 10.1.1.1/24 dev nic5",
        "addr add 192.0.2.1/24 dev tenant",
        "route add 203.0.113.0/24 via 10.1.1.254 dev nic5",
        "route add 198.51.100.0/24 via 192.0.2.254 dev tenant",
    ] {
        ns.ip(command);
    }
    ns.set_forwarding("all", "1");
    for dev in ["all", "nic5", "tenant"] {
        ns.set_ipv4_conf(dev, "rp_filter", "0");
    }
    ns
}

/// A packet from `src` arriving by nic5 for the workload, which must be forwarded to it.
fn arriving_from(src: &str) -> LookupCheck {
    LookupCheck {
        src: Some(ip(src)),
        iif: Some("nic5".into()),
        dev: Some("tenant".into()),
        ..LookupCheck::of(ip("192.0.2.11"))
    }
}

fn default_vrf(lookup: LookupCheck) -> Vec<VrfCheck> {
    vec![VrfCheck {
        lookups: vec![lookup],
        forwarding: false,
        ..VrfCheck::new("default")
    }]
}

/// The lookup's check (after the `vrf` check).
fn lookup_check(ns: &Namespace, lookup: LookupCheck) -> vrf_route_assert::CheckResult {
    let mut report = ns.assert(default_vrf(lookup));
    report.checks.remove(1)
}

#[test]
fn an_input_lookup_passes_when_the_arrival_device_forwards() {
    let ns = node();
    let check = lookup_check(&ns, arriving_from("203.0.113.8"));
    assert!(check.ok, "{check:#?}");
    assert_eq!(
        check.msg,
        "default: 192.0.2.11 from 203.0.113.8 arriving by nic5 resolves via dev tenant (table \
         main)"
    );
    assert_eq!(
        check.actual,
        json!({"type": "unicast", "via": null, "dev": "tenant", "table": 254,
               "fall_through": false, "src": "203.0.113.8", "iif": "nic5"})
    );
    // The binary takes the short form's src and iif.
    ns.ip("route add default via 10.1.1.254 dev nic5");
    let result = ns.run_module(json!({"vrf": "default", "dst": "192.0.2.11",
                                      "src": "203.0.113.8", "iif": "nic5", "dev": "tenant"}));
    assert_eq!(result["failed"], Value::Null, "{result}");
    assert_eq!(
        result["checks"][2]["actual"]["iif"],
        json!("nic5"),
        "{result}"
    );
}

#[test]
fn forwarding_off_on_the_arrival_device_is_refused_as_not_forwarded() {
    let ns = node();
    ns.set_forwarding("nic5", "0");
    let check = lookup_check(&ns, arriving_from("203.0.113.8"));
    assert!(!check.ok);
    assert_eq!(
        check.msg,
        "default: 192.0.2.11 from 203.0.113.8 arriving by nic5 is not forwarded: nic5 has IPv4 \
         forwarding off (net.ipv4.conf.nic5.forwarding = 0), expected dev tenant; set \
         net.ipv4.conf.nic5.forwarding=1 (deevnet.net.sysctl_forwarding interfaces: [nic5])"
    );
    assert_eq!(check.actual["reason"], json!("not_forwarded"));
    assert_eq!(
        check.actual["sysctls"],
        json!({"net.ipv4.conf.nic5.forwarding": "0"})
    );
    // Forwarding off where the packet leaves does not matter: only where it arrives.
    ns.set_forwarding("nic5", "1");
    ns.set_forwarding("tenant", "0");
    assert!(lookup_check(&ns, arriving_from("203.0.113.8")).ok);
}

#[test]
fn rp_filter_on_the_arrival_device_refuses_a_source_routed_back_elsewhere() {
    let ns = node();
    ns.set_ipv4_conf("nic5", "rp_filter", "1");
    // 203.0.113.8 is routed back by nic5: the strict filter lets it in.
    assert!(lookup_check(&ns, arriving_from("203.0.113.8")).ok);
    let check = lookup_check(&ns, arriving_from("198.51.100.7"));
    assert!(!check.ok);
    assert_eq!(
        check.msg,
        "default: 192.0.2.11 from 198.51.100.7 arriving by nic5 is dropped by nic5's \
         reverse-path filter: effective rp_filter 1 (the larger of net.ipv4.conf.all.rp_filter \
         = 0, net.ipv4.conf.nic5.rp_filter = 1), and the node routes 198.51.100.7 back via \
         192.0.2.254 dev tenant (table main), expected dev tenant; set rp_filter 0 on nic5 and \
         all (deevnet.net.sysctl_forwarding rp_filter: {all: 0, nic5: 0}), or route \
         198.51.100.7 back by nic5"
    );
    assert_eq!(check.actual["reason"], json!("reverse_path"));
    assert_eq!(
        check.actual["rp_filter"],
        json!({"all": "0", "interface": "1", "effective": 1})
    );
    // A blackhole for the destination answers EINVAL too: it is not taken for the filter.
    ns.ip("route add blackhole 192.0.2.99");
    let blackholed = LookupCheck {
        reachable: Some(false),
        ..LookupCheck::of(ip("192.0.2.99"))
    };
    let check = lookup_check(
        &ns,
        LookupCheck {
            src: Some(ip("203.0.113.8")),
            iif: Some("nic5".into()),
            ..blackholed
        },
    );
    assert!(check.ok, "{check:#?}");
    assert_eq!(check.actual["reason"], json!("blackhole"));
    // The filter off: the source passes.
    ns.set_ipv4_conf("nic5", "rp_filter", "0");
    assert!(lookup_check(&ns, arriving_from("198.51.100.7")).ok);
}

#[test]
fn table_any_accepts_an_answer_from_another_table() {
    let ns = node();
    // Returns from 203.0.113.0/24 arriving by nic5 are routed by table 100.
    ns.ip("route add 192.0.2.0/24 dev tenant table 100");
    ns.ip("rule add from 203.0.113.0/24 iif nic5 lookup 100 pref 100");
    let check = lookup_check(&ns, arriving_from("203.0.113.8"));
    assert_eq!(
        check.msg,
        "default: 192.0.2.11 from 203.0.113.8 arriving by nic5 resolves via dev tenant (table \
         100: fall-through), expected an answer from table main (the default VRF's own, where \
         nic5 is)"
    );
    let check = lookup_check(
        &ns,
        LookupCheck {
            table: Some(ExpectedTable::Any),
            ..arriving_from("203.0.113.8")
        },
    );
    assert!(check.ok, "{check:#?}");
    assert_eq!(check.actual["fall_through"], json!(true));
    assert_eq!(check.actual["table"], json!(100));
    assert_eq!(check.expected, json!({"dev": "tenant", "table": "any"}));
}
