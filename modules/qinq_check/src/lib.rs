//! The logic of `qinq_check`, apart from its netlink I/O, so that it runs on recorded data:
//! what the operator asked for ([`Request`]), the uplink stack it names, found in the node's
//! links or refused as bad input ([`Stack::resolve`]), and each check on what the kernel
//! reported ([`evaluate`]).

mod checks;
mod observation;
mod report;
mod request;
mod stack;
pub mod vlan_set;

pub use checks::{evaluate, txvlan_to_switch_off};
pub use observation::{Observed, SlaveState};
pub use report::{Check, HopReport, LostTag, MtuReport, Report, SlaveReport};
pub use request::{Params, Peer, RawRequest, Request, SPEC};
pub use stack::{Hop, Stack};

/// The inner tag travels as payload inside the outer VLAN.
pub const TAG_LEN: u32 = 4;
/// The smallest MTU IPv4 allows.
pub const MIN_MTU: u32 = 68;

#[cfg(test)]
mod tests;
