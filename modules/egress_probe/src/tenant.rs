//! The request checked against the node: the tenant's VRF, the VNet the workload plugs into,
//! its gateway, and the interfaces to capture on. Pure over [`NodeFacts`] (read once by
//! `node.rs`), so every refusal is tested without a kernel, and all of them happen before
//! anything is created.
//!
//! What is VRF-specific is [`Vrf`] alone: which interfaces belong to the tenant. The name
//! `default` is the main table (VNets of a Proxmox "simple" zone, which have no VRF device).

use crate::params::{Request, Size, Tagged, Target, DEFAULT_VRF};
use deevnet_runtime::netlink::{Link, Links};
use ipnet::IpNet;
use std::net::IpAddr;

/// What the checks read from the node: its links and its IPv4 addresses.
#[derive(Debug, Clone)]
pub struct NodeFacts {
    pub links: Links,
    pub addresses: Vec<NodeAddress>,
}

/// One IPv4 address configured on the node, with its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeAddress {
    pub index: u32,
    pub net: IpNet,
}

/// An interface by index and name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Interface {
    #[serde(skip)]
    pub index: u32,
    pub name: String,
}

impl Interface {
    fn of(link: &Link) -> Self {
        Interface {
            index: link.index,
            name: link.name.clone(),
        }
    }
}

/// The tenant's routing domain: a VRF device, or the main table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Vrf {
    Main,
    Device { index: u32, name: String },
}

impl Vrf {
    /// The VRF named `name`, or why there is none.
    pub fn find(links: &Links, name: &str) -> Result<Vrf, String> {
        if name == DEFAULT_VRF {
            return Ok(Vrf::Main);
        }
        match links.by_name(name) {
            Some(link) if link.is_vrf() => Ok(Vrf::Device {
                index: link.index,
                name: link.name.clone(),
            }),
            Some(link) => Err(format!(
                "vrf: {name} is a {} interface, not a VRF; give the tenant's VRF device (ip -br \
                 link show type vrf), or default for VNets in the main table",
                link.kind.as_deref().unwrap_or("plain")
            )),
            None => Err(format!(
                "vrf: {name} does not exist on this node; give the tenant's VRF device (ip -br \
                 link show type vrf), or default for VNets in the main table"
            )),
        }
    }

    /// Whether `link` routes in this VRF: enslaved to its device, or, for the main table,
    /// enslaved to no VRF (and no VRF device itself).
    pub fn holds(&self, links: &Links, link: &Link) -> bool {
        match self {
            Vrf::Main => !link.is_vrf() && links.vrf_of(link).is_none(),
            Vrf::Device { index, .. } => link.controller == Some(*index),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Vrf::Main => DEFAULT_VRF,
            Vrf::Device { name, .. } => name,
        }
    }
}

/// Everything the probe needs, resolved on the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub vrf: Vrf,
    pub address: IpNet,
    pub vnet: Interface,
    pub gateway: IpAddr,
    /// Whether the gateway is one of the node's own addresses on the VNet (else it is checked
    /// for an ARP answer before anything is created).
    pub gateway_is_node: bool,
    pub targets: Vec<Target>,
    pub count: u32,
    pub timeout_secs: u32,
    pub forbidden: Vec<Interface>,
    pub egress: Option<Interface>,
    /// The targets' `via` interfaces, each once: captured whatever they are (a VNet's port
    /// among them), so that a target's requests can be seen leaving by its own.
    pub vias: Vec<Interface>,
    /// The VNet's MTU: the workload's too, as a VM's NIC on it would have.
    pub mtu: u32,
    /// A tagged workload: the VLAN it is in on `vnet`, a VLAN-aware bridge (no VRF on the
    /// node; the gateway is off the node, checked by ARP from the workload itself).
    pub vlan: Option<u16>,
}

/// Checks the request against the node; the error names the option, the value and the fix.
pub fn resolve(request: &Request, node: &NodeFacts) -> Result<Plan, String> {
    let links = &node.links;
    let host = request.address.addr();
    if let Some(owner) = node.addresses.iter().find(|a| a.net.addr() == host) {
        return Err(format!(
            "address: {host} is configured on this node ({}); give an unused address in the \
             tenant's subnet",
            links.name_of(owner.index)
        ));
    }
    if let Some(tagged) = &request.tagged {
        let bridge = tagged_bridge(links, tagged)?;
        let gateway = request
            .gateway
            .ok_or("gateway: required with bridge and vlan (the router is off the node)")?;
        return plan(
            request,
            node,
            (Vrf::Main, bridge, request.address.trunc()),
            (gateway, false),
            Some(tagged.vlan),
        );
    }
    let vrf = Vrf::find(links, &request.vrf)?;
    let (vnet, subnet) = vnet_of(request, node, &vrf)?;
    if subnet.prefix_len() != request.address.prefix_len() {
        return Err(format!(
            "address: {} does not match {}'s subnet {}; give {host}/{}",
            request.address,
            vnet.name,
            subnet.trunc(),
            subnet.prefix_len()
        ));
    }
    let vnet_addresses: Vec<IpAddr> = node
        .addresses
        .iter()
        .filter(|a| a.index == vnet.index && a.net.contains(&host))
        .map(|a| a.net.addr())
        .collect();
    let gateway = match request.gateway {
        Some(gateway) => (gateway, vnet_addresses.contains(&gateway)),
        None => (
            *vnet_addresses.first().ok_or_else(|| {
                format!(
                    "gateway: {} has no address of the node in {}; give gateway (the router of \
                 that subnet)",
                    vnet.name,
                    subnet.trunc()
                )
            })?,
            true,
        ),
    };
    plan(request, node, (vrf, vnet, subnet), gateway, None)
}

