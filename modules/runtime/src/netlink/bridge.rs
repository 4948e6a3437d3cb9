//! A bridge's layer-2 tables as plain data: the VLANs of each port (`bridge vlan show`) and the
//! forwarding database with each entry's VLAN (`bridge fdb show`).

use super::link::mac_text;
use super::{Netlink, NetlinkError};
use netlink_packet_route::link::{
    AfSpecBridge, BridgeVlanInfoFlags, LinkAttribute, LinkExtentMask, LinkMessage,
};
use netlink_packet_route::neighbour::{
    NeighbourAttribute, NeighbourFlags, NeighbourMessage, NeighbourState,
};
use netlink_packet_route::AddressFamily;

/// The VLANs of one bridge port, or of the bridge itself (its "self" entries).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortVlans {
    pub index: u32,
    pub name: String,
    /// The bridge this is a port of (IFLA_MASTER); `None` for the bridge itself.
    pub controller: Option<u32>,
    /// As the kernel gave them: ranges (`199-299`) or single VLANs, in order.
    pub vlans: Vec<VlanEntry>,
}

impl PortVlans {
    /// The entry that holds `vid`, if the port carries it.
    pub fn find(&self, vid: u16) -> Option<&VlanEntry> {
        self.vlans.iter().find(|v| v.start <= vid && vid <= v.end)
    }

    /// The port's PVID: the VLAN its untagged frames are classified into.
    pub fn pvid(&self) -> Option<u16> {
        self.vlans.iter().find(|v| v.pvid).map(|v| v.start)
    }
}

/// One VLAN, or a range of VLANs with the same flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanEntry {
    pub start: u16,
    pub end: u16,
    /// Untagged frames arriving on the port are classified into this VLAN.
    pub pvid: bool,
    /// Frames of this VLAN leave the port without their tag.
    pub untagged: bool,
}

/// Takes a port's VLANs out of one AF_BRIDGE RTM_NEWLINK message (asked for with the
/// compressed VLAN filter, so ranges come as begin/end pairs).
pub fn port_vlans_from_message(message: &LinkMessage) -> PortVlans {
    let mut port = PortVlans {
        index: message.header.index,
        ..PortVlans::default()
    };
    let mut range_begin: Option<(u16, BridgeVlanInfoFlags)> = None;
    for attribute in &message.attributes {
        match attribute {
            LinkAttribute::IfName(name) => port.name = name.clone(),
            LinkAttribute::Controller(index) => port.controller = Some(*index),
            LinkAttribute::AfSpecBridge(items) => {
                for item in items {
                    let AfSpecBridge::VlanInfo(info) = item else {
                        continue;
                    };
                    let flags = info.flags;
                    if flags.contains(BridgeVlanInfoFlags::RangeBegin) {
                        range_begin = Some((info.vid, flags));
                        continue;
                    }
                    let (start, flags) = match range_begin.take() {
                        Some((start, begin_flags))
                            if flags.contains(BridgeVlanInfoFlags::RangeEnd)
                                && start <= info.vid =>
                        {
                            (start, begin_flags)
                        }
                        _ => (info.vid, flags),
                    };
                    port.vlans.push(VlanEntry {
                        start,
                        end: info.vid,
                        pvid: flags.contains(BridgeVlanInfoFlags::Pvid),
                        untagged: flags.contains(BridgeVlanInfoFlags::Untagged),
                    });
                }
            }
            _ => {}
        }
    }
    // The bridge device reports itself as its own controller on some kernels.
    if port.controller == Some(port.index) {
        port.controller = None;
    }
    port
}

/// What kind of forwarding entry it is, as `bridge fdb show` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdbState {
    /// The bridge's or a port's own address (`permanent`).
    Local,
    /// Added by hand (`static`).
    Static,
    /// Learned from traffic (reachable or stale).
    Learned,
}

/// One forwarding database entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FdbEntry {
    /// The port the MAC sits behind.
    pub port: u32,
    /// `aa:bb:cc:dd:ee:ff`.
    pub mac: String,
    /// The VLAN it was learned in; `None` on a bridge without VLAN filtering.
    pub vlan: Option<u16>,
    /// The bridge that holds the entry (NDA_MASTER); `None` for a device's own (NTF_SELF)
    /// entries such as a NIC's unicast and multicast filters.
    pub bridge: Option<u32>,
    pub state: FdbState,
}

