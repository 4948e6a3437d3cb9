//! The checks on netlink answers recorded in the lab VM (Debian trixie, kernel 6.12): the lab
//! node's QinQ stack rebuilt in network namespaces of the recording's own, an nlmon device
//! capturing while the module ran. The runtime's own parsers read the kernel's bytes, and the
//! report comes out of them.
//!
//! Each folder under tests/recorded holds one state of the lab node, one message payload (after
//! the netlink header) per line, in hex: `links.hex` (RTM_NEWLINK), `bridge_vlans.hex`
//! (RTM_NEWLINK, AF_BRIDGE, compressed VLAN ranges), `fdb.hex` (RTM_NEWNEIGH, AF_BRIDGE) and
//! `features.hex` (`DEVICE HEX` of each ETHTOOL_MSG_FEATURES_GET_REPLY, after the genetlink
//! header).
//!   provisioned/: as provisioned, the peer tagging on VLAN 201, txvlan on on both veth slaves;
//!   faults/: the peer without its inner tag, vmbr1's MTU at 1495, txvlan off on qinq_a only.

use deevnet_runtime::netlink::ethtool::{features_from_reply, TX_VLAN_HW_INSERT};
use deevnet_runtime::netlink::netlink_packet_core::Parseable;
use deevnet_runtime::netlink::netlink_packet_route::link::LinkMessage;
use deevnet_runtime::netlink::netlink_packet_route::neighbour::NeighbourMessage;
use deevnet_runtime::netlink::{
    fdb_entry_from_message, link_from_message, port_vlans_from_message, BondRole, Links,
};
use qinq_check::{evaluate, Observed, Params, Request, SlaveState, Stack};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn lines(state: &str, file: &str) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/recorded")
        .join(state)
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// What the module reads, rebuilt from the recorded answers.
struct Recorded {
    links: Links,
    stack: Stack,
    observed: Observed,
}

fn request(peer_mac: &str) -> Request {
    Request::from_params(Params {
        bond: "bond0".into(),
        uplink_vlan: 40,
        bridge: "vmbr1".into(),
        vlans: vec!["199-299".into()],
        zone_mtu: Some(1496),
        trunk_interfaces: vec![],
        peers: vec![(peer_mac.into(), 201)],
        ..Params::default()
    })
    .unwrap()
}

fn load(state: &str, request: &Request) -> Recorded {
    let messages: Vec<LinkMessage> = lines(state, "links.hex")
        .iter()
        .map(|l| LinkMessage::parse(unhex(l).as_slice()).expect("an RTM_NEWLINK"))
        .collect();
    let links = Links::new(messages.iter().map(link_from_message).collect());
    let stack = Stack::resolve(request, &links).expect("the lab's stack");
    let port_vlans = lines(state, "bridge_vlans.hex")
        .iter()
        .map(|l| port_vlans_from_message(&LinkMessage::parse(unhex(l).as_slice()).unwrap()))
        .collect();
    let fdb = lines(state, "fdb.hex")
        .iter()
        .filter_map(|l| {
            fdb_entry_from_message(&NeighbourMessage::parse(unhex(l).as_slice()).unwrap())
        })
        .filter(|e| e.bridge == Some(stack.bridge.index))
        .collect();
    let mut slaves = BTreeMap::new();
    for line in lines(state, "features.hex") {
        let (device, hex) = line.split_once(' ').expect("DEVICE HEX");
        let features = features_from_reply(&unhex(hex)).expect("a features reply");
        slaves.insert(
            device.to_string(),
            SlaveState {
                // The driver comes from an ioctl, not netlink: nlmon does not see it.
                driver: Some("veth".into()),
                feature: features.get(TX_VLAN_HW_INSERT),
                changed: false,
            },
        );
    }
    Recorded {
        links,
        stack,
        observed: Observed {
            port_vlans,
            fdb,
            slaves,
            bridge_disable_ipv6: Some("1".into()),
            ..Observed::default()
        },
    }
}

fn peer_mac(state: &str) -> String {
    lines(state, "peer_mac")[0].trim().to_string()
}