/// The bridge of a tagged workload: it must exist, be a bridge, and filter VLANs.
fn tagged_bridge(links: &Links, tagged: &Tagged) -> Result<Interface, String> {
    let (name, vlan) = (&tagged.bridge, tagged.vlan);
    let link = links.by_name(name).ok_or_else(|| {
        format!(
            "bridge: {name} does not exist on this node; give the VLAN-aware bridge the \
             tenant's VMs are on (e.g. vmbr1)"
        )
    })?;
    if link.kind.as_deref() != Some("bridge") {
        return Err(format!(
            "bridge: {name} is not a bridge ({}); give the VLAN-aware bridge a VM's tag={vlan} \
             NIC would be a port of",
            link.kind.as_deref().unwrap_or("plain interface")
        ));
    }
    if link.bridge.and_then(|b| b.vlan_filtering) != Some(true) {
        return Err(format!(
            "vlan: {vlan} given, but bridge {name} is not VLAN-aware (vlan_filtering is off); \
             give a VLAN-aware bridge (bridge-vlan-aware yes), or probe the tenant through its \
             VRF (vrf)"
        ));
    }
    Ok(Interface::of(link))
}

/// The plan on `vnet` (in `vrf`, holding `subnet`), with `gateway` (and whether it is the
/// node's): the targets, sizes and interfaces checked.
fn plan(
    request: &Request,
    node: &NodeFacts,
    (vrf, vnet, subnet): (Vrf, Interface, IpNet),
    (gateway, gateway_is_node): (IpAddr, bool),
    vlan: Option<u16>,
) -> Result<Plan, String> {
    let links = &node.links;
    let mtu = links
        .by_index(vnet.index)
        .and_then(|link| link.mtu)
        .unwrap_or(1500);
    for (i, target) in request.targets.iter().enumerate() {
        let location = format!("targets[{i}]");
        check_target(&location, target, node)?;
        if let Some(Size::Bytes(size)) = target.size {
            if u32::from(size) > mtu {
                return Err(format!(
                    "{location}.size: {size} is above the MTU of {} ({mtu}); a VM there \
                     cannot send it: give at most {mtu}, or size: mtu",
                    vnet.name
                ));
            }
        }
        if subnet.contains(&target.address) && !target.peer {
            // Answered by a neighbour on the same bridge, it never leaves the node: its
            // replies would read as egress. A peer's are judged by its `via`.
            return Err(format!(
                "{location}.address: {} is in the VNet's own subnet {} ({}); a probe to it \
                 never leaves the node, so it proves nothing about egress: give a host beyond \
                 the node, or, for another node's workload of the same proof, set peer: true \
                 and via",
                target.address,
                subnet.trunc(),
                vnet.name
            ));
        }
    }
    let egress = request
        .expect_egress_interface
        .as_deref()
        .map(|name| existing(links, "expect_egress_interface", name))
        .transpose()?;
    let vias = vias_of(&request.targets, links, &vnet)?;
    let forbidden = match &request.forbidden_interfaces {
        Some(names) => names
            .iter()
            .enumerate()
            .map(|(i, name)| existing(links, &format!("forbidden_interfaces[{i}]"), name))
            .collect::<Result<Vec<_>, _>>()?,
        None => default_forbidden(node, &vnet, egress.iter().chain(&vias)),
    };
    if let Some(vnet_forbidden) = forbidden.iter().find(|i| i.index == vnet.index) {
        return Err(format!(
            "forbidden_interfaces: {} is the VNet the workload plugs into; every probe crosses \
             it: drop it from the list",
            vnet_forbidden.name
        ));
    }
    // `size: mtu` is the VNet's, in bytes from here on: the capture tells full-size probes by
    // their length.
    let targets = request
        .targets
        .iter()
        .map(|target| Target {
            size: target.size.map(|size| match size {
                Size::Mtu => Size::Bytes(mtu.min(u32::from(u16::MAX)) as u16),
                bytes => bytes,
            }),
            ..target.clone()
        })
        .collect();
    Ok(Plan {
        vrf,
        address: request.address,
        vnet,
        gateway,
        gateway_is_node,
        targets,
        count: request.count,
        timeout_secs: request.timeout_secs,
        forbidden,
        egress,
        vias,
        mtu,
        vlan,
    })
}

