//! The uplink stack the request names, found in the node's links or refused as bad input
//! ([`Stack::resolve`]), and the hops of the zone's path.

use crate::guest_ports::{guest_ports_of, GuestBridge, GuestName};
use crate::params::Request;
use crate::TAG_LEN;
use deevnet_runtime::choices;
use deevnet_runtime::netlink::ethtool::{TX_VLAN_HW_INSERT, TX_VLAN_STAG_HW_INSERT};
use deevnet_runtime::netlink::{BondRole, Link, Links, VlanProtocol};

/// The links the request names, found in the node's links. Everything here must hold before
/// the module looks further or changes anything.
#[derive(Debug, Clone)]
pub struct Stack {
    /// The device the uplink VLAN device sits on: a bond, or a single NIC.
    pub parent: Link,
    pub parent_kind: ParentKind,
    pub uplink: Link,
    pub bridge: Link,
    /// The NICs under the uplink, with their role: the bond's ports, or the single NIC itself
    /// (no role).
    pub slaves: Vec<(Link, Option<BondRole>)>,
    pub trunks: Vec<Link>,
    pub bond_mode: Option<String>,
    /// The bridge the parent is a port of (`vmbr0` over `bond0`), with its guest ports.
    pub guest_bridge: Option<GuestBridge>,
    /// The guest ports of the zone bridge (`tap100i0` in `vmbr1`), held to the zone's MTU.
    pub zone_guest_ports: Vec<(Link, GuestName)>,
}

impl Stack {
    /// Finds the parent (a bond, or a single NIC), its VLAN device with id `uplink_vlan`, the bridge and the trunk ports;
    /// refuses a request that names something else, and a `zone_mtu` no hop could ever carry.
    pub fn resolve(request: &Request, links: &Links) -> Result<Stack, String> {
        let parent = existing(links, "bond", &request.bond)?;
        let bond_info = parent.bond.as_ref();
        let parent_kind = match parent.kind.as_deref() {
            Some("bond") => ParentKind::Bond,
            // A physical NIC has no link kind; a veth stands for one in the lab and the tests.
            None | Some("veth") => ParentKind::Nic,
            Some(_) => {
                return Err(format!(
                    "bond: {} is {}, neither a bond nor a NIC; give the bond (bond0) or the single NIC (eno1) that carries the uplink VLAN device",
                    parent.name,
                    kind_phrase(parent)
                ))
            }
        };
        let uplink = find_uplink(request, links, parent)?;
        let bridge = existing(links, "bridge", &request.bridge)?;
        if bridge.kind.as_deref() != Some("bridge") {
            return Err(format!(
                "bridge: {} is {}, not a bridge; give the VLAN-aware bridge the uplink is a port of, e.g. vmbr1",
                bridge.name,
                kind_phrase(bridge)
            ));
        }
        let mut trunks = Vec::new();
        for name in &request.trunk_interfaces {
            trunks.push(existing(links, "trunk_interfaces", name)?.clone());
        }
        let slaves: Vec<(Link, Option<BondRole>)> = match parent_kind {
            ParentKind::Nic => vec![(parent.clone(), None)],
            ParentKind::Bond => links
                .ports_of(parent.index)
                .map(|slave| {
                    let mut role = slave.bond_port.as_ref().and_then(|p| p.role);
                    if role.is_none() {
                        role = bond_info.and_then(|b| b.active_port).map(|active| {
                            if active == slave.index {
                                BondRole::Active
                            } else {
                                BondRole::Backup
                            }
                        });
                    }
                    (slave.clone(), role)
                })
                .collect(),
        };
        let stack = Stack {
            parent: parent.clone(),
            parent_kind,
            uplink: uplink.clone(),
            bridge: bridge.clone(),
            slaves,
            trunks,
            bond_mode: bond_info.and_then(|b| b.mode.clone()),
            guest_bridge: GuestBridge::find(request.uplink_vlan, parent, links),
            zone_guest_ports: guest_ports_of(bridge, links),
        };
        if let Some(zone_mtu) = request.zone_mtu {
            for hop in stack.hops(zone_mtu) {
                let max = hop.link.max_mtu;
                // Some drivers report 0: no limit known.
                if let Some(max) = max.filter(|&max| max > 0 && hop.required > max) {
                    return Err(format!(
                        "zone_mtu: {zone_mtu} cannot be carried: {} ({}) accepts an MTU of at most {max}, and it needs {} ({}); lower zone_mtu to {} or less",
                        hop.link.name,
                        hop.role,
                        hop.required,
                        hop.role.why(),
                        zone_mtu.saturating_sub(hop.required - max)
                    ));
                }
            }
        }
        Ok(stack)
    }

