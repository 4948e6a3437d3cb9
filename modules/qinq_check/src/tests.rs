//! The checks on the lab node's state as the kernel reports it (bond0 active-backup over
//! qinq_a/qinq_b, bond0.40, vmbr1 VLAN-aware with 199-299, a guest port on VLAN 201), then
//! broken one fault at a time.

use super::*;
use crate::vlan_set::tests::entry;
use deevnet_runtime::netlink::ethtool::Feature;
use deevnet_runtime::netlink::{
    BondInfo, BondPortInfo, BondRole, BridgeVlanSettings, FdbEntry, FdbState, Link, LinkExtra,
    Links, OperState, PortVlans, Vlan, VlanProtocol,
};
use std::collections::BTreeMap;

const BOND: u32 = 5;
const QINQ_A: u32 = 6;
const QINQ_B: u32 = 7;
const UPLINK: u32 = 8;
const VMBR1: u32 = 9;
const QVM0: u32 = 10;
const TRUNK: u32 = 11;
const PEER_MAC: &str = "02:00:00:00:02:01";

fn link(index: u32, name: &str, kind: Option<&str>, mtu: u32) -> Link {
    Link {
        index,
        name: name.into(),
        kind: kind.map(str::to_string),
        mtu: Some(mtu),
        admin_up: true,
        oper_state: OperState::Up,
        ..Link::default()
    }
}

/// The lab node, healthy, every MTU 1500.
struct Node {
    links: Vec<Link>,
    extras: BTreeMap<u32, LinkExtra>,
    observed: Observed,
}

impl Node {
    fn healthy() -> Node {
        let mut links = vec![
            link(1, "lo", None, 65536),
            link(BOND, "bond0", Some("bond"), 1500),
        ];
        for (index, name) in [(QINQ_A, "qinq_a"), (QINQ_B, "qinq_b")] {
            let mut slave = link(index, name, Some("veth"), 1500);
            slave.controller = Some(BOND);
            slave.port_kind = Some("bond".into());
            links.push(slave);
        }
        let mut uplink = link(UPLINK, "bond0.40", Some("vlan"), 1500);
        uplink.parent = Some(BOND);
        uplink.controller = Some(VMBR1);
        uplink.vlan = Some(Vlan {
            id: 40,
            protocol: Some(VlanProtocol::Dot1Q),
        });
        links.push(uplink);
        let mut bridge = link(VMBR1, "vmbr1", Some("bridge"), 1500);
        bridge.bridge = Some(BridgeVlanSettings {
            vlan_filtering: Some(true),
            vlan_protocol: Some(VlanProtocol::Dot1Q),
            default_pvid: Some(1),
        });
        links.push(bridge);
        let mut guest = link(QVM0, "qvm0", Some("veth"), 1500);
        guest.controller = Some(VMBR1);
        links.push(guest);
        let mut trunk = link(TRUNK, "eno2", None, 1500);
        trunk.controller = Some(VMBR1);
        links.push(trunk);

        let mut extras = BTreeMap::new();
        for l in &links {
            extras.insert(
                l.index,
                LinkExtra {
                    index: l.index,
                    min_mtu: Some(68),
                    max_mtu: Some(if l.index == TRUNK { 9216 } else { 65535 }),
                    ..LinkExtra::default()
                },
            );
        }
        extras.get_mut(&BOND).unwrap().bond = Some(BondInfo {
            mode: Some("active-backup".into()),
            active_port: Some(QINQ_A),
            primary: Some(QINQ_A),
        });
        for (index, role) in [(QINQ_A, BondRole::Active), (QINQ_B, BondRole::Backup)] {
            extras.get_mut(&index).unwrap().bond_port = Some(BondPortInfo {
                role: Some(role),
                link_up: Some(true),
                permanent_mac: None,
            });
        }

        let zone_port = |index, name: &str| PortVlans {
            index,
            name: name.into(),
            controller: Some(VMBR1),
            vlans: vec![entry(1, 1, true, true), entry(199, 299, false, false)],
        };
        let slave_state = |driver: &str| SlaveState {
            driver: Some(driver.into()),
            feature: Feature {
                active: false,
                changeable: true,
            },
            changed: false,
        };
        let observed = Observed {
            port_vlans: vec![
                zone_port(UPLINK, "bond0.40"),
                zone_port(TRUNK, "eno2"),
                PortVlans {
                    index: QVM0,
                    name: "qvm0".into(),
                    controller: Some(VMBR1),
                    vlans: vec![entry(201, 201, true, true)],
                },
            ],
            fdb: vec![
                fdb(UPLINK, PEER_MAC, Some(201), FdbState::Learned),
                // The uplink's own address, in every VLAN it carries.
                fdb(UPLINK, "aa:bb:cc:00:00:08", Some(1), FdbState::Local),
                fdb(UPLINK, "aa:bb:cc:00:00:08", None, FdbState::Local),
                fdb(QVM0, "02:00:00:00:00:10", Some(201), FdbState::Learned),
            ],
            slaves: BTreeMap::from([
                ("qinq_a".to_string(), slave_state("veth")),
                ("qinq_b".to_string(), slave_state("mlx4_en")),
            ]),
            bridge_disable_ipv6: Some("1".into()),
        };
        Node {
            links,
            extras,
            observed,
        }
    }

