//! The checks on the lab node's state, then broken one fault at a time.

use super::*;

#[test]
fn the_healthy_lab_node_passes_every_check() {
    let report = Node::healthy().report(&request());
    assert_eq!(report.failed_names(), Vec::<&str>::new(), "{report:#?}");
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "uplink_device",
            "uplink_bridge_port",
            "vlan_filtering",
            "uplink_vlans",
            "bond_slaves",
            "txvlan:qinq_a",
            "txvlan:qinq_b",
            "zone_mtu",
            "mtu:bond0.40",
            "mtu:bond0",
            "mtu:qinq_a",
            "mtu:qinq_b",
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
        report.slaves[1],
        SlaveReport {
            name: "qinq_b".into(),
            driver: Some("mlx4_en".into()),
            role: Some("backup"),
            feature: "tx-vlan-hw-insert",
            enabled: false,
            fixed: false,
            changed: false,
        }
    );
    assert_eq!(report.mtu.uplink_allows, Some(1496));
    assert_eq!(report.mtu.hops["bond0"].required, 1500);
    assert_eq!(report.mtu.hops["vmbr1"].required, 1496);
    assert!(report.fdb_vlan1.is_empty());
    assert_eq!(
        check(&report, "uplink_vlans").actual,
        "1 (PVID, untagged), 199-299"
    );
}

#[test]
fn the_inner_tag_lost_shows_the_mac_in_vlan_1() {
    let mut node = Node::healthy();
    node.observed.fdb[0].vlan = Some(1);
    let report = node.report(&request());
    assert_eq!(
        report.failed_names(),
        ["fdb_vlan1", "peer:02:00:00:00:02:01"]
    );
    assert_eq!(
        report.fdb_vlan1,
        [LostTag {
            mac: PEER_MAC.into(),
            vlan: Some(1)
        }]
    );
    let lost = check(&report, "fdb_vlan1");
    assert_eq!(lost.actual, "02:00:00:00:02:01 in VLAN 1");
    assert!(
        lost.line().contains(
            "switch the tag-insertion offload off on every NIC under the far host's uplink"
        ),
        "{}",
        lost.line()
    );
    let peer = check(&report, "peer:02:00:00:00:02:01");
    assert_eq!(peer.actual, "VLAN 1 on bond0.40");
    assert!(peer.fix.contains("without their inner tag"));
}

#[test]
fn a_lost_tag_lands_in_a_changed_pvid_too_but_zone_vlans_and_local_entries_do_not_count() {
    let mut node = Node::healthy();
    node.observed.port_vlans[0].vlans[0] = entry(99, 99, true, true);
    node.observed.fdb.push(fdb(
        UPLINK,
        "02:00:00:00:00:99",
        Some(99),
        FdbState::Learned,
    ));
    node.observed.fdb.push(fdb(
        UPLINK,
        "02:00:00:00:00:77",
        Some(250),
        FdbState::Learned,
    ));
    node.observed
        .fdb
        .push(fdb(UPLINK, "02:00:00:00:00:55", Some(1), FdbState::Static));
    // Learned elsewhere than the uplink: not the uplink's business.
    node.observed
        .fdb
        .push(fdb(QVM0, "02:00:00:00:00:44", Some(1), FdbState::Learned));
    let report = node.report(&request());
    assert_eq!(report.failed_names(), ["fdb_vlan1"]);
    assert_eq!(
        report.fdb_vlan1,
        [LostTag {
            mac: "02:00:00:00:00:99".into(),
            vlan: Some(99)
        }]
    );
    assert!(check(&report, "fdb_vlan1").expected.contains("VLAN 1/99"));
}

#[test]
fn txvlan_on_a_backup_slave_is_caught_with_driver_and_role() {
    let mut node = Node::healthy();
    node.observed
        .slaves
        .get_mut("qinq_b")
        .unwrap()
        .feature
        .active = true;
    let report = node.report(&request());
    assert_eq!(report.failed_names(), ["txvlan:qinq_b"]);
    let line = check(&report, "txvlan:qinq_b").line();
    assert_eq!(
        line,
        "txvlan:qinq_b: expected tx-vlan-hw-insert off, found qinq_b (backup, driver mlx4_en): on; switch it off and keep it off: the role proxmox_node_network with --tags qinq-uplink and fix_txvlan: true (it writes the udev rule /etc/udev/rules.d/70-deevnet-qinq-txvlan-off.rules); now only: this module with fix_txvlan=true, or ethtool -K qinq_b tx-vlan-hw-insert off"
    );
    let stack = node.resolve(&request()).unwrap();
    assert_eq!(txvlan_to_switch_off(&stack, &node.observed), ["qinq_b"]);

    // Fixed on: nothing to switch, and the message says the driver cannot.
    node.observed
        .slaves
        .get_mut("qinq_b")
        .unwrap()
        .feature
        .changeable = false;
    let report = node.report(&request());
    assert!(check(&report, "txvlan:qinq_b")
        .actual
        .ends_with("on [fixed]"));
    assert!(report.slaves[1].fixed && report.slaves[1].enabled);
    assert!(txvlan_to_switch_off(&stack, &node.observed).is_empty());
}

