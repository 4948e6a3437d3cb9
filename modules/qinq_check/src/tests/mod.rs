//! The lab node's state as the kernel reports it (bond0 active-backup over qinq_a/qinq_b,
//! bond0.40, vmbr1 VLAN-aware with 199-299, a guest port on VLAN 201), shared by the tests of
//! the checks (that state, then broken one fault at a time), of the request and of the stack.

mod checks;
mod guest_mtu;
mod guest_ports;
mod interfaces;
mod node;
mod params;
mod single_nic;
mod stack;
mod vlan_set;

use super::*;
use deevnet_runtime::netlink::ethtool::Feature;
use deevnet_runtime::netlink::{
    BondInfo, BondPortInfo, BondRole, BridgeVlanSettings, FdbEntry, FdbState, Link, Links,
    OperState, PortVlans, Vlan, VlanProtocol,
};
use deevnet_runtime::test_support::links;
use std::collections::BTreeMap;
use vlan_set::entry;

const BOND: u32 = 5;
const QINQ_A: u32 = 6;
const QINQ_B: u32 = 7;
const UPLINK: u32 = 8;
const VMBR1: u32 = 9;
const QVM0: u32 = 10;
const TRUNK: u32 = 11;
const ENO1: u32 = 12;
const PEER_MAC: &str = "02:00:00:00:02:01";

/// A link up, of `mtu`, in the range a NIC (the trunk: 9216) or a virtual link accepts.
fn link(index: u32, name: &str, kind: Option<&str>, mtu: u32) -> Link {
    Link {
        mtu: Some(mtu),
        min_mtu: Some(68),
        max_mtu: Some(if index == TRUNK { 9216 } else { 65535 }),
        admin_up: true,
        oper_state: OperState::Up,
        ..links::link(index, name, kind)
    }
}

/// The lab node, healthy, every MTU 1500.
struct Node {
    links: Vec<Link>,
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

        links.iter_mut().find(|l| l.index == BOND).unwrap().bond = Some(BondInfo {
            mode: Some("active-backup".into()),
            active_port: Some(QINQ_A),
            primary: Some(QINQ_A),
        });
        for (index, role) in [(QINQ_A, BondRole::Active), (QINQ_B, BondRole::Backup)] {
            links
                .iter_mut()
                .find(|l| l.index == index)
                .unwrap()
                .bond_port = Some(BondPortInfo {
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
            configured_slaves: vec!["qinq_a".into(), "qinq_b".into()],
            ruleset: Default::default(),
            guard_changed: false,
        };
        Node { links, observed }
    }

    /// The same node with a single-NIC uplink: `eno1.40` on the plain NIC `eno1` (no link kind,
    /// driver e1000e), no bond.
    fn single_nic() -> Node {
        let mut node = Node::healthy();
        node.links
            .retain(|l| ![BOND, QINQ_A, QINQ_B].contains(&l.index));
        node.links.push(link(ENO1, "eno1", None, 1500));
        let uplink = node.link_mut("bond0.40");
        uplink.name = "eno1.40".into();
        uplink.parent = Some(ENO1);
        node.observed.port_vlans[0].name = "eno1.40".into();
        node.observed.slaves = BTreeMap::from([(
            "eno1".to_string(),
            SlaveState {
                driver: Some("e1000e".into()),
                feature: Feature {
                    active: false,
                    changeable: true,
                },
                changed: false,
            },
        )]);
        node.observed.configured_slaves = Vec::new();
        node
    }

    fn link_mut(&mut self, name: &str) -> &mut Link {
        self.links.iter_mut().find(|l| l.name == name).unwrap()
    }

    fn resolve(&self, request: &Request) -> Result<Stack, String> {
        Stack::resolve(request, &Links::new(self.links.clone()))
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

fn raw() -> Params {
    Params {
        bond: "bond0".into(),
        uplink_vlan: 40,
        bridge: "vmbr1".into(),
        vlans: vec!["199-299".into()],
        zone_mtu: Some(1496),
        trunk_interfaces: vec!["eno2".into()],
        peers: vec![(PEER_MAC.to_uppercase(), 201)],
        ..Params::default()
    }
}

fn request() -> Request {
    Request::from_params(raw()).unwrap()
}

/// The request for [`Node::single_nic`]: the NIC where the bond was.
fn single_nic_request() -> Request {
    Request::from_params(Params {
        bond: "eno1".into(),
        ..raw()
    })
    .unwrap()
}

fn check<'a>(report: &'a Report, name: &str) -> &'a Check {
    report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}"))
}
