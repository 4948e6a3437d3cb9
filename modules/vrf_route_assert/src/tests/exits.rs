//! `asymmetric_returns` on hv02's recorded answers: the effective rp_filter of each IPv4 exit
//! and of the VRF's L3VNI bridge, and a check with nothing to check named.

use super::*;

fn asymmetric() -> Vec<VrfCheck> {
    vec![VrfCheck {
        asymmetric_returns: true,
        ..mission_checks().remove(0)
    }]
}

#[test]
fn asymmetric_returns_need_an_effective_rp_filter_of_zero() {
    let mut kernel = RecordedKernel::fixed();
    let report = run(&mut kernel, &asymmetric());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: vmbr0.50 drops asymmetric returns: effective rp_filter 2 (the larger of \
             net.ipv4.conf.all.rp_filter = 2, net.ipv4.conf.vmbr0/50.rp_filter = 2), expected 0: \
             returns of tenant traffic that arrive by vmbr0.50 fail the reverse-path check \
             because the VRF's routes leave by interfaces outside it; set both to 0 \
             (deevnet.net.sysctl_forwarding rp_filter: {all: 0, vmbr0.50: 0})"
        ]
    );
    // The interface's 0 does not count while all is higher: the kernel takes the larger.
    kernel.rp_filter.insert("vmbr0.50".into(), "0".into());
    let report = run(&mut kernel, &asymmetric());
    let check = report
        .checks
        .iter()
        .find(|c| c.check == "rp_filter vmbr0.50")
        .unwrap();
    assert!(!check.ok);
    assert_eq!(
        check.actual,
        json!({"all": "2", "interface": "0", "effective": 2})
    );
    kernel.rp_filter.insert("all".into(), "0".into());
    let report = run(&mut kernel, &asymmetric());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks.last().unwrap().msg,
        "vrf_tdemo: vmbr0.50 accepts asymmetric returns (rp_filter 0: \
         net.ipv4.conf.all.rp_filter = 0, net.ipv4.conf.vmbr0/50.rp_filter = 0)"
    );
    // Without asymmetric_returns, rp_filter is not read.
    kernel.rp_filter.clear();
    assert!(run(&mut kernel, &mission_checks()).failures().is_empty());
}

#[test]
fn asymmetric_returns_with_no_ipv4_exit_to_check_warn_instead_of_passing_silently() {
    let mut kernel = RecordedKernel::fixed();
    let checks = vec![VrfCheck {
        asymmetric_returns: true,
        ..VrfCheck::new("vrf_tdemo")
    }];
    let report = run(&mut kernel, &checks);
    assert!(report.failures().is_empty());
    assert_eq!(
        report.warnings(),
        vec![
            "vrf_tdemo: asymmetric_returns checked no interface: no checked IPv4 route leaves \
             the node; check the IPv4 default (default_via or default_dev) or an IPv4 lookup"
        ]
    );
}

const L3VNI_BRIDGE: u32 = 12;

/// The VRF's L3VNI bridge, vrfbr_tdemo, a port of vrf_tdemo (its VXLAN port left out: the
/// check names the bridge, it does not look for one).
fn with_l3vni_bridge(controller: Option<u32>) -> RecordedKernel {
    let mut kernel = RecordedKernel::fixed();
    let mut bridge = link(L3VNI_BRIDGE, "vrfbr_tdemo", Some("bridge"));
    bridge.controller = controller;
    kernel.links.push(bridge);
    // The uplink already lets asymmetric returns in: only the bridge is in question.
    kernel.rp_filter.insert("vmbr0.50".into(), "0".into());
    kernel
}

fn asymmetric_with_l3vni_bridge() -> Vec<VrfCheck> {
    vec![VrfCheck {
        l3vni_bridge: Some("vrfbr_tdemo".into()),
        ..asymmetric().remove(0)
    }]
}