#[test]
fn an_8021ad_outer_tag_checks_the_stag_offload() {
    let mut node = Node::healthy();
    node.link_mut("bond0.40").vlan = Some(Vlan {
        id: 40,
        protocol: Some(VlanProtocol::Dot1Ad),
    });
    let report = node.report(&request());
    assert_eq!(
        check(&report, "txvlan:qinq_a").expected,
        "tx-vlan-stag-hw-insert off"
    );
    assert!(check(&report, "uplink_device")
        .actual
        .contains("802.1ad id 40"));
}

#[test]
fn an_mtu_one_byte_short_on_one_hop_fails_that_hop() {
    let mut node = Node::healthy();
    node.link_mut("vmbr1").mtu = Some(1495);
    let report = node.report(&request());
    assert_eq!(report.failed_names(), ["mtu:vmbr1"]);
    assert_eq!(
        check(&report, "mtu:vmbr1").line(),
        "mtu:vmbr1: expected MTU of vmbr1 (zone bridge) at least 1496 (the zone MTU), found 1495; ip link set vmbr1 mtu 1496 now, and mtu 1496 in vmbr1's stanza in /etc/network/interfaces"
    );
    assert_eq!(
        report.mtu.hops["vmbr1"],
        HopReport {
            role: HopRole::ZoneBridge,
            mtu: Some(1495),
            required: 1496
        }
    );

    let mut node = Node::healthy();
    node.link_mut("qinq_b").mtu = Some(1499);
    assert_eq!(node.report(&request()).failed_names(), ["mtu:qinq_b"]);
}

#[test]
fn a_zone_mtu_the_uplink_does_not_allow_names_both_fixes() {
    let node = Node::healthy();
    let mut raw = raw();
    raw.zone_mtu = Some(1500);
    let report = node.report(&Request::from_params(raw.clone()).unwrap());
    let zone = check(&report, "zone_mtu");
    assert!(!zone.ok);
    assert_eq!(zone.actual, "MTU 1500, which allows 1496");
    assert!(zone.fix.contains(
        "raise the MTU of bond0.40 (and bond0 with its slaves) to 1504, or lower zone_mtu to 1496"
    ));
    // Without zone_mtu the hops are held to what the uplink allows.
    raw.zone_mtu = None;
    let report = node.report(&Request::from_params(raw).unwrap());
    assert_eq!(report.failed_names(), Vec::<&str>::new());
    assert!(!report.checks.iter().any(|c| c.name == "zone_mtu"));
    assert_eq!(report.mtu.zone_mtu, None);
}

#[test]
fn vlan_filtering_off_is_reported() {
    let mut node = Node::healthy();
    node.link_mut("vmbr1").bridge = Some(BridgeVlanSettings {
        vlan_filtering: Some(false),
        ..BridgeVlanSettings::default()
    });
    // With filtering off the kernel lists no VLAN on any port.
    for port in &mut node.observed.port_vlans {
        port.vlans.clear();
    }
    let report = node.report(&request());
    assert_eq!(
        report.failed_names(),
        ["vlan_filtering", "uplink_vlans", "trunk_vlans:eno2"]
    );
    assert_eq!(
        check(&report, "vlan_filtering").actual,
        "vlan_filtering 0: the bridge ignores the inner tags"
    );
    // A kernel without bridge VLAN filtering reports nothing at all.
    node.link_mut("vmbr1").bridge = Some(BridgeVlanSettings::default());
    let report = node.report(&request());
    assert!(check(&report, "vlan_filtering")
        .actual
        .contains("has no VLAN filtering"));
}

#[test]
fn a_vlan_missing_or_untagged_on_the_uplink_is_named() {
    let mut node = Node::healthy();
    node.observed.port_vlans[0].vlans = vec![
        entry(1, 1, true, true),
        entry(199, 249, false, false),
        entry(251, 298, false, false),
        entry(299, 299, false, true),
    ];
    let report = node.report(&request());
    assert_eq!(report.failed_names(), ["uplink_vlans"]);
    let uplink = check(&report, "uplink_vlans");
    assert!(
        uplink.actual.ends_with("; missing 250; sent untagged 299"),
        "{}",
        uplink.actual
    );
    assert_eq!(
        uplink.fix,
        "bridge vlan add dev bond0.40 vid 250 (bridge-vids in /etc/network/interfaces); bridge vlan add dev bond0.40 vid 299 (tagged: without 'untagged')"
    );
}

