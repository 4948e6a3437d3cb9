//! The logic of `transit_router_check`, apart from its I/O, so that it runs on recorded data: the
//! options ([`params`]: [`SPEC`], [`Params`], the validated [`Request`]), the ruleset as typed
//! values ([`nft`]), IPv4 ranges and their overlaps ([`ranges`]), the policy-routing rules
//! ([`gate`]), the routes ([`routes`]), the persisted ruleset's comparison ([`persisted`]), the
//! unit's boot and reload wiring ([`mod@unit`]), each check ([`checks`], walking the chains in
//! [`walk`]) and the result ([`report`]). The node's side (programs run, files and `/proc/sys`
//! read) is [`node`].
//!
//! Invariants: nothing on the node changes (the persisted ruleset loads in a network namespace
//! of its own); `nft` and `ip` run only when
//! [`deevnet_runtime::file_policy::trusted_program`] trusts them, within the bounds of
//! [`deevnet_runtime::bounded_command`]; files are read through
//! [`deevnet_runtime::file_policy::read_trusted`]. Neighbours: [`deevnet_runtime`].

pub mod checks;
pub mod gate;
pub mod interface;
pub mod kernel;
pub mod nft;
pub mod node;
pub mod params;
pub mod persisted;
pub mod ranges;
pub mod report;
pub mod routes;
pub mod unit;
pub mod walk;

pub use checks::{evaluate, Observed};
pub use params::{Params, Request, SPEC};
pub use report::{Check, Report, State};

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