/// The targets' `via` interfaces the node has, each once, none the VNet itself (every probe
/// crosses it, whatever answers). A `via` the node lacks is node state, not bad input (a VNet
/// whose VXLAN port is gone): not captured, its target fails naming it, the others still run.
fn vias_of(targets: &[Target], links: &Links, vnet: &Interface) -> Result<Vec<Interface>, String> {
    let mut vias: Vec<Interface> = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        let Some(name) = &target.via else {
            continue;
        };
        let location = format!("targets[{i}].via");
        let Some(via) = links.by_name(name).map(Interface::of) else {
            continue;
        };
        if via.index == vnet.index {
            return Err(format!(
                "{location}: {name} is the VNet the workload plugs into; every probe crosses \
                 it, also one a neighbour answers: give the VNet's port toward the other node \
                 (its VXLAN port, e.g. vxlan_{name}) or the VLAN zone's uplink"
            ));
        }
        if !vias.contains(&via) {
            vias.push(via);
        }
    }
    Ok(vias)
}

/// The bridge to attach to and the subnet on it that holds the address.
fn vnet_of(request: &Request, node: &NodeFacts, vrf: &Vrf) -> Result<(Interface, IpNet), String> {
    let links = &node.links;
    let host = request.address.addr();
    let subnet_on = |link: &Link| {
        node.addresses
            .iter()
            .filter(|a| a.index == link.index)
            .map(|a| a.net.trunc())
            .find(|net| net.contains(&host))
    };
    let tenant_bridges = || {
        links
            .iter()
            .filter(|link| link.kind.as_deref() == Some("bridge") && vrf.holds(links, link))
    };
    match &request.vnet {
        Some(name) => {
            let link = links.by_name(name).ok_or_else(|| {
                format!("vnet: {name} does not exist on this node; give the VNet's bridge as `ip link` shows it")
            })?;
            if link.kind.as_deref() != Some("bridge") {
                return Err(format!(
                    "vnet: {name} is not a bridge ({}); give the VNet's bridge, which a VM's tap \
                     would be a port of",
                    link.kind.as_deref().unwrap_or("plain interface")
                ));
            }
            if !vrf.holds(links, link) {
                return Err(format!(
                    "vnet: {name} is not in vrf {}; give a VNet of that VRF",
                    vrf.name()
                ));
            }
            let subnet = subnet_on(link).ok_or_else(|| {
                format!(
                    "address: {host} is outside every subnet of {name} ({}); give an address \
                     in one of them",
                    subnets_text(node, link.index)
                )
            })?;
            Ok((Interface::of(link), subnet))
        }
        None => tenant_bridges()
            .find_map(|link| subnet_on(link).map(|subnet| (Interface::of(link), subnet)))
            .ok_or_else(|| {
                let known: Vec<String> = tenant_bridges()
                    .map(|link| format!("{} {}", link.name, subnets_text(node, link.index)))
                    .collect();
                format!(
                    "address: {host} is outside every subnet the VRF {} has connected ({}); give \
                     an address in one of them",
                    vrf.name(),
                    if known.is_empty() {
                        "it has no bridge with an address".to_string()
                    } else {
                        known.join(", ")
                    }
                )
            }),
    }
}

fn subnets_text(node: &NodeFacts, index: u32) -> String {
    let nets: Vec<String> = node
        .addresses
        .iter()
        .filter(|a| a.index == index)
        .map(|a| a.net.trunc().to_string())
        .collect();
    if nets.is_empty() {
        "no IPv4 subnet".into()
    } else {
        nets.join(" ")
    }
}

fn check_target(location: &str, target: &Target, node: &NodeFacts) -> Result<(), String> {
    let address = target.address;
    if let Some(own) = node.addresses.iter().find(|a| a.net.addr() == address) {
        return Err(format!(
            "{location}.address: {address} is the node's own address (on {}); a probe to it \
             never leaves the node, so it proves nothing about egress: give a host beyond it",
            node.links.name_of(own.index)
        ));
    }
    if let Some(subnet) = node
        .addresses
        .iter()
        .find(|a| a.net.addr().is_ipv4() && a.net.prefix_len() < 31 && a.net.broadcast() == address)
    {
        return Err(format!(
            "{location}.address: {address} is the broadcast address of {} (on {}); probes go \
             to one unicast host only",
            subnet.net.trunc(),
            node.links.name_of(subnet.index)
        ));
    }
    Ok(())
}

fn existing(links: &Links, location: &str, name: &str) -> Result<Interface, String> {
    links.by_name(name).map(Interface::of).ok_or_else(|| {
        format!("{location}: {name} does not exist on this node; give an interface `ip link` lists")
    })
}

/// Every interface of the main table with an address, but loopback, the VNet and the expected
/// ways out (the expected egress, the targets' `via`): where a tenant packet has no business.
fn default_forbidden<'a>(
    node: &NodeFacts,
    vnet: &Interface,
    expected: impl Iterator<Item = &'a Interface> + Clone,
) -> Vec<Interface> {
    let links = &node.links;
    links
        .iter()
        .filter(|link| Vrf::Main.holds(links, link))
        .filter(|link| link.name != "lo" && link.index != vnet.index)
        .filter(|link| !expected.clone().any(|e| e.index == link.index))
        .filter(|link| node.addresses.iter().any(|a| a.index == link.index))
        .map(Interface::of)
        .collect()
}
