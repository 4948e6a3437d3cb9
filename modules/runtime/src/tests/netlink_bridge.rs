use crate::netlink::bridge::*;
use netlink_packet_core::Parseable;
use netlink_packet_route::link::BridgeVlanInfo;
use netlink_packet_route::link::{AfSpecBridge, BridgeVlanInfoFlags, LinkAttribute, LinkMessage};
use netlink_packet_route::neighbour::{
    NeighbourAttribute, NeighbourFlags, NeighbourMessage, NeighbourState,
};
use netlink_packet_route::AddressFamily;

fn vlan_info(vid: u16, flags: BridgeVlanInfoFlags) -> AfSpecBridge {
    AfSpecBridge::VlanInfo(BridgeVlanInfo { flags, vid })
}

#[test]
fn compressed_ranges_become_one_entry() {
    let mut message = LinkMessage::default();
    message.header.index = 9;
    message.attributes = vec![
        LinkAttribute::IfName("bond0.40".into()),
        LinkAttribute::Controller(11),
        LinkAttribute::AfSpecBridge(vec![
            vlan_info(1, BridgeVlanInfoFlags::Pvid | BridgeVlanInfoFlags::Untagged),
            vlan_info(199, BridgeVlanInfoFlags::RangeBegin),
            vlan_info(299, BridgeVlanInfoFlags::RangeEnd),
            vlan_info(400, BridgeVlanInfoFlags::Untagged),
        ]),
    ];
    let port = port_vlans_from_message(&message);
    assert_eq!(port.name, "bond0.40");
    assert_eq!(port.controller, Some(11));
    assert_eq!(port.pvid(), Some(1));
    assert_eq!(
        port.vlans,
        vec![
            VlanEntry {
                start: 1,
                end: 1,
                pvid: true,
                untagged: true
            },
            VlanEntry {
                start: 199,
                end: 299,
                pvid: false,
                untagged: false
            },
            VlanEntry {
                start: 400,
                end: 400,
                pvid: false,
                untagged: true
            },
        ]
    );
    assert!(port.find(201).is_some());
    assert!(port.find(300).is_none());
}

/// RTM_NEWNEIGH (AF_BRIDGE) of a learned entry: 02:00:00:00:02:01 on ifindex 9, VLAN 201,
/// NTF_MASTER, bridge ifindex 11, state reachable.
const LEARNED_IN_201: [u8; 36] = [
    0x07, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x02, 0x00, 0x04, 0x00, // ndmsg
    0x0a, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00, // NDA_LLADDR
    0x06, 0x00, 0x05, 0x00, 0xc9, 0x00, 0x00, 0x00, // NDA_VLAN 201
    0x08, 0x00, 0x09, 0x00, // NDA_MASTER
];

#[test]
fn a_port_vlan_message_is_what_bridge_vlan_sends() {
    let message = port_vlan_message(42, 201, true);
    assert_eq!(message.header.index, 42);
    assert_eq!(message.header.interface_family, AddressFamily::Bridge);
    let port = port_vlans_from_message(&message);
    assert_eq!(port.pvid(), Some(201));
    assert!(port.find(201).is_some_and(|v| v.untagged));
    let plain = port_vlans_from_message(&port_vlan_message(42, 1, false));
    assert_eq!(plain.pvid(), None);
    assert!(plain.find(1).is_some_and(|v| !v.untagged));
}

#[test]
fn learned_entries_keep_their_vlan_and_bridge() {
    let mut bytes = LEARNED_IN_201.to_vec();
    bytes.extend_from_slice(&11u32.to_ne_bytes());
    let message = NeighbourMessage::parse(bytes.as_slice()).unwrap();
    let entry = fdb_entry_from_message(&message).unwrap();
    assert_eq!(
        entry,
        FdbEntry {
            port: 9,
            mac: "02:00:00:00:02:01".into(),
            vlan: Some(201),
            bridge: Some(11),
            state: FdbState::Learned,
        }
    );
}

#[test]
fn a_devices_own_entries_belong_to_no_bridge() {
    let mut message = NeighbourMessage::default();
    message.header.ifindex = 3;
    message.header.flags = NeighbourFlags::Own;
    message.header.state = NeighbourState::Permanent;
    message.attributes = vec![
        NeighbourAttribute::LinkLayerAddress(vec![0x33, 0x33, 0, 0, 0, 1]),
        NeighbourAttribute::Controller(11),
    ];
    let entry = fdb_entry_from_message(&message).unwrap();
    assert_eq!((entry.bridge, entry.state), (None, FdbState::Local));
    message
        .attributes
        .retain(|a| !matches!(a, NeighbourAttribute::LinkLayerAddress(_)));
    assert_eq!(fdb_entry_from_message(&message), None);
}