#[test]
fn asymmetric_returns_check_the_l3vni_bridge_where_cross_node_returns_enter() {
    // What the lab measured: all at 0 and the uplink at 0, the L3VNI bridge back at 2.
    let mut kernel = with_l3vni_bridge(Some(VRF_INDEX));
    kernel.rp_filter.insert("all".into(), "0".into());
    kernel.rp_filter.insert("vrfbr_tdemo".into(), "2".into());
    let report = run(&mut kernel, &asymmetric_with_l3vni_bridge());
    assert_eq!(
        report.failures(),
        vec![
            "vrf_tdemo: its L3VNI bridge vrfbr_tdemo drops returns from other nodes: effective \
             rp_filter 2 (the larger of net.ipv4.conf.all.rp_filter = 0, \
             net.ipv4.conf.vrfbr_tdemo.rp_filter = 2), expected 0: a return the core delivers \
             to another node enters vrf_tdemo by vrfbr_tdemo, which has no IPv4 address, so the \
             reverse-path check fails even in loose mode (the VRF's routes leave by the uplink); \
             set both to 0 (deevnet.net.sysctl_forwarding rp_filter: {all: 0, vrfbr_tdemo: 0})"
        ]
    );
    // The bridge's 0 does not count while all is higher: the kernel takes the larger.
    kernel.rp_filter.insert("vrfbr_tdemo".into(), "0".into());
    kernel.rp_filter.insert("all".into(), "1".into());
    let report = run(&mut kernel, &asymmetric_with_l3vni_bridge());
    let check = report
        .checks
        .iter()
        .find(|c| c.check == "rp_filter vrfbr_tdemo")
        .unwrap();
    assert!(!check.ok);
    assert_eq!(
        check.actual,
        json!({"all": "1", "interface": "0", "effective": 1})
    );
    // Fixed as the role fixes it: 0 on all and on the bridge.
    kernel.rp_filter.insert("all".into(), "0".into());
    let report = run(&mut kernel, &asymmetric_with_l3vni_bridge());
    assert!(report.failures().is_empty(), "{:#?}", report.checks);
    assert_eq!(
        report.checks.last().unwrap().msg,
        "vrf_tdemo: its L3VNI bridge vrfbr_tdemo accepts returns from other nodes (rp_filter 0: \
         net.ipv4.conf.all.rp_filter = 0, net.ipv4.conf.vrfbr_tdemo.rp_filter = 0)"
    );
    // Without asymmetric_returns' exits (no checked IPv4 route), the bridge is still checked.
    let checks = vec![VrfCheck {
        asymmetric_returns: true,
        l3vni_bridge: Some("vrfbr_tdemo".into()),
        ..VrfCheck::new("vrf_tdemo")
    }];
    kernel.rp_filter.insert("vrfbr_tdemo".into(), "2".into());
    let report = run(&mut kernel, &checks);
    assert_eq!(report.failures().len(), 1, "{:#?}", report.checks);
    assert!(report.failures()[0].starts_with("vrf_tdemo: its L3VNI bridge vrfbr_tdemo drops"));
}

#[test]
fn an_l3vni_bridge_that_is_not_the_vrf_s_port_is_named_not_read() {
    for (controller, found) in [
        (None, "vrfbr_tdemo is in no VRF"),
        (Some(VMBR0), "vrfbr_tdemo is a port of vmbr0"),
    ] {
        let mut kernel = with_l3vni_bridge(controller);
        kernel.rp_filter.insert("all".into(), "0".into());
        kernel.rp_filter.insert("vrfbr_tdemo".into(), "0".into());
        let report = run(&mut kernel, &asymmetric_with_l3vni_bridge());
        assert_eq!(
            report.failures(),
            vec![format!(
                "vrf_tdemo: l3vni_bridge vrfbr_tdemo is not the VRF's L3VNI bridge ({found}), so \
                 the returns other nodes deliver cannot be checked; name the bridge of the zone's \
                 L3VNI that is a port of vrf_tdemo (Proxmox's vrfbr_<zone>), or apply the zone \
                 on this node"
            )]
        );
    }
    let mut kernel = RecordedKernel::fixed();
    kernel.rp_filter.insert("all".into(), "0".into());
    kernel.rp_filter.insert("vmbr0.50".into(), "0".into());
    let report = run(&mut kernel, &asymmetric_with_l3vni_bridge());
    assert!(
        report.failures()[0].contains("(no interface named vrfbr_tdemo)"),
        "{:?}",
        report.failures()
    );
}
