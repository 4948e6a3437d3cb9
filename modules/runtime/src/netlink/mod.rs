//! The one place where modules talk rtnetlink (feature `netlink`).
//!
//! [`Netlink::connect`] builds a current-thread tokio runtime and a strict-checking rtnetlink
//! connection; its methods block, so module bodies stay synchronous. What comes back is plain
//! data ([`Link`], [`Address`], [`Route`], [`Lookup`]) that tests can build by hand, and every failure is a
//! [`NetlinkError`] that says what was being done and, for the errnos with a known fix, what to
//! do. Requests this layer has no method for go through [`Netlink::handle`] and
//! [`Netlink::block_on`], with [`NetlinkError::from_rtnetlink`] for their errors.
//!
//! Netlink sockets belong to the network namespace that is current when they are created, and
//! `setns()` changes only the calling thread: enter a namespace before calling
//! [`Netlink::connect`], on the thread that will use it.

mod address;
pub(crate) mod bridge;
pub(crate) mod error;
#[cfg(feature = "ethtool")]
pub mod ethtool;
pub(crate) mod link;
mod route;

pub use address::{address_from_message, Address, AddressState};
pub use bridge::{
    fdb_entry_from_message, port_vlans_from_message, FdbEntry, FdbState, PortVlans, VlanEntry,
};
pub use error::NetlinkError;
pub use link::{
    link_from_message, BondInfo, BondPortInfo, BondRole, BridgeVlanSettings, Link, Links,
    OperState, Vlan, VlanProtocol, VxlanInfo,
};
pub use route::{
    dump_request, lookup_request, protocol_name, route_from_message, table_name, Family, Lookup,
    NextHop, Refusal, Route, RouteKind, RouteQuery,
};
/// The crates underneath, for requests this layer does not wrap (bridge VLANs, fdb, link
/// changes), so that every module builds them against the same versions.
pub use {netlink_packet_core, netlink_packet_route, rtnetlink};

use futures_util::{Stream, TryStreamExt};
use std::future::Future;

/// An open rtnetlink connection and the runtime that drives it.
pub struct Netlink {
    runtime: tokio::runtime::Runtime,
    handle: rtnetlink::Handle,
}

impl Netlink {
    /// Opens a connection in the calling thread's network namespace.
    pub fn connect() -> Result<Self, NetlinkError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .map_err(|e| NetlinkError::from_io("starting the netlink runtime", e))?;
        // The socket registers with the runtime's reactor when it is created.
        let _entered = runtime.enter();
        let (connection, handle, _) = rtnetlink::new_connection_with_strict_check()
            .map_err(|e| NetlinkError::from_io("opening the rtnetlink socket", e))?;
        runtime.spawn(connection);
        drop(_entered);
        Ok(Netlink { runtime, handle })
    }

    /// The rtnetlink handle, for requests run through [`Netlink::block_on`].
    pub fn handle(&self) -> &rtnetlink::Handle {
        &self.handle
    }

    /// Runs one future (a request on [`Netlink::handle`]) to completion.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Every link of the namespace. An empty answer is an error: every namespace has `lo`.
    pub fn links(&self) -> Result<Links, NetlinkError> {
        const OPERATION: &str = "listing the network interfaces";
        let messages = self.collect(OPERATION, self.handle.link().get().execute())?;
        if messages.is_empty() {
            return Err(NetlinkError::other(
                OPERATION,
                "the kernel listed no interface at all, not even lo",
            ));
        }
        Ok(Links::new(messages.iter().map(link_from_message).collect()))
    }

    /// Every IPv4 and IPv6 address of every interface of the namespace.
    pub fn addresses(&self) -> Result<Vec<Address>, NetlinkError> {
        // The default request (family, index and prefix 0) is a dump of everything, also
        // under strict checking.
        let messages = self.collect(
            "listing the interface addresses",
            self.handle.address().get().execute(),
        )?;
        Ok(messages.iter().filter_map(address_from_message).collect())
    }

    /// Every route of one table and family, of any type and protocol. A table the kernel does
    /// not have (yet) has no routes.
    pub fn routes(&self, family: Family, table: u32) -> Result<Vec<Route>, NetlinkError> {
        let operation = format!(
            "listing the {} routes of table {}",
            family.name(),
            table_name(table)
        );
        let request = self.handle.route().get(dump_request(family, table));
        let messages = match self.collect(&operation, request.execute()) {
            Err(error) if error.errno() == Some(libc::ENOENT) => Vec::new(),
            other => other?,
        };
        Ok(messages
            .iter()
            .filter_map(route_from_message)
            // Kernels without strict checking ignore the filter and dump every table.
            .filter(|route| route.table == table && route.family == family)
            .collect())
    }

    /// `ip route get`: the output lookup of the destination pinned to `oif` (a VRF device's
    /// ifindex for `vrf NAME`), or with `iif` the input lookup of a packet arriving there.
    pub fn route_get(&self, query: &RouteQuery) -> Result<Lookup, NetlinkError> {
        let mut operation = format!("looking up the route to {}", query.destination);
        if let Some(source) = query.source {
            operation.push_str(&format!(" from {source}"));
        }
        if let Some(iif) = query.iif {
            operation.push_str(&format!(" arriving by ifindex {iif}"));
        }
        let request = self.handle.route().get(lookup_request(query));
        let messages = match self.collect(&operation, request.execute()) {
            Ok(messages) => messages,
            Err(error) => match error.errno().and_then(Refusal::from_errno) {
                Some(refusal) => return Ok(Lookup::Refused(refusal)),
                None => return Err(error),
            },
        };
        match messages.first().and_then(route_from_message) {
            Some(route) => Ok(Lookup::Route(route)),
            None => Err(NetlinkError::other(
                operation,
                "the kernel answered with no route and no error",
            )),
        }
    }

    /// Runs a dump request (a stream on [`Netlink::handle`]) to its end; its error names
    /// `operation`.
    pub fn collect<T>(
        &self,
        operation: &str,
        stream: impl Stream<Item = Result<T, rtnetlink::Error>>,
    ) -> Result<Vec<T>, NetlinkError> {
        self.block_on(async {
            let mut stream = std::pin::pin!(stream);
            let mut items = Vec::new();
            while let Some(item) = stream
                .try_next()
                .await
                .map_err(|e| NetlinkError::from_rtnetlink(operation.to_string(), e))?
            {
                items.push(item);
            }
            Ok(items)
        })
    }
}
