//! The default routes asserted on recorded answers: the default VRF of an exit node of the
//! all-exit fabric (the IPv6-only activation named, lookups never pinned), and IPv6 default
//! expectations.

use super::*;

const NIC5: u32 = 5;

fn default_vrf(ipv6: bool) -> VrfCheck {
    let mut defaults = vec![DefaultExpectation {
        family: Family::V4,
        via: None,
        dev: None,
    }];
    if ipv6 {
        defaults.push(DefaultExpectation {
            family: Family::V6,
            via: None,
            dev: Some("nic5".into()),
        });
    }
    VrfCheck {
        defaults,
        forwarding: false,
        ipv6,
        ..VrfCheck::new("default")
    }
}

/// An exit node of the fabric: BGP unnumbered over nic5, so the IPv6 default is learned
/// `via fe80::1 dev nic5`; the IPv4 one only once the peers are activated for IPv4.
fn exit_node(v4_default: bool) -> RecordedKernel {
    let mut kernel = RecordedKernel::fixed();
    kernel.links.push(link(NIC5, "nic5", None));
    kernel.routes.retain(|r| r.table != 254);
    let mut v6 = Route::new(Family::V6, 254, RouteKind::Unicast);
    v6.gateway = Some(ip("fe80::1"));
    v6.oif = Some(NIC5);
    v6.protocol = 186;
    kernel.routes.push(v6);
    if v4_default {
        let mut v4 = Route::new(Family::V4, 254, RouteKind::Unicast);
        v4.gateway = Some(ip("fe80::1"));
        v4.oif = Some(NIC5);
        v4.protocol = 186;
        kernel.routes.push(v4);
    }
    kernel
}

#[test]
fn the_default_vrf_without_an_ipv4_default_names_the_ipv6_only_activation() {
    let mut kernel = exit_node(false);
    let report = run(&mut kernel, &[default_vrf(true)]);
    assert_eq!(
        report.failures(),
        vec![
            "default: table main has no usable IPv4 default but has the IPv6 default via \
             fe80::1 dev nic5: the fabric activates only IPv6 (its BGP peers are activated only \
             in address-family ipv6 unicast), so no IPv4 default is learned; activate the peers \
             in address-family ipv4 unicast (in frr.conf.local: router bgp ASN / address-family \
             ipv4 unicast / neighbor PEER activate / exit-address-family) or define the fabric \
             dual-stack"
        ]
    );
    assert_eq!(
        report.checks[0].msg,
        "default: the default VRF (table main, lookups without a VRF)"
    );
    assert_eq!(
        report.checks[2].msg,
        "default: IPv6 default via fe80::1 dev nic5 (table main)"
    );
    let state = &report.vrfs[0];
    assert_eq!(
        (state.name.as_str(), state.table, state.ifindex),
        ("default", 254, 0)
    );

    let mut kernel = exit_node(true);
    let report = run(&mut kernel, &[default_vrf(true)]);
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[1].msg,
        "default: IPv4 default via fe80::1 dev nic5 (table main)"
    );
}

#[test]
fn the_default_vrf_with_no_default_at_all_says_so_without_fall_through() {
    let mut kernel = exit_node(false);
    kernel.routes.retain(|r| r.table != 254);
    let report = run(&mut kernel, &[default_vrf(false)]);
    assert_eq!(
        report.failures(),
        vec!["default: table main has no IPv4 default route; expected a usable IPv4 default"]
    );
}

#[test]
fn default_vrf_lookups_are_not_pinned_and_never_fall_through() {
    let mut kernel = exit_node(true);
    kernel
        .lookups
        .insert(ip("203.0.113.8"), answer(254, Some("10.20.99.1"), VMBR0));
    let check = VrfCheck {
        lookups: vec![lookup("203.0.113.8")],
        ..default_vrf(false)
    };
    let report = run(&mut kernel, &[check]);
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(kernel.asked, vec![(ip("203.0.113.8"), None)]);
    assert_eq!(
        report.checks[2].msg,
        "default: 203.0.113.8 resolves via 10.20.99.1 dev vmbr0 (table main)"
    );
    assert_eq!(report.checks[2].expected, json!({}));
}

#[test]
fn ipv6_default_expectations_check_the_ipv6_default() {
    let mut kernel = RecordedKernel::fixed();
    let mut v6 = route(Family::V6, RouteKind::Unicast);
    v6.gateway = Some(ip("fd00:50::1"));
    v6.oif = Some(TRANSIT);
    kernel.routes.push(v6);
    let checks = |via: &str| {
        vec![VrfCheck {
            defaults: vec![DefaultExpectation {
                family: Family::V6,
                via: Some(ip(via)),
                dev: Some("vmbr0.50".into()),
            }],
            forwarding: false,
            ipv6: true,
            ..VrfCheck::new("vrf_tdemo")
        }]
    };
    let report = run(&mut kernel, &checks("fd00:50::1"));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks[1].msg,
        "vrf_tdemo: IPv6 default via fd00:50::1 dev vmbr0.50 (table 1001)"
    );
    let report = run(&mut kernel, &checks("fd00:50::2"));
    assert_eq!(
        report.failures(),
        vec!["vrf_tdemo: table 1001 has default via fd00:50::1 dev vmbr0.50, expected default via fd00:50::2 dev vmbr0.50"]
    );
}
