//! The generator's rules (docs/proxmox-sdn.md §3–§8): from the running configuration and the
//! node's own interfaces, what Proxmox's SDN declares for one node: the zones that apply to
//! it, their names, roles, MTU and VTEP, their VNets and subnets, and the tenants in the role's
//! shape. What sdn_check does not know (a zone type, a key) is skipped and said so. Pure.

use crate::intent::{NodeIntent, SubnetIntent, Tenant, VnetIntent, ZoneIntent, ZoneType};
use crate::interfaces::{OwnInterface, OwnInterfaces};
use crate::running_config::{Object, ObjectKind, RunningConfig};
use ipnet::IpNet;
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;

/// The MTU of VXLAN-based zones when neither the zone nor the VTEP's interface gives one (§5).
pub const DEFAULT_VXLAN_MTU: u32 = 1450;
/// What VXLAN adds to a frame: the VTEP interface's MTU minus this is the zone's (§5).
pub const VXLAN_OVERHEAD: u32 = 50;

/// The keys each zone type takes (its plugin's `options`), besides `type`; any other key is
/// skipped and reported (§8).
const COMMON_ZONE_KEYS: [&str; 8] = [
    "nodes",
    "mtu",
    "dns",
    "reversedns",
    "dnszone",
    "ipam",
    "dhcp",
    "digest",
];
fn zone_keys(zone_type: ZoneType) -> &'static [&'static str] {
    match zone_type {
        ZoneType::Simple => &[],
        ZoneType::Vlan => &["bridge", "bridge-disable-mac-learning"],
        ZoneType::Qinq => &[
            "tag",
            "bridge",
            "bridge-disable-mac-learning",
            "vlan-protocol",
        ],
        ZoneType::Vxlan => &["peers", "vxlan-port", "fabric"],
        ZoneType::Evpn => &[
            "vrf-vxlan",
            "controller",
            "exitnodes",
            "exitnodes-local-routing",
            "exitnodes-primary",
            "advertise-subnets",
            "disable-arp-nd-suppression",
            "bridge-disable-mac-learning",
            "rt-import",
            "vxlan-port",
            "mac",
        ],
    }
}
const VNET_KEYS: [&str; 7] = [
    "type",
    "zone",
    "tag",
    "alias",
    "vlanaware",
    "isolate-ports",
    "digest",
];
const SUBNET_KEYS: [&str; 12] = [
    "type",
    "zone",
    "vnet",
    "gateway",
    "snat",
    "dhcp-range",
    "dhcp-dns-server",
    "dnszoneprefix",
    "cidr",
    "network",
    "mask",
    "digest",
];

/// The node's intent and what was skipped on the way (each also a warning).
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub intent: NodeIntent,
    pub skipped: Vec<String>,
}

fn zone_type(word: &str) -> Option<ZoneType> {
    Some(match word {
        "simple" => ZoneType::Simple,
        "vlan" => ZoneType::Vlan,
        "qinq" => ZoneType::Qinq,
        "vxlan" => ZoneType::Vxlan,
        "evpn" => ZoneType::Evpn,
        _ => return None,
    })
}

/// Every node name the SDN configuration mentions (§3): zones' `nodes`, `exitnodes` and
/// `exitnodes-primary`, fabric node sections (`<fabric>_<node>`), and the `node` of BGP and
/// IS-IS controllers.
pub fn named_nodes(config: &RunningConfig) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for zone in config.of(ObjectKind::Zone).values() {
        names.extend(zone.list("nodes"));
        names.extend(zone.list("exitnodes"));
        names.extend(zone.text("exitnodes-primary"));
    }
    for (id, section) in config.of(ObjectKind::Fabric) {
        if is_fabric_node(section) {
            if let Some((_, node)) = id.split_once('_') {
                names.insert(node.to_string());
            }
        }
    }
    for controller in config.of(ObjectKind::Controller).values() {
        names.extend(controller.text("node"));
    }
    names
}

/// The node the intent is for must be this host or one the SDN names (§3): a typo would
/// otherwise return an intent of zones without `nodes`, for a node that does not exist.
pub fn check_node_known(config: &RunningConfig, node: &str, host: &str) -> Result<(), String> {
    if node == host {
        return Ok(());
    }
    let named = named_nodes(config);
    if named.contains(node) {
        return Ok(());
    }
    let known: Vec<&str> = named.iter().map(String::as_str).collect();
    Err(format!(
        "node: '{node}' is neither this host ({host}) nor a node the SDN configuration names ({}); give the node's name as Proxmox knows it (`pvecm nodes`), or leave node out for this host",
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    ))
}

