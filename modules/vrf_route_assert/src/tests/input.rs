//! Lookups on the input path (`src`, `iif`) and `table: any`, on recorded answers: a return
//! from 203.0.113.8 entering hv02 by the uplink nic5 towards the workload 192.0.2.11 behind
//! the tenant bridge, and the refusals the errno alone cannot tell apart.

use super::*;

const NIC5: u32 = 5;

fn node() -> RecordedKernel {
    let mut kernel = RecordedKernel::fixed();
    kernel.links.push(link(NIC5, "nic5", None));
    kernel.forwarding.insert("nic5".into(), "1".into());
    kernel.rp_filter.insert("all".into(), "0".into());
    kernel.rp_filter.insert("nic5".into(), "0".into());
    kernel
        .arriving
        .insert(ip("192.0.2.11"), answer(254, None, TENANT_BRIDGE));
    kernel
}

fn return_by(iif: &str) -> LookupCheck {
    LookupCheck {
        src: Some(ip("203.0.113.8")),
        iif: Some(iif.into()),
        ..lookup("192.0.2.11")
    }
}

fn in_vrf(name: &str, lookup: LookupCheck) -> Vec<VrfCheck> {
    vec![VrfCheck {
        lookups: vec![lookup],
        forwarding: false,
        ..VrfCheck::new(name)
    }]
}

fn default_vrf(lookup: LookupCheck) -> Vec<VrfCheck> {
    in_vrf("default", lookup)
}

#[test]
fn an_input_lookup_arrives_by_iif_from_src_and_is_never_pinned_to_the_vrf() {
    let mut kernel = node();
    let report = run(&mut kernel, &in_vrf("vrf_tdemo", return_by("nic5")));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    let query = kernel.queries[0];
    assert_eq!(
        (query.source, query.iif, query.oif),
        (Some(ip("203.0.113.8")), Some(NIC5), None),
        "the kernel ignores RTA_OIF with RTA_IIF: the VRF is the arrival device's"
    );
    let check = &report.checks[1];
    assert_eq!(
        check.msg,
        "vrf_tdemo: 192.0.2.11 from 203.0.113.8 arriving by nic5 (in the default VRF) resolves \
         via dev tdemo (table main)"
    );
    assert_eq!(check.actual["src"], json!("203.0.113.8"));
    assert_eq!(check.actual["iif"], json!("nic5"));
    assert_eq!(
        check.expected,
        json!({"table": 254}),
        "nic5 is in the default VRF"
    );
}

#[test]
fn an_input_lookup_by_a_port_of_the_vrf_must_be_answered_by_the_vrf_table() {
    let mut kernel = node();
    let report = run(&mut kernel, &in_vrf("vrf_tdemo", return_by("tdemo")));
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: 192.0.2.11 from 203.0.113.8 arriving by tdemo resolves via dev tdemo \
             (table main: fall-through), expected an answer from table 1001 (vrf_tdemo's own, \
             where tdemo is)"
        ]
    );
    kernel
        .arriving
        .insert(ip("192.0.2.11"), answer(254, Some("10.20.99.1"), VMBR0));
    let report = run(&mut kernel, &default_vrf(return_by("nic5")));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    let mut local = Route::new(Family::V4, 255, RouteKind::Local);
    local.oif = Some(LO);
    kernel
        .arriving
        .insert(ip("192.0.2.11"), Lookup::Route(local));
    let report = run(&mut kernel, &default_vrf(return_by("nic5")));
    assert!(
        report.failures().is_empty(),
        "the default VRF's local table is its own: {:#?}",
        report.checks
    );
}

#[test]
fn forwarding_off_on_the_arrival_device_is_not_forwarded_with_the_fix() {
    let mut kernel = node();
    kernel
        .arriving
        .insert(ip("192.0.2.11"), Lookup::Refused(Refusal::Unreachable));
    kernel.forwarding.insert("nic5".into(), "0".into());
    let expect_forwarded = LookupCheck {
        reachable: Some(true),
        ..return_by("nic5")
    };
    let report = run(&mut kernel, &default_vrf(expect_forwarded.clone()));
    assert_eq!(
        report.failures(),
        vec![
            "default: 192.0.2.11 from 203.0.113.8 arriving by nic5 is not forwarded: nic5 has \
             IPv4 forwarding off (net.ipv4.conf.nic5.forwarding = 0), expected reachable; set \
             net.ipv4.conf.nic5.forwarding=1 (deevnet.net.sysctl_forwarding interfaces: [nic5])"
        ]
    );
    assert_eq!(
        report.checks[1].actual,
        json!({"type": "refused", "reason": "not_forwarded", "src": "203.0.113.8",
               "iif": "nic5", "sysctls": {"net.ipv4.conf.nic5.forwarding": "0"}})
    );
    kernel.forwarding.insert("nic5".into(), "1".into());
    let report = run(&mut kernel, &default_vrf(expect_forwarded));
    assert_eq!(report.checks[1].actual["reason"], json!("unreachable"));
}

