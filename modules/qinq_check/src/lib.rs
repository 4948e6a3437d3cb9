//! The logic of `qinq_check`, apart from its netlink I/O, so that it runs on recorded data:
//! what the operator asked for ([`params`]: [`SPEC`], [`Params`], the validated [`Request`]),
//! the uplink stack it names, found in the node's links or refused as bad input
//! ([`Stack::resolve`]), the bond's configured slaves read from the interfaces file
//! ([`interfaces`]), and each check on what the kernel reported ([`evaluate`]), the zone
//! bridge's guest ports against the zone's MTU among them ([`guest_mtu`]). The kernel
//! and file side is [`node`].
//!
//! Invariants: a name the request gives that the node does not have is bad input, refused
//! before any change; the nftables ruleset is read by the runtime's reader
//! ([`deevnet_runtime::nft`]: nft run only when root owns it, bounded in time and output, each
//! table's flags by its policy); the interfaces file is
//! read through [`deevnet_runtime::file_policy::read_trusted`]. Neighbours: [`deevnet_runtime`].

mod checks;
pub mod fix;
pub mod guest_mtu;
pub mod guest_ports;
pub mod interfaces;
pub mod node;
mod observation;
pub mod params;
mod report;
mod stack;
pub mod vlan_set;

pub use checks::{evaluate, txvlan_to_switch_off};
pub use observation::{Observed, SlaveState};
pub use params::{GuestPortsPolicy, Params, Peer, Request, SPEC};
pub use report::{Check, HopReport, LostTag, MtuReport, Report, SlaveReport};
pub use stack::{Hop, HopRole, ParentKind, Stack};

/// The inner tag travels as payload inside the outer VLAN.
pub const TAG_LEN: u32 = 4;
/// The smallest MTU IPv4 allows.
pub const MIN_MTU: u32 = 68;

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