fn is_fabric_node(section: &Object) -> bool {
    section.section_type == "node" || section.section_type.ends_with("_node")
}

/// A positive whole number of a zone or VNet; `what` names it in the error.
fn number(object: &Object, key: &str, what: &str) -> Result<Option<u32>, String> {
    match object.text(key) {
        None => Ok(None),
        Some(text) => text.trim().parse::<u32>().map(Some).map_err(|_| {
            format!(
                "running_config: {what}: `{key}` is '{text}', not a whole number; fix it with `pvesh` and apply the SDN again"
            )
        }),
    }
}

/// Derives `node`'s intent from `config` and its own interfaces.
pub fn derive(config: &RunningConfig, node: &str, own: &OwnInterfaces) -> Result<Derived, String> {
    let mut run = Derivation {
        config,
        node,
        index: Index::new(config, node, own),
        skipped: Vec::new(),
    };
    let mut zones = Vec::new();
    for (id, zone) in config.of(ObjectKind::Zone) {
        let Some(zone_type) = zone_type(&zone.section_type) else {
            run.skipped.push(format!(
                "zone {id}: type '{}' is not one sdn_check knows; skipped",
                zone.section_type
            ));
            continue;
        };
        for key in zone.values.keys() {
            if key != "type"
                && !COMMON_ZONE_KEYS.contains(&key.as_str())
                && !zone_keys(zone_type).contains(&key.as_str())
            {
                run.skipped.push(format!(
                    "zone {id}: key '{key}' is not one sdn_check knows for a {} zone; skipped",
                    zone.section_type
                ));
            }
        }
        // §3: a zone with `nodes` applies only to the nodes it lists.
        let nodes = zone.list("nodes");
        if !nodes.is_empty() && !nodes.iter().any(|n| n == node) {
            continue;
        }
        zones.push(run.zone(id, zone, zone_type)?);
    }
    let tenants = zones
        .iter()
        .filter(|z| z.zone_type == ZoneType::Evpn)
        .map(|z| Tenant {
            name: z.name.clone(),
            vrf: format!("vrf_{}", z.name),
            l3vni_bridge: format!("vrfbr_{}", z.name),
            exit_node: z.exit_node,
        })
        .collect();
    Ok(Derived {
        intent: NodeIntent {
            node: node.to_string(),
            zones,
            tenants,
        },
        skipped: run.skipped,
    })
}

/// The local VTEP: its address and the MTU of the interface that carries it, when known.
#[derive(Debug, Clone, Copy)]
struct Vtep {
    address: IpAddr,
    interface_mtu: Option<u32>,
}

/// What the derivation looks up by a key, indexed once: a scan of the configuration per zone
/// or per VNet would make the derivation quadratic (10,000 VNets of 4 MiB took 47 s). Each
/// list keeps the configuration's order (by ID), as the scans did.
struct Index<'a> {
    /// The VNets of each zone (their `zone`).
    vnets_by_zone: HashMap<String, Vec<(&'a str, &'a Object)>>,
    /// The subnets of each VNet (their `vnet`).
    subnets_by_vnet: HashMap<String, Vec<(&'a str, &'a Object)>>,
    /// The `loopback` of the node's BGP controller, else of its IS-IS controller (§4).
    controller_loopback: Option<String>,
    /// Each address of the node's own interfaces and the first interface (by name) with it.
    own_addresses: HashMap<IpAddr, &'a OwnInterface>,
    own: &'a OwnInterfaces,
}

impl<'a> Index<'a> {
    fn new(config: &'a RunningConfig, node: &str, own: &'a OwnInterfaces) -> Self {
        let mut vnets_by_zone: HashMap<String, Vec<_>> = HashMap::new();
        for (id, vnet) in config.of(ObjectKind::Vnet) {
            if let Some(zone) = vnet.text("zone") {
                vnets_by_zone
                    .entry(zone)
                    .or_default()
                    .push((id.as_str(), vnet));
            }
        }
        let mut subnets_by_vnet: HashMap<String, Vec<_>> = HashMap::new();
        for (id, subnet) in config.of(ObjectKind::Subnet) {
            if let Some(vnet) = subnet.text("vnet") {
                subnets_by_vnet
                    .entry(vnet)
                    .or_default()
                    .push((id.as_str(), subnet));
            }
        }
        let mut bgp = None;
        let mut isis = None;
        for controller in config.of(ObjectKind::Controller).values() {
            if controller.text("node").as_deref() != Some(node) {
                continue;
            }
            match controller.section_type.as_str() {
                "bgp" if bgp.is_none() => bgp = Some(controller),
                "isis" if isis.is_none() => isis = Some(controller),
                _ => {}
            }
        }
        let mut own_addresses = HashMap::new();
        for iface in own.interfaces.values() {
            for &address in &iface.addresses {
                own_addresses.entry(address).or_insert(iface);
            }
        }
        Index {
            vnets_by_zone,
            subnets_by_vnet,
            controller_loopback: bgp.or(isis).and_then(|c| c.text("loopback")),
            own_addresses,
            own,
        }
    }