#[test]
fn the_stack_shape_and_the_bridge_ipv6_are_checked() {
    let mut node = Node::healthy();
    node.link_mut("bond0.40").controller = None;
    node.link_mut("bond0.40").admin_up = false;
    node.link_mut("eno2").controller = Some(BOND + 100);
    node.observed.bridge_disable_ipv6 = Some("0".into());
    let report = node.report(&request());
    assert_eq!(
        report.failed_names(),
        [
            "uplink_device",
            "uplink_bridge_port",
            "trunk_bridge_port:eno2",
            "bridge_ipv6"
        ]
    );
    assert!(check(&report, "uplink_bridge_port")
        .fix
        .contains("ip link set bond0.40 master vmbr1"));
    assert!(check(&report, "bridge_ipv6")
        .fix
        .contains("net.ipv6.conf.vmbr1.disable_ipv6=1"));
    node.observed.bridge_disable_ipv6 = None;
    assert!(check(&node.report(&request()), "bridge_ipv6").ok);
}

#[test]
fn a_bond_without_slaves_fails_and_roles_come_from_the_active_port_otherwise() {
    let mut node = Node::healthy();
    for index in [QINQ_A, QINQ_B] {
        node.links
            .iter_mut()
            .find(|l| l.index == index)
            .unwrap()
            .bond_port = None;
    }
    let stack = node.resolve(&request()).unwrap();
    let roles: Vec<_> = stack
        .slaves
        .iter()
        .map(|(l, r)| (l.name.as_str(), *r))
        .collect();
    assert_eq!(
        roles,
        [
            ("qinq_a", Some(BondRole::Active)),
            ("qinq_b", Some(BondRole::Backup))
        ]
    );

    node.links.retain(|l| l.controller != Some(BOND));
    let report = node.report(&request());
    assert_eq!(report.failed_names(), ["bond_slaves"]);
}

#[test]
fn peers_not_learned_at_all_say_so() {
    let mut node = Node::healthy();
    node.observed.fdb.remove(0);
    let report = node.report(&request());
    assert_eq!(report.failed_names(), ["peer:02:00:00:00:02:01"]);
    assert!(check(&report, "peer:02:00:00:00:02:01")
        .actual
        .starts_with("not in the forwarding database"));
}

/// Every fix, with every check failing at once: the change is made now and persisted the way
/// the role and the Cozystack guide do it; only the interfaces concerned are brought up, never
/// the whole configuration reloaded, and no `post-up` line.
#[test]
fn fix_texts_bring_up_only_the_interfaces_concerned_and_persist_as_the_role_does() {
    let mut node = Node::healthy();
    node.link_mut("bond0.40").admin_up = false;
    node.link_mut("bond0.40").controller = None;
    node.link_mut("eno2").controller = None;
    node.link_mut("vmbr1").bridge = Some(BridgeVlanSettings {
        vlan_filtering: Some(false),
        ..BridgeVlanSettings::default()
    });
    node.link_mut("vmbr1").mtu = Some(1400);
    for port in &mut node.observed.port_vlans {
        port.vlans.clear();
    }
    node.observed.fdb[0].vlan = Some(1);
    for state in node.observed.slaves.values_mut() {
        state.feature.active = true;
    }
    node.observed.bridge_disable_ipv6 = Some("0".into());
    let mut raw = raw();
    raw.zone_mtu = Some(1500);
    let report = node.report(&Request::from_params(raw).unwrap());
    let failed = report.failures();
    assert!(failed.len() >= 12, "{:?}", report.failed_names());
    for check in &failed {
        assert!(!check.fix.is_empty(), "{} has no fix", check.name);
        for banned in ["ifreload", "post-up", "post_up"] {
            assert!(!check.fix.contains(banned), "{}: {}", check.name, check.fix);
        }
    }
    assert_eq!(
        check(&report, "uplink_device").fix,
        "bring up only these interfaces: ifup bond0 bond0.40"
    );
    assert!(check(&report, "txvlan:qinq_a")
        .fix
        .contains("--tags qinq-uplink and fix_txvlan: true (it writes the udev rule /etc/udev/rules.d/70-deevnet-qinq-txvlan-off.rules)"));
    assert!(check(&report, "vlan_filtering")
        .fix
        .contains("bridge-vlan-aware yes in vmbr1's stanza"));
    assert!(check(&report, "bridge_ipv6")
        .fix
        .contains("the role's qinq-uplink tag persists it"));
}