#[test]
fn an_einval_is_the_reverse_path_filter_only_when_the_sysctls_say_so() {
    let mut kernel = node();
    kernel
        .arriving
        .insert(ip("192.0.2.11"), Lookup::Refused(Refusal::Blackhole));
    kernel
        .lookups
        .insert(ip("192.0.2.11"), answer(254, None, TENANT_BRIDGE));
    kernel
        .lookups
        .insert(ip("203.0.113.8"), answer(254, Some("10.20.99.1"), VMBR0));
    kernel.rp_filter.insert("nic5".into(), "1".into());
    let lookup = LookupCheck {
        dev: Some("tdemo".into()),
        ..return_by("nic5")
    };
    let report = run(&mut kernel, &default_vrf(lookup.clone()));
    assert_eq!(
        report.failures(),
        vec![
            "default: 192.0.2.11 from 203.0.113.8 arriving by nic5 is dropped by nic5's \
             reverse-path filter: effective rp_filter 1 (the larger of \
             net.ipv4.conf.all.rp_filter = 0, net.ipv4.conf.nic5.rp_filter = 1), and the node \
             routes 203.0.113.8 back via 10.20.99.1 dev vmbr0 (table main), expected dev tdemo; \
             set rp_filter 0 on nic5 and all (deevnet.net.sysctl_forwarding rp_filter: {all: 0, \
             nic5: 0}), or route 203.0.113.8 back by nic5"
        ]
    );
    assert_eq!(
        report.checks[1].actual["route_back"],
        json!({"type": "unicast", "via": "10.20.99.1", "dev": "vmbr0", "table": 254})
    );
    // rp_filter off: the kernel refused a martian.
    kernel.rp_filter.insert("nic5".into(), "0".into());
    let report = run(&mut kernel, &default_vrf(lookup.clone()));
    assert_eq!(report.checks[1].actual["reason"], json!("martian"));
    // The destination's own route is a blackhole: that is the EINVAL, whatever rp_filter says.
    kernel.rp_filter.insert("nic5".into(), "1".into());
    kernel
        .lookups
        .insert(ip("192.0.2.11"), Lookup::Refused(Refusal::Blackhole));
    let report = run(&mut kernel, &default_vrf(lookup.clone()));
    assert_eq!(report.checks[1].actual["reason"], json!("blackhole"));
    // EXDEV (kernels before 6.13) is the filter alone.
    kernel
        .arriving
        .insert(ip("192.0.2.11"), Lookup::Refused(Refusal::ReversePath));
    let report = run(&mut kernel, &default_vrf(lookup));
    assert_eq!(report.checks[1].actual["reason"], json!("reverse_path"));
}

#[test]
fn ipv6_input_lookups_are_forwarded_only_with_all_forwarding_or_force_forwarding() {
    let mut kernel = node();
    let mut route = Route::new(Family::V6, 254, RouteKind::Unicast);
    route.oif = Some(TENANT_BRIDGE);
    kernel
        .arriving
        .insert(ip("2001:db8:77::11"), Lookup::Route(route));
    kernel.forwarding_v6.insert("all".into(), "0".into());
    kernel.force_forwarding.insert("nic5".into(), "0".into());
    let lookup = LookupCheck {
        src: Some(ip("2001:db8:113::8")),
        iif: Some("nic5".into()),
        reachable: Some(true),
        ..lookup("2001:db8:77::11")
    };
    let report = run(&mut kernel, &default_vrf(lookup.clone()));
    assert_eq!(
        report.failures(),
        vec![
            "default: 2001:db8:77::11 from 2001:db8:113::8 arriving by nic5 is not forwarded: \
             IPv6 forwarding is off for packets arriving by nic5 \
             (net.ipv6.conf.all.forwarding = 0, net.ipv6.conf.nic5.force_forwarding = 0), \
             expected reachable; set net.ipv6.conf.all.forwarding=1 (or, on kernels 6.17 and \
             later, net.ipv6.conf.nic5.force_forwarding=1)"
        ]
    );
    kernel.force_forwarding.insert("nic5".into(), "1".into());
    let report = run(&mut kernel, &default_vrf(lookup));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
}

#[test]
fn an_iif_the_node_does_not_have_fails_naming_it() {
    let mut kernel = node();
    let report = run(&mut kernel, &default_vrf(return_by("nic9")));
    assert_eq!(
        report.failures(),
        vec![
            "default: 192.0.2.11 from 203.0.113.8 arriving by nic9: the node has no interface \
             named nic9; give the interface the packet arrives by as ip link names it (such as \
             the uplink nic5, or the VRF's L3VNI bridge vrfbr_<zone>), or apply the network \
             that creates it"
        ]
    );
    assert!(kernel.queries.is_empty(), "nothing to ask the kernel");
}

#[test]
fn table_any_reports_fall_through_without_failing() {
    let mut kernel = RecordedKernel::faulty();
    let lookup = LookupCheck {
        table: Some(ExpectedTable::Any),
        ..lookup("8.8.8.8")
    };
    let report = run(&mut kernel, &in_vrf("vrf_tdemo", lookup));
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    let check = &report.checks[1];
    assert_eq!(check.actual["fall_through"], json!(true));
    assert_eq!(check.expected, json!({"table": "any"}));
    assert_eq!(
        check.msg,
        "vrf_tdemo: 8.8.8.8 resolves via 10.20.99.1 dev vmbr0 (table main: fall-through)"
    );
}