    fn vnets_of(&self, zone: &str) -> &[(&'a str, &'a Object)] {
        self.vnets_by_zone.get(zone).map_or(&[], Vec::as_slice)
    }

    fn subnets_of(&self, vnet: &str) -> &[(&'a str, &'a Object)] {
        self.subnets_by_vnet.get(vnet).map_or(&[], Vec::as_slice)
    }
}

/// One node's derivation: the configuration, the node, the index of both, and what was
/// skipped.
struct Derivation<'a> {
    config: &'a RunningConfig,
    node: &'a str,
    index: Index<'a>,
    skipped: Vec<String>,
}

impl Derivation<'_> {
    fn zone(&mut self, id: &str, zone: &Object, zone_type: ZoneType) -> Result<ZoneIntent, String> {
        let node = self.node;
        let what = format!("zone {id}");
        let zone_mtu = number(zone, "mtu", &what)?;
        let vxlan_based = matches!(zone_type, ZoneType::Vxlan | ZoneType::Evpn);
        let evpn = zone_type == ZoneType::Evpn;

        // §4 (VTEP) and §5 (MTU).
        let (vtep, mtu) = if vxlan_based {
            let vtep = self.local_vtep(id, zone, zone_type);
            let interface_mtu = vtep
                .and_then(|v| v.interface_mtu)
                .map(|m| m.saturating_sub(VXLAN_OVERHEAD));
            (
                vtep.map(|v| v.address),
                Some(zone_mtu.or(interface_mtu).unwrap_or(DEFAULT_VXLAN_MTU)),
            )
        } else {
            (None, zone_mtu)
        };

        let l3vni = if evpn {
            number(zone, "vrf-vxlan", &what)?
        } else {
            None
        };
        let vxlan_port = match number(zone, "vxlan-port", &what)? {
        Some(port) if vxlan_based => Some(u16::try_from(port).map_err(|_| {
            format!("running_config: {what}: `vxlan-port` {port} is not a UDP port; fix it with `pvesh` and apply the SDN again")
        })?),
        _ => None,
    };

        let mut vnets = Vec::new();
        // A copy of the zone's list of references (linear in all): self.vnet records skips.
        for (vnet_id, vnet) in self.index.vnets_of(id).to_vec() {
            vnets.push(self.vnet(id, vnet_id, vnet, zone_type, mtu)?);
        }

        Ok(ZoneIntent {
            name: id.to_string(),
            zone_type,
            vrf: evpn.then(|| format!("vrf_{id}")),
            l3vni,
            l3vni_vxlan: (evpn && l3vni.is_some()).then(|| format!("vrfvx_{id}")),
            l3vni_bridge: (evpn && l3vni.is_some()).then(|| format!("vrfbr_{id}")),
            exit_node: evpn && zone.list("exitnodes").iter().any(|n| n == node),
            primary_exit_node: if evpn {
                zone.text("exitnodes-primary")
            } else {
                None
            },
            local_routing: evpn && zone.flag("exitnodes-local-routing"),
            vtep,
            vxlan_port,
            mtu,
            generated: !vnets.is_empty(),
            vnets,
        })
    }

    /// §4: the fabric node's address, or the address of the BGP/IS-IS controller's loopback for
    /// this node, or the first peer that is one of the node's own addresses.
    fn local_vtep(&mut self, id: &str, zone: &Object, zone_type: ZoneType) -> Option<Vtep> {
        let (config, node, index) = (self.config, self.node, &self.index);
        let skipped = &mut self.skipped;
        // EVPN zones take peers or fabric from their controller, VXLAN zones have their own.
        let holder = if zone_type == ZoneType::Evpn {
            let name = zone.text("controller").unwrap_or_default();
            match config.of(ObjectKind::Controller).get(&name) {
                Some(controller) => controller,
                None => {
                    skipped.push(format!(
                    "zone {id}: controller '{name}' is not in the running configuration; its VTEP is unknown"
                ));
                    return None;
                }
            }
        } else {
            zone
        };
        if let Some(fabric) = holder.text("fabric") {
            let section = config
                .of(ObjectKind::Fabric)
                .get(&format!("{fabric}_{node}"))
                .filter(|s| is_fabric_node(s));
            let address = section.and_then(|s| {
                s.text("ip")
                    .or_else(|| s.text("ip6"))
                    .and_then(|ip| ip.split('/').next().and_then(|a| a.parse::<IpAddr>().ok()))
            });
            if address.is_none() {
                skipped.push(format!(
                "zone {id}: node {node} has no ip in fabric {fabric}; Proxmox configures no VTEP for it"
            ));
            }
            return address.map(|address| Vtep {
                address,
                interface_mtu: None,
            });
        }
        let peers: Vec<IpAddr> = holder
            .list("peers")
            .iter()
            .filter_map(|p| p.parse().ok())
            .collect();
        if zone_type == ZoneType::Evpn {
            let loopback = index.controller_loopback.as_ref();
            if let Some(iface) = loopback.and_then(|name| index.own.interfaces.get(name)) {
                if let Some(&address) = iface.addresses.first() {
                    return Some(Vtep {
                        address,
                        interface_mtu: iface.mtu,
                    });
                }
            }
        }
        for peer in peers {
            if let Some(iface) = index.own_addresses.get(&peer) {
                return Some(Vtep {
                    address: peer,
                    interface_mtu: iface.mtu,
                });
            }
        }
        skipped.push(format!(
        "zone {id}: none of the peers is an address of node {node} in interfaces; Proxmox would take the source address of a route to a peer, which sdn_check does not guess: vtep is null"
    ));
        None
    }

    fn vnet(
        &mut self,
        zone_id: &str,
        id: &str,
        vnet: &Object,
        zone_type: ZoneType,
        mtu: Option<u32>,
    ) -> Result<VnetIntent, String> {
        let (index, skipped) = (&self.index, &mut self.skipped);
        for key in vnet.values.keys() {
            if !VNET_KEYS.contains(&key.as_str()) {
                skipped.push(format!(
                    "vnet {id}: key '{key}' is not one sdn_check knows; skipped"
                ));
            }
        }
        let what = format!("vnet {id}");
        let tag = number(vnet, "tag", &what)?;
        let vxlan_based = matches!(zone_type, ZoneType::Vxlan | ZoneType::Evpn);
        let vlan = match tag {
        Some(tag) if matches!(zone_type, ZoneType::Vlan | ZoneType::Qinq) => {
            Some(u16::try_from(tag).ok().filter(|t| (1..=4094).contains(t)).ok_or_else(
                || format!("running_config: {what}: VLAN tag {tag} is outside 1-4094; fix it with `pvesh` and apply the SDN again"),
            )?)
        }
        _ => None,
    };
        // §7: the bridge carries the gateways only in EVPN and simple zones.
        let gateways_on_node = matches!(zone_type, ZoneType::Evpn | ZoneType::Simple);
        let mut subnets = Vec::new();
        for &(subnet_id, subnet) in index.subnets_of(id) {
            for key in subnet.values.keys() {
                if !SUBNET_KEYS.contains(&key.as_str()) {
                    skipped.push(format!(
                        "subnet {subnet_id}: key '{key}' is not one sdn_check knows; skipped"
                    ));
                }
            }
            let Some(cidr) = subnet_cidr(zone_id, subnet_id) else {
                skipped.push(format!(
                "subnet {subnet_id}: the ID is not `{zone_id}-<network>-<prefix length>`; skipped"
            ));
                continue;
            };
            let gateway = match subnet.text("gateway") {
            Some(text) => Some(text.parse::<IpAddr>().map_err(|_| {
                format!("running_config: subnet {subnet_id}: gateway '{text}' is not an IP address; fix it with `pvesh` and apply the SDN again")
            })?),
            None => None,
        };
            subnets.push(SubnetIntent {
                cidr,
                gateway: gateway.filter(|_| gateways_on_node),
                snat: subnet.flag("snat"),
            });
        }
        Ok(VnetIntent {
            name: id.to_string(),
            vni: tag.filter(|_| vxlan_based),
            vlan,
            vlan_aware: vnet.flag("vlanaware"),
            vxlan_device: vxlan_based.then(|| format!("vxlan_{id}")),
            mtu,
            subnets,
        })
    }
}

/// §6: a subnet's ID is `<zone>-<network>-<prefix length>` (`tdemo-10.0.0.0-24`,
/// `tdemo-2001:db8::-64`).
pub fn subnet_cidr(zone_id: &str, subnet_id: &str) -> Option<IpNet> {
    let rest = subnet_id.strip_prefix(zone_id)?.strip_prefix('-')?;
    let (network, length) = rest.rsplit_once('-')?;
    format!("{network}/{length}").parse().ok()
}