    fn link_mut(&mut self, name: &str) -> &mut Link {
        self.links.iter_mut().find(|l| l.name == name).unwrap()
    }

    fn resolve(&self, request: &Request) -> Result<Stack, String> {
        Stack::resolve(request, &Links::new(self.links.clone()), &self.extras)
    }

    fn report(&self, request: &Request) -> Report {
        let stack = self.resolve(request).expect("the stack resolves");
        evaluate(request, &stack, &self.observed)
    }
}

fn fdb(port: u32, mac: &str, vlan: Option<u16>, state: FdbState) -> FdbEntry {
    FdbEntry {
        port,
        mac: mac.into(),
        vlan,
        bridge: Some(VMBR1),
        state,
    }
}

fn raw() -> RawRequest {
    RawRequest {
        bond: "bond0".into(),
        uplink_vlan: 40,
        bridge: "vmbr1".into(),
        vlans: vec!["199-299".into()],
        zone_mtu: Some(1496),
        trunk_interfaces: vec!["eno2".into()],
        peers: vec![(PEER_MAC.to_uppercase(), 201)],
    }
}

fn request() -> Request {
    Request::validate(&raw()).unwrap()
}

fn check<'a>(report: &'a Report, name: &str) -> &'a Check {
    report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}"))
}

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
        lost.line()
            .contains("switch txvlan off on every slave of the far host"),
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
        "txvlan:qinq_b: expected tx-vlan-hw-insert off, found qinq_b (backup, driver mlx4_en): on; run with fix_txvlan=true, or ethtool -K qinq_b txvlan off (persist it, e.g. in a post-up line)"
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
        "mtu:vmbr1: expected MTU of vmbr1 (zone bridge) at least 1496 (the zone MTU), found 1495; ip link set vmbr1 mtu 1496 (and mtu in /etc/network/interfaces)"
    );
    assert_eq!(
        report.mtu.hops["vmbr1"],
        HopReport {
            role: "zone bridge",
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
    let report = node.report(&Request::validate(&raw).unwrap());
    let zone = check(&report, "zone_mtu");
    assert!(!zone.ok);
    assert_eq!(zone.actual, "MTU 1500, which allows 1496");
    assert!(zone.fix.contains(
        "raise the MTU of bond0.40 (and bond0 with its slaves) to 1504, or lower zone_mtu to 1496"
    ));
    // Without zone_mtu the hops are held to what the uplink allows.
    raw.zone_mtu = None;
    let report = node.report(&Request::validate(&raw).unwrap());
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
        node.extras.get_mut(&index).unwrap().bond_port = None;
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

// ---- bad input: refused before anything is read or changed ----

/// A change to the options, and the start of the message it must give.
type BadCase = (fn(&mut RawRequest), &'static str);

#[test]
fn bad_options_name_the_option_the_value_and_the_fix() {
    let cases: Vec<BadCase> = vec![
        (
            |r| r.uplink_vlan = 4095,
            "uplink_vlan: VLAN 4095 is outside 1-4094",
        ),
        (
            |r| r.uplink_vlan = 0,
            "uplink_vlan: VLAN 0 is outside 1-4094",
        ),
        (
            |r| r.vlans = vec!["199-5000".into()],
            "vlans: VLAN 5000 in '199-5000' is outside 1-4094",
        ),
        (
            |r| r.vlans = vec!["299-199".into()],
            "vlans: the range '299-199' is written backwards; write it lowest first, as 199-299",
        ),
        (
            |r| r.vlans = vec!["40".into()],
            "vlans: 40 is the outer VLAN (uplink_vlan=40) itself",
        ),
        (
            |r| r.bond = "bond0/../x".into(),
            "bond: 'bond0/../x' is not a valid interface name",
        ),
        (
            |r| r.bridge = "a_name_far_too_long".into(),
            "bridge: 'a_name_far_too_long' is not a valid interface name",
        ),
        (
            |r| r.trunk_interfaces = vec!["eth0:1".into()],
            "trunk_interfaces: 'eth0:1' is not a valid interface name",
        ),
        (
            |r| r.zone_mtu = Some(67),
            "zone_mtu: 67 is outside 68-65531",
        ),
        (
            |r| r.zone_mtu = Some(70000),
            "zone_mtu: 70000 is outside 68-65531",
        ),
        (
            |r| r.peers = vec![("02:00:00:00:02".into(), 201)],
            "peers[0].mac: '02:00:00:00:02' is not a MAC address",
        ),
        (
            |r| r.peers = vec![(PEER_MAC.into(), 5000)],
            "peers[0].vlan: VLAN 5000 is outside 1-4094",
        ),
    ];
    for (change, expected) in cases {
        let mut raw = raw();
        change(&mut raw);
        let error = Request::validate(&raw).unwrap_err();
        assert!(error.starts_with(expected), "{expected}\n  got: {error}");
    }
    assert_eq!(
        request().peers,
        [Peer {
            mac: PEER_MAC.into(),
            vlan: 201
        }]
    );
    let mut dashes = raw();
    dashes.peers = vec![("02-00-00-00-02-0A".into(), 201)];
    assert_eq!(
        Request::validate(&dashes).unwrap().peers[0].mac,
        "02:00:00:00:02:0a"
    );
}

#[test]
fn a_stack_that_is_not_there_is_refused() {
    let node = Node::healthy();
    let resolve = |change: fn(&mut RawRequest)| {
        let mut raw = raw();
        change(&mut raw);
        node.resolve(&Request::validate(&raw).unwrap()).unwrap_err()
    };
    assert_eq!(
        resolve(|r| r.bond = "qinq_a".into()),
        "bond: qinq_a is a veth device, not a bond; give the bond that carries the uplink (its slaves are the NICs), e.g. bond0"
    );
    assert!(resolve(|r| r.bond = "bond9".into())
        .starts_with("bond: there is no interface bond9 on this node"));
    assert_eq!(
        resolve(|r| r.uplink_vlan = 41),
        "uplink_vlan: there is no VLAN device with id 41 on bond0 (bond0's VLAN devices: bond0.40 (id 40)); create it (ip link add link bond0 name bond0.41 type vlan id 41) or fix uplink_vlan"
    );
    assert!(resolve(|r| r.bridge = "qvm0".into())
        .starts_with("bridge: qvm0 is a veth device, not a bridge"));
    assert!(resolve(|r| r.trunk_interfaces = vec!["eno9".into()])
        .starts_with("trunk_interfaces: there is no interface eno9"));
    // 9216 is the most the trunk NIC takes.
    assert_eq!(
        resolve(|r| r.zone_mtu = Some(9300)),
        "zone_mtu: 9300 cannot be carried: eno2 (trunk) accepts an MTU of at most 9216, and it needs 9300 (the zone MTU); lower zone_mtu to 9216 or less"
    );
}

#[test]
fn a_max_mtu_of_zero_is_no_limit() {
    let mut node = Node::healthy();
    for extra in node.extras.values_mut() {
        extra.max_mtu = Some(0);
    }
    let mut raw = raw();
    raw.zone_mtu = Some(9000);
    assert!(node.resolve(&Request::validate(&raw).unwrap()).is_ok());
}

#[test]
fn a_vlan_device_named_like_the_uplink_but_elsewhere_is_explained() {
    let mut node = Node::healthy();
    let uplink = node.link_mut("bond0.40");
    uplink.parent = Some(QINQ_A);
    let error = node.resolve(&request()).unwrap_err();
    assert!(
        error.contains(
            "(bond0 has no VLAN device at all; bond0.40 exists but is VLAN 40 on qinq_a)"
        ),
        "{error}"
    );
}
