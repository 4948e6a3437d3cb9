//! The node's kernel over rtnetlink: what the checks read ([`read_facts`], the one dump of the
//! node's links and addresses) and the few changes the probe makes (a veth pair, marked,
//! attached, then deleted), each on one link by name or index, so a run's cost does not grow
//! with the node's interface count. Each call blocks.

use crate::tenant::{NodeAddress, NodeFacts};
use deevnet_runtime::netlink::netlink_packet_route::address::{AddressAttribute, AddressMessage};
use deevnet_runtime::netlink::rtnetlink::{LinkUnspec, LinkVeth, RouteMessageBuilder};
use deevnet_runtime::netlink::{link_from_message, Link, Netlink, NetlinkError};
use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;

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

/// Creates the veth pair `node_end` – `inside_end` with `inside_end` directly in the namespace
/// open at `namespace_fd`, so no moment exists where both ends sit on the node.
pub fn add_veth(
    netlink: &Netlink,
    node_end: &str,
    inside_end: &str,
    namespace_fd: RawFd,
) -> Result<(), NetlinkError> {
    let mut message = LinkVeth::new(node_end, inside_end).build();
    // The peer's own attributes sit in the veth's info data: the namespace goes there.
    use deevnet_runtime::netlink::netlink_packet_route::link::{
        InfoData, InfoVeth, LinkAttribute, LinkInfo,
    };
    for attribute in message.attributes.iter_mut() {
        if let LinkAttribute::LinkInfo(infos) = attribute {
            for info in infos.iter_mut() {
                if let LinkInfo::Data(InfoData::Veth(InfoVeth::Peer(peer))) = info {
                    peer.attributes.push(LinkAttribute::NetNsFd(namespace_fd));
                }
            }
        }
    }
    let operation = format!("creating the workload's veth pair {node_end}");
    netlink
        .block_on(netlink.handle().link().add(message).execute())
        .map_err(|e| NetlinkError::from_rtnetlink(operation, e))
}

/// The link named `name`, asked for alone (no dump); `None` when there is none.
pub fn link_by_name(netlink: &Netlink, name: &str) -> Result<Option<Link>, NetlinkError> {
    let operation = format!("looking up {name}");
    let request = netlink.handle().link().get().match_name(name.to_string());
    match netlink.collect(&operation, request.execute()) {
        // One answer, named so; a kernel that ignored the name would list them all.
        Ok(messages) => Ok(messages
            .iter()
            .map(link_from_message)
            .find(|link| link.name == name)),
        Err(error) if error.errno() == Some(libc::ENODEV) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Writes `alias` on link `index` (IFLA_IFALIAS): the mark a later run's sweep reads.
pub fn set_alias(netlink: &Netlink, index: u32, alias: &str) -> Result<(), NetlinkError> {
    use deevnet_runtime::netlink::netlink_packet_route::link::LinkAttribute;
    let mut message = LinkUnspec::new_with_index(index).build();
    message
        .attributes
        .push(LinkAttribute::IfAlias(alias.to_string()));
    netlink
        .block_on(netlink.handle().link().set(message).execute())
        .map_err(|e| NetlinkError::from_rtnetlink("marking the workload's veth as this run's", e))
}

/// Makes `index` a port of `bridge` with the bridge's `mtu` and sets it up, as Proxmox does
/// with a VM's tap (a port with a smaller MTU would lower the bridge's own).
pub fn attach(netlink: &Netlink, index: u32, bridge: u32, mtu: u32) -> Result<(), NetlinkError> {
    let message = LinkUnspec::new_with_index(index)
        .mtu(mtu)
        .controller(bridge)
        .up()
        .build();
    netlink
        .block_on(netlink.handle().link().set(message).execute())
        .map_err(|e| NetlinkError::from_rtnetlink("attaching the workload's veth to the VNet", e))
}

/// Deletes link `index` (named `name`, for messages), found in a dump the caller already has;
/// `Ok(false)` when it is already gone.
pub fn delete_link_at(netlink: &Netlink, index: u32, name: &str) -> Result<bool, NetlinkError> {
    match netlink.block_on(netlink.handle().link().del(index).execute()) {
        Ok(()) => Ok(true),
        Err(error) => {
            let error = NetlinkError::from_rtnetlink(format!("deleting {name}"), error);
            if error.errno() == Some(libc::ENODEV) {
                Ok(false)
            } else {
                Err(error)
            }
        }
    }
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