#[test]
fn the_provisioned_lab_node_as_the_kernel_reported_it() {
    let mac = peer_mac("provisioned");
    let request = request(&mac);
    let recorded = load("provisioned", &request);
    let stack = &recorded.stack;
    assert_eq!(stack.uplink.name, "bond0.40");
    assert_eq!(stack.bond_mode.as_deref(), Some("active-backup"));
    let roles: Vec<(&str, Option<BondRole>)> = stack
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
    let uplink_port = recorded
        .observed
        .port_vlans
        .iter()
        .find(|p| p.index == stack.uplink.index)
        .unwrap();
    assert_eq!(uplink_port.pvid(), Some(1));
    assert!(uplink_port.find(199).is_some() && uplink_port.find(299).is_some());
    assert!(recorded.links.by_name("qvm0").is_some());

    let report = evaluate(&request, stack, &recorded.observed);
    assert_eq!(report.failed_names(), ["txvlan:qinq_a", "txvlan:qinq_b"]);
    assert!(report.fdb_vlan1.is_empty());
    assert!(report
        .checks
        .iter()
        .any(|c| c.name == format!("peer:{mac}") && c.ok));
    assert_eq!(report.mtu.uplink_allows, Some(1496));
}

#[test]
fn the_lab_node_with_faults_as_the_kernel_reported_it() {
    let mac = peer_mac("faults");
    let request = request(&mac);
    let recorded = load("faults", &request);
    let report = evaluate(&request, &recorded.stack, &recorded.observed);
    assert_eq!(
        report.failed_names(),
        [
            "txvlan:qinq_b".to_string(),
            "mtu:vmbr1".to_string(),
            "fdb_vlan1".to_string(),
            format!("peer:{mac}")
        ]
    );
    assert_eq!(report.fdb_vlan1.len(), 1);
    assert_eq!(report.fdb_vlan1[0].mac, mac);
    assert_eq!(report.fdb_vlan1[0].vlan, Some(1));
    assert_eq!(report.mtu.hops["vmbr1"].mtu, Some(1495));
}

/// The top-level keys of the RETURN block of `collection/plugins/modules/qinq_check.py`: its
/// lines that start with a key at column 0, between `RETURN = r'''` and the closing `'''`.
fn documented_return_keys() -> BTreeSet<String> {
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../collection/plugins/modules/qinq_check.py");
    let text = std::fs::read_to_string(&docs).expect("the module's documentation");
    let block = text
        .split_once("RETURN = r'''")
        .and_then(|(_, rest)| rest.split_once("'''"))
        .map(|(block, _)| block)
        .expect("a RETURN = r''' … ''' block");
    block
        .lines()
        .filter_map(|line| line.strip_suffix(':'))
        .filter(|key| {
            !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
        .collect()
}

/// Keys every module returns by Ansible's conventions, documented or not.
const STANDARD_KEYS: &[&str] = &["changed", "failed", "msg", "invocation", "warnings", "diff"];

/// The result's keys besides the standard ones are the serialized report's (`report_values` in
/// main.rs returns exactly the fields of [`qinq_check::Report`] as serialized): every one is
/// documented in RETURN, and every documented one comes back from some recorded state.
#[test]
fn the_result_keys_are_the_documented_return_keys() {
    let documented = documented_return_keys();
    assert!(documented.contains("checks"), "{documented:?}");
    let mut returned = BTreeSet::new();
    for state in ["provisioned", "faults"] {
        let request = request(&peer_mac(state));
        let recorded = load(state, &request);
        let report = evaluate(&request, &recorded.stack, &recorded.observed);
        let value = serde_json::to_value(&report).unwrap();
        for key in value.as_object().expect("the report is an object").keys() {
            assert!(
                documented.contains(key),
                "`{key}` is returned ({state}) but not documented in RETURN"
            );
            returned.insert(key.clone());
        }
    }
    for key in &documented {
        assert!(
            returned.contains(key) || STANDARD_KEYS.contains(&key.as_str()),
            "`{key}` is documented in RETURN but never returned"
        );
    }
}
