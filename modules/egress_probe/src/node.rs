//! The node's kernel over rtnetlink: what the checks read ([`read_facts`], the one dump of the
//! node's links and addresses), and the workload's inside configured ([`configure_inside`],
//! [`dad_outcome`]). The probe port itself (veth, mark, attach, removal) is
//! `deevnet_probe_port::veth`'s. Each call blocks.

use crate::tenant::{NodeAddress, NodeFacts};
use deevnet_runtime::netlink::netlink_packet_route::address::{AddressAttribute, AddressMessage};
use deevnet_runtime::netlink::rtnetlink::{LinkUnspec, RouteMessageBuilder};
use deevnet_runtime::netlink::{Netlink, NetlinkError};
use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Links and IP addresses of the namespace `netlink` was opened in.
pub fn read_facts(netlink: &Netlink) -> Result<NodeFacts, NetlinkError> {
    let links = netlink.links()?;
    let messages: Vec<AddressMessage> = netlink.collect(
        "listing the addresses",
        netlink.handle().address().get().execute(),
    )?;
    Ok(NodeFacts {
        links,
        addresses: messages.iter().filter_map(ip_address).collect(),
    })
}

fn ip_address(message: &AddressMessage) -> Option<NodeAddress> {
    // IFA_LOCAL is the interface's own address (IFA_ADDRESS the peer's on point-to-point);
    // IPv6 has IFA_ADDRESS only.
    let local = message.attributes.iter().find_map(|a| match a {
        AddressAttribute::Local(ip) => Some(*ip),
        _ => None,
    });
    let address = local.or_else(|| {
        message.attributes.iter().find_map(|a| match a {
            AddressAttribute::Address(ip) => Some(*ip),
            _ => None,
        })
    })?;
    // Every IPv6 interface has a link-local address: it routes nothing, so it neither makes
    // an interface forbidden by default nor a subnet a workload could be in.
    if let IpAddr::V6(v6) = address {
        if v6.segments()[0] & 0xffc0 == 0xfe80 {
            return None;
        }
    }
    Some(NodeAddress {
        index: message.header.index,
        net: IpNet::new(address, message.header.prefix_len).ok()?,
    })
}

/// Inside the workload's namespace: `lo` and `dev` up (`dev` with the VNet's `mtu`),
/// `address` on `dev`, default via `gateway`.
pub fn configure_inside(
    netlink: &Netlink,
    dev: &str,
    address: IpNet,
    gateway: IpAddr,
    mtu: u32,
) -> Result<(), NetlinkError> {
    let links = netlink.links()?;
    let Some(link) = links.by_name(dev) else {
        return Err(NetlinkError::other(
            "configuring the workload",
            format!("{dev} did not arrive in the workload's namespace"),
        ));
    };
    let index = link.index;
    let handle = netlink.handle();
    if let Some(lo) = links.by_name("lo") {
        let message = LinkUnspec::new_with_index(lo.index).up().build();
        netlink
            .block_on(handle.link().set(message).execute())
            .map_err(|e| NetlinkError::from_rtnetlink("setting the workload's lo up", e))?;
    }
    netlink
        .block_on(
            handle
                .address()
                .add(index, address.addr(), address.prefix_len())
                .execute(),
        )
        .map_err(|e| {
            NetlinkError::from_rtnetlink(format!("adding {address} to the workload"), e)
        })?;
    let message = LinkUnspec::new_with_index(index).mtu(mtu).up().build();
    netlink
        .block_on(handle.link().set(message).execute())
        .map_err(|e| NetlinkError::from_rtnetlink("setting the workload's interface up", e))?;
    let route = match gateway {
        IpAddr::V4(gateway) => RouteMessageBuilder::<Ipv4Addr>::new()
            .gateway(gateway)
            .output_interface(index)
            .build(),
        IpAddr::V6(gateway) => RouteMessageBuilder::<Ipv6Addr>::new()
            .gateway(gateway)
            .output_interface(index)
            .build(),
    };
    netlink
        .block_on(handle.route().add(route).execute())
        .map_err(|e| {
            NetlinkError::from_rtnetlink(format!("adding the workload's default via {gateway}"), e)
        })
}

/// A permanent neighbour entry `address` → `mac` on link `index` (replacing one the kernel
/// learned).
pub fn pin_neighbour(
    netlink: &Netlink,
    index: u32,
    address: IpAddr,
    mac: [u8; 6],
) -> Result<(), NetlinkError> {
    netlink
        .block_on(
            netlink
                .handle()
                .neighbours()
                .add(index, address)
                .link_layer_address(&mac)
                .replace()
                .execute(),
        )
        .map_err(|e| NetlinkError::from_rtnetlink(format!("pinning the gateway {address}"), e))
}

/// Whether duplicate address detection of `address` on link `index` is over: `Some(true)`
/// when another host holds it (DADFAILED), `Some(false)` when it passed, `None` while the
/// address is still tentative.
pub fn dad_outcome(
    netlink: &Netlink,
    index: u32,
    address: IpAddr,
) -> Result<Option<bool>, NetlinkError> {
    use deevnet_runtime::netlink::netlink_packet_route::address::AddressFlags;
    let messages: Vec<AddressMessage> = netlink.collect(
        "listing the workload's addresses",
        netlink.handle().address().get().execute(),
    )?;
    let ours = messages.iter().find(|m| {
        m.header.index == index
            && m.attributes
                .iter()
                .any(|a| matches!(a, AddressAttribute::Address(ip) if *ip == address))
    });
    let Some(message) = ours else {
        // The kernel removes an address whose DAD failed unless it is kept: gone is taken.
        return Ok(Some(true));
    };
    let flags = message
        .attributes
        .iter()
        .find_map(|a| match a {
            AddressAttribute::Flags(flags) => Some(*flags),
            _ => None,
        })
        .unwrap_or(AddressFlags::from_bits_truncate(u32::from(
            message.header.flags.bits(),
        )));
    Ok(if flags.contains(AddressFlags::Dadfailed) {
        Some(true)
    } else if flags.contains(AddressFlags::Tentative) {
        None
    } else {
        Some(false)
    })
}
