//! A single-NIC uplink (`eno1.40` on `eno1`, no bond): accepted, its NIC's offload and MTU
//! checked as a bond slave's would be.

use super::*;

#[test]
fn a_single_nic_uplink_passes_every_check_with_the_nic_as_its_only_nic() {
    let node = Node::single_nic();
    let request = single_nic_request();
    let stack = node.resolve(&request).expect("a single NIC is accepted");
    assert_eq!(stack.parent_kind, ParentKind::Nic);
    let report = evaluate(&request, &stack, &node.observed);
    assert_eq!(report.failed_names(), Vec::<&str>::new(), "{report:#?}");
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "uplink_device",
            "uplink_bridge_port",
            "vlan_filtering",
            "uplink_vlans",
            "txvlan:eno1",
            "zone_mtu",
            "mtu:eno1.40",
            "mtu:eno1",
            "mtu:vmbr1",
            "mtu:eno2",
            "trunk_bridge_port:eno2",
            "trunk_vlans:eno2",
            "fdb_vlan1",
            "peer:02:00:00:00:02:01",
            "bridge_ipv6",
        ]
    );
    assert_eq!(
        report.slaves,
        [SlaveReport {
            name: "eno1".into(),
            driver: Some("e1000e".into()),
            role: None,
            feature: "tx-vlan-hw-insert",
            enabled: false,
            fixed: false,
            changed: false,
        }]
    );
    // The NIC carries the uplink VLAN device: the zone MTU plus the inner tag.
    assert_eq!(
        report.mtu.hops["eno1"],
        HopReport {
            role: HopRole::UplinkNic,
            mtu: Some(1500),
            required: 1500
        }
    );
    assert!(check(&report, "uplink_device").expected.contains("on eno1"));
}

#[test]
fn txvlan_on_the_single_nic_is_caught_and_switched() {
    let mut node = Node::single_nic();
    node.observed.slaves.get_mut("eno1").unwrap().feature.active = true;
    let request = single_nic_request();
    let report = node.report(&request);
    assert_eq!(report.failed_names(), ["txvlan:eno1"]);
    assert!(
        check(&report, "txvlan:eno1")
            .actual
            .starts_with("eno1 (uplink NIC, driver e1000e): on"),
        "{:?}",
        check(&report, "txvlan:eno1")
    );
    let stack = node.resolve(&request).unwrap();
    assert_eq!(txvlan_to_switch_off(&stack, &node.observed), ["eno1"]);
}

#[test]
fn the_single_nic_needs_the_zone_mtu_plus_the_inner_tag() {
    let mut node = Node::single_nic();
    node.link_mut("eno1").mtu = Some(1499);
    let report = node.report(&single_nic_request());
    assert_eq!(report.failed_names(), ["mtu:eno1"]);
    assert_eq!(
        check(&report, "mtu:eno1").expected,
        "MTU of eno1 (uplink NIC) at least 1500 (it carries the uplink VLAN device)"
    );

    // The uplink VLAN device's MTU minus 4 is what the zone gets.
    let mut node = Node::single_nic();
    node.link_mut("eno1.40").mtu = Some(1499);
    let report = node.report(&single_nic_request());
    assert_eq!(report.mtu.uplink_allows, Some(1495));
    assert!(
        check(&report, "zone_mtu")
            .fix
            .starts_with("raise the MTU of eno1.40 (and eno1) to 1500"),
        "{}",
        check(&report, "zone_mtu").fix
    );
}

#[test]
fn a_parent_that_is_neither_a_bond_nor_a_nic_is_refused() {
    let node = Node::single_nic();
    let mut raw = raw();
    raw.bond = "vmbr1".into();
    assert_eq!(
        node.resolve(&Request::from_params(raw).unwrap())
            .unwrap_err(),
        "bond: vmbr1 is a bridge device, neither a bond nor a NIC; give the bond (bond0) or the single NIC (eno1) that carries the uplink VLAN device"
    );
}
