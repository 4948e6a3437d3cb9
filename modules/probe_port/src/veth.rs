//! The probe port: a veth pair from the node into a [`crate::namespace::Namespace`], its node
//! end named `dvprobe<pid>` (or `dvp<pid>p<n>` in a run of many) and marked with the run's
//! [`Mark`]. The one thing a run can leave behind (during the kernel's asynchronous teardown of
//! the namespace) is recognizable by that mark, and [`sweep_leftovers`] removes it on the next
//! run's start once its process is verifiably dead. Each netlink call works on one link by name
//! or index, so a run's cost does not grow with the node's interface count; each call blocks.

use crate::mark::{leftovers, Mark};
use crate::namespace::Namespace;
use deevnet_runtime::netlink::netlink_packet_route::link::LinkAttribute;
use deevnet_runtime::netlink::rtnetlink::{LinkUnspec, LinkVeth};
use deevnet_runtime::netlink::{link_from_message, Link, Links, Netlink, NetlinkError};
use deevnet_runtime::Failure;
use std::os::fd::RawFd;

/// The prefix of every interface name a run creates.
pub const NAME_PREFIX: &str = "dvprobe";

/// The veth ends of the run with process id `pid`: on the node, and inside the workload.
pub fn veth_names(pid: u32) -> (String, String) {
    (
        format!("{NAME_PREFIX}{pid}"),
        format!("{NAME_PREFIX}{pid}w"),
    )
}

/// The veth ends of probe `index` of a run of many (`probes`) with process id `pid`:
/// `dvp<pid>p<index>` and `dvp<pid>p<index>w`, within the kernel's 15 characters for any
/// process id (at most 7 digits) and probe index (below MAX_PROBES, 3 digits).
pub fn probe_veth_names(pid: u32, index: usize) -> (String, String) {
    (
        format!("{LISTED_PREFIX}{pid}p{index}"),
        format!("{LISTED_PREFIX}{pid}p{index}w"),
    )
}

/// The prefix of the interfaces of a run of many probes.
pub const LISTED_PREFIX: &str = "dvp";

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
    use deevnet_runtime::netlink::netlink_packet_route::link::{InfoData, InfoVeth, LinkInfo};
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

/// The veth pair `node_end` – `inside_end` made into `namespace`, guarded and marked as this
/// run's: the guard and the node end's index. Not yet attached to a bridge (the caller sets the
/// port up as it needs, then [`attach`]es it). A `node_end` that exists already is refused and
/// never deleted: process ids repeat across PID namespaces (containers).
pub fn plug<'a>(
    netlink: &'a Netlink,
    (node_end, inside_end): (&str, &str),
    namespace: &Namespace,
    mark: &Mark,
) -> Result<(VethGuard<'a>, u32), Failure> {
    add_veth(netlink, node_end, inside_end, namespace.fd()).map_err(|error| {
        if error.errno() != Some(libc::EEXIST) {
            return Failure::from(error);
        }
        Failure::new(format!(
            "{node_end} exists already on the node, and this run did not make it (a run with \
             process id {} in another PID namespace, or an operator's interface); run the \
             probe again once it is gone, or from the node's own PID namespace",
            mark.pid
        ))
    })?;
    let guard = VethGuard::new(netlink, node_end.to_string(), mark);
    let index = link_by_name(netlink, node_end)?
        .map(|link| link.index)
        .ok_or_else(|| Failure::new(format!("{node_end} vanished right after it was created")))?;
    set_alias(netlink, index, &mark.alias())?;
    Ok((guard, index))
}

/// Removes the interfaces of runs that are over, found in `links` (the node dump this run
/// already read); returns their names.
pub fn sweep_leftovers(
    netlink: &Netlink,
    links: &Links,
    this: &Mark,
) -> Result<Vec<String>, NetlinkError> {
    let mut removed = Vec::new();
    for link in leftovers(links, |mark| mark.run_is_over(this)) {
        // The kernel may finish its own teardown meanwhile: gone is as good as deleted.
        if delete_link_at(netlink, link.index, &link.name)? {
            removed.push(link.name.clone());
        }
    }
    Ok(removed)
}

/// The node end of the workload's veth; deleting it deletes the pair. Dropped on every way
/// out of the run that unwinds; the kernel covers the others (see the module docs). Only a
/// link of that name carrying this run's mark is deleted: if the veth vanished mid-run, an
/// interface someone made under its name since is not this run's.
pub struct VethGuard<'a> {
    netlink: &'a Netlink,
    pub name: String,
    mark: String,
}

impl<'a> VethGuard<'a> {
    pub fn new(netlink: &'a Netlink, name: String, mark: &Mark) -> Self {
        VethGuard {
            netlink,
            name,
            mark: mark.alias(),
        }
    }

    /// Deletes the pair now, reporting a failure (drop only tries); `false` when there was
    /// nothing of this run's to delete.
    pub fn remove(mut self) -> Result<bool, NetlinkError> {
        let name = std::mem::take(&mut self.name);
        delete_if_marked(self.netlink, &name, &self.mark)
    }
}

impl Drop for VethGuard<'_> {
    fn drop(&mut self) {
        if !self.name.is_empty() {
            let _ = delete_if_marked(self.netlink, &self.name, &self.mark);
        }
    }
}

fn delete_if_marked(netlink: &Netlink, name: &str, mark: &str) -> Result<bool, NetlinkError> {
    match link_by_name(netlink, name)? {
        Some(link) if link.alias.as_deref() == Some(mark) => {
            delete_link_at(netlink, link.index, name)
        }
        _ => Ok(false),
    }
}
