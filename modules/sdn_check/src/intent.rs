//! What Proxmox's SDN declares for one node, in the shape the result returns (RETURN: `zones`,
//! `tenants`). Derived from the running configuration by the generator's rules
//! (docs/proxmox-sdn.md); compared with the kernel by the drift checks.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::Serialize;

/// The node's intent: the zones that apply to it, and the tenants the role takes from them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeIntent {
    pub node: String,
    pub zones: Vec<ZoneIntent>,
    pub tenants: Vec<Tenant>,
}

/// A zone's type, as `zones.cfg` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneType {
    Simple,
    Vlan,
    Qinq,
    Vxlan,
    Evpn,
}

/// One zone that applies to the node (a zone's `nodes` restricts it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZoneIntent {
    pub name: String,
    #[serde(rename = "type")]
    pub zone_type: ZoneType,
    /// EVPN: `vrf_<zone>`. Other types have no VRF.
    pub vrf: Option<String>,
    /// EVPN: the L3VNI (`vrf-vxlan`).
    pub l3vni: Option<u32>,
    /// EVPN: the L3VNI's VXLAN device, `vrfvx_<zone>`.
    pub l3vni_vxlan: Option<String>,
    /// EVPN: the L3VNI bridge, `vrfbr_<zone>`.
    pub l3vni_bridge: Option<String>,
    /// EVPN: the zone's `exitnodes` list this node.
    pub exit_node: bool,
    /// EVPN: the zone's `exitnodes-primary`, if any.
    pub primary_exit_node: Option<String>,
    /// EVPN: `exitnodes-local-routing` (the xvrf_/xvrfp_ veth pair on exit nodes).
    pub local_routing: bool,
    /// VXLAN and EVPN: this node's VTEP address (among the controller's peers, or its fabric
    /// address), when one is found.
    pub vtep: Option<IpAddr>,
    /// VXLAN and EVPN: `vxlan-port`, when the zone sets one (the kernel's default is 4789).
    pub vxlan_port: Option<u16>,
    /// The MTU of the zone's devices, by Proxmox's rule when the zone gives none.
    pub mtu: Option<u32>,
    /// Whether Proxmox's generator makes the zone's devices on the node: it makes them per
    /// VNet, so a zone without a VNet has none (no VRF, no L3VNI) (docs/proxmox-sdn.md §3).
    pub generated: bool,
    pub vnets: Vec<VnetIntent>,
}

/// One VNet of a zone: its bridge on the node and its subnets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VnetIntent {
    /// The VNet's ID, also its bridge's name.
    pub name: String,
    /// VXLAN and EVPN: the VNI (the VNet's `tag`).
    pub vni: Option<u32>,
    /// VLAN and QinQ: the VLAN tag.
    pub vlan: Option<u16>,
    pub vlan_aware: bool,
    /// VXLAN and EVPN: the VNet's VXLAN device, `vxlan_<vnet>`.
    pub vxlan_device: Option<String>,
    pub mtu: Option<u32>,
    pub subnets: Vec<SubnetIntent>,
}

/// One subnet of a VNet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubnetIntent {
    pub cidr: IpNet,
    /// The gateway address the VNet bridge carries on the node (EVPN: on every node).
    pub gateway: Option<IpAddr>,
    pub snat: bool,
}

/// A tenant in the role's shape: one per EVPN zone that applies to the node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tenant {
    /// The zone's name.
    pub name: String,
    pub vrf: String,
    pub l3vni_bridge: String,
    pub exit_node: bool,
}