/// Takes an entry out of one AF_BRIDGE RTM_NEWNEIGH message; `None` for one without a MAC.
pub fn fdb_entry_from_message(message: &NeighbourMessage) -> Option<FdbEntry> {
    let mut mac = None;
    let mut vlan = None;
    let mut bridge = None;
    for attribute in &message.attributes {
        match attribute {
            NeighbourAttribute::LinkLayerAddress(bytes) if bytes.len() == 6 => {
                mac = mac_text(bytes)
            }
            NeighbourAttribute::Vlan(vid) => vlan = Some(*vid),
            NeighbourAttribute::Controller(index) => bridge = Some(*index),
            _ => {}
        }
    }
    let header = &message.header;
    let own_entry = header.flags.contains(NeighbourFlags::Own)
        && !header.flags.contains(NeighbourFlags::Controller);
    if own_entry {
        bridge = None;
    }
    let state = match header.state {
        NeighbourState::Permanent => FdbState::Local,
        NeighbourState::Noarp => FdbState::Static,
        _ => FdbState::Learned,
    };
    Some(FdbEntry {
        port: header.ifindex,
        mac: mac?,
        vlan,
        bridge,
        state,
    })
}

/// The AF_BRIDGE link message naming VLAN `vid` on `port` (as `bridge vlan` sends it), with
/// the PVID and untagged flags when `pvid_untagged`.
pub fn port_vlan_message(port: u32, vid: u16, pvid_untagged: bool) -> LinkMessage {
    let flags = if pvid_untagged {
        BridgeVlanInfoFlags::Pvid | BridgeVlanInfoFlags::Untagged
    } else {
        BridgeVlanInfoFlags::empty()
    };
    rtnetlink::LinkBridgeVlan::new(port)
        .vlan(vid, flags)
        .build()
}

impl Netlink {
    /// The VLANs of every bridge port and bridge of the namespace (`bridge vlan show`). On a
    /// kernel without bridge VLAN filtering every port has an empty list.
    pub fn bridge_vlans(&self) -> Result<Vec<PortVlans>, NetlinkError> {
        let request = self
            .handle()
            .link()
            .get()
            .set_filter_mask(
                AddressFamily::Bridge,
                vec![LinkExtentMask::BrvlanCompressed],
            )
            .execute();
        let messages = self.collect("listing the VLANs of the bridge ports", request)?;
        Ok(messages.iter().map(port_vlans_from_message).collect())
    }

    /// Makes VLAN `vid` the port's untagged PVID (`bridge vlan add dev PORT vid VID pvid
    /// untagged`): what the port's untagged frames belong to, as a VM's `tag=VID` NIC.
    pub fn bridge_port_vlan_add_pvid(&self, port: u32, vid: u16) -> Result<(), NetlinkError> {
        self.bridge_port_vlan_add(port, vid, true, "as its pvid")
    }

    /// Adds VLAN `vid` to the port, tagged (`bridge vlan add dev PORT vid VID`), as a guest's
    /// trunk port carries it.
    pub fn bridge_port_vlan_add_tagged(&self, port: u32, vid: u16) -> Result<(), NetlinkError> {
        self.bridge_port_vlan_add(port, vid, false, "tagged")
    }

    fn bridge_port_vlan_add(
        &self,
        port: u32,
        vid: u16,
        pvid_untagged: bool,
        how: &str,
    ) -> Result<(), NetlinkError> {
        let message = port_vlan_message(port, vid, pvid_untagged);
        self.block_on(self.handle().link().set(message).execute())
            .map_err(|e| {
                NetlinkError::from_rtnetlink(format!("adding VLAN {vid} to port {port} {how}"), e)
            })
    }

    /// Removes VLAN `vid` from the port (`bridge vlan del dev PORT vid VID`).
    pub fn bridge_port_vlan_del(&self, port: u32, vid: u16) -> Result<(), NetlinkError> {
        let message = port_vlan_message(port, vid, false);
        self.block_on(self.handle().link().del_with_message(message).execute())
            .map_err(|e| {
                NetlinkError::from_rtnetlink(format!("removing VLAN {vid} from port {port}"), e)
            })
    }

    /// The forwarding database entries of one bridge (`bridge fdb show br BRIDGE`).
    pub fn fdb(&self, bridge: u32) -> Result<Vec<FdbEntry>, NetlinkError> {
        let request = self
            .handle()
            .neighbours()
            .get()
            .set_address_family(AddressFamily::Bridge)
            .execute();
        let messages = self.collect("listing the bridge forwarding database", request)?;
        Ok(messages
            .iter()
            .filter_map(fdb_entry_from_message)
            .filter(|entry| entry.bridge == Some(bridge))
            .collect())
    }
}