    /// Every hop the zone's frames cross, with the MTU it needs for a zone MTU of `zone_mtu`.
    pub fn hops(&self, zone_mtu: u32) -> Vec<Hop<'_>> {
        let outer = zone_mtu + TAG_LEN;
        let mut hops = vec![Hop::new(&self.uplink, HopRole::UplinkVlanDevice, outer)];
        match self.parent_kind {
            ParentKind::Nic => hops.push(Hop::new(&self.parent, HopRole::UplinkNic, outer)),
            ParentKind::Bond => {
                hops.push(Hop::new(&self.parent, HopRole::Bond, outer));
                for (slave, _) in &self.slaves {
                    hops.push(Hop::new(slave, HopRole::BondSlave, outer));
                }
            }
        }
        hops.push(Hop::new(&self.bridge, HopRole::ZoneBridge, zone_mtu));
        for trunk in &self.trunks {
            hops.push(Hop::new(trunk, HopRole::Trunk, zone_mtu));
        }
        hops
    }

    /// The parent as the fix texts name it: the bond with its slaves, or the NIC.
    pub fn parent_phrase(&self) -> String {
        match self.parent_kind {
            ParentKind::Bond => format!("{} with its slaves", self.parent.name),
            ParentKind::Nic => self.parent.name.clone(),
        }
    }

    /// The outer tag's protocol (802.1Q or 802.1ad), as the uplink VLAN device reports it.
    pub fn uplink_protocol(&self) -> Option<VlanProtocol> {
        self.uplink.vlan.and_then(|v| v.protocol)
    }

    /// The offload that would overwrite the inner tag: 802.1Q insertion for an 802.1Q outer
    /// VLAN, 802.1ad (S-tag) insertion for an 802.1ad one.
    pub fn txvlan_feature(&self) -> &'static str {
        match self.uplink_protocol() {
            Some(VlanProtocol::Dot1Ad) => TX_VLAN_STAG_HW_INSERT,
            _ => TX_VLAN_HW_INSERT,
        }
    }
}

choices! {
    /// What a hop is in the zone's path (`mtu.hops[].role` in the result).
    pub enum HopRole {
        UplinkVlanDevice = "uplink VLAN device",
        Bond = "bond",
        BondSlave = "bond slave",
        UplinkNic = "uplink NIC",
        ZoneBridge = "zone bridge",
        Trunk = "trunk",
    }
}

impl HopRole {
    /// Why a hop of this role needs its MTU.
    pub fn why(self) -> &'static str {
        match self {
            HopRole::UplinkVlanDevice => "zone MTU + 4, the inner tag is payload",
            HopRole::Bond => "it carries the uplink VLAN device",
            HopRole::BondSlave => "it carries the bond",
            HopRole::UplinkNic => "it carries the uplink VLAN device",
            HopRole::ZoneBridge | HopRole::Trunk => "the zone MTU",
        }
    }
}

/// What the uplink VLAN device sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParentKind {
    /// A bond: its slaves, active and backup, are the NICs.
    Bond,
    /// A single NIC (`eno1.40` on `eno1`), a common small-cluster uplink.
    Nic,
}

/// One hop of the zone's path and the MTU it needs.
#[derive(Debug, Clone)]
pub struct Hop<'a> {
    pub link: &'a Link,
    pub role: HopRole,
    pub required: u32,
}

impl<'a> Hop<'a> {
    fn new(link: &'a Link, role: HopRole, required: u32) -> Self {
        Hop {
            link,
            role,
            required,
        }
    }
}

fn existing<'a>(links: &'a Links, parameter: &str, name: &str) -> Result<&'a Link, String> {
    links.by_name(name).ok_or_else(|| {
        format!("{parameter}: there is no interface {name} on this node; check the name with `ip link`, or create it first")
    })
}

fn kind_phrase(link: &Link) -> String {
    match link.kind.as_deref() {
        Some(kind) => format!("a {kind} device"),
        None => "a physical NIC (no link kind)".into(),
    }
}

fn find_uplink<'a>(request: &Request, links: &'a Links, parent: &Link) -> Result<&'a Link, String> {
    let vlan_devices: Vec<&Link> = links
        .iter()
        .filter(|l| l.kind.as_deref() == Some("vlan") && l.parent == Some(parent.index))
        .collect();
    if let Some(found) = vlan_devices
        .iter()
        .find(|l| l.vlan.map(|v| v.id) == Some(request.uplink_vlan))
    {
        return Ok(found);
    }
    let expected = format!("{}.{}", parent.name, request.uplink_vlan);
    let others: Vec<String> = vlan_devices
        .iter()
        .map(|l| format!("{} (id {})", l.name, l.vlan.map(|v| v.id).unwrap_or(0)))
        .collect();
    let found = if others.is_empty() {
        format!("{} has no VLAN device at all", parent.name)
    } else {
        format!("{}'s VLAN devices: {}", parent.name, others.join(", "))
    };
    let same_name = match links.by_name(&expected) {
        Some(link) => format!("; {expected} exists but is {}", describe_vlan(link, links)),
        None => String::new(),
    };
    Err(format!(
        "uplink_vlan: there is no VLAN device with id {} on {} ({found}{same_name}); create it (ip link add link {} name {expected} type vlan id {}) or fix uplink_vlan",
        request.uplink_vlan, parent.name, parent.name, request.uplink_vlan
    ))
}

fn describe_vlan(link: &Link, links: &Links) -> String {
    match (&link.vlan, link.parent) {
        (Some(vlan), Some(parent)) => format!("VLAN {} on {}", vlan.id, links.name_of(parent)),
        _ => kind_phrase(link),
    }
}
