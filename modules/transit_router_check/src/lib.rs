//! The logic of `transit_router_check`, apart from its I/O, so that it runs on recorded data: the
//! options ([`params`]: [`SPEC`], [`Params`], the validated [`Request`]), what each nftables
//! rule means to the audit ([`nft`]: its [`nft::RuleFacts`]), the policy-routing rules
//! ([`gate`]), the routes and the kernel's answers for VPC addresses ([`routes`]), the transit
//! interface and tc ([`interface`]), the persisted ruleset's comparison ([`persisted`]), the
//! unit's boot and reload wiring with its drop-ins ([`mod@unit`]), each check ([`checks`],
//! walking the chains in [`walk`], reading what acts around the forward chain in [`ahead`]; what the kernel does outside the table and the gate in
//! [`kernel`]) and the result ([`report`]). The node's side (programs run, files, `/proc/sys`
//! and `/proc/net` read) is [`node`].
//!
//! Parsing nftables lives in the house's one reader, [`deevnet_runtime::nft`]: nft run trusted
//! and bounded, the typed ruleset (read from `nft -j` and `nft -t list ruleset`), the table
//! flags' one policy (a dormant table, or one whose flags cannot be read, decides nothing),
//! nft's interface patterns with their escapes, the IPv4 ranges on `ipnet`, and the one walker
//! of jumps and gotos ([`deevnet_runtime::nft::Folder`], with this audit's fold in [`walk`]).
//!
//! The state says `enforced` or `closed` only about what the audit can prove for every transit
//! packet. When something may move or mark transit packets ahead of the table and the gate (the
//! checks `transit_interface` and `legacy_tables`), nothing is provable and the state is `open`.
//! `reverse_path` is availability: with `rp_filter` on the uplink, the reverse lookup of each
//! answer to transit traffic runs as if it came in on the transit interface, unmarked unless
//! `src_valid_mark` is on, and meets the gate's `prohibit`; such a router is closed and broken,
//! so the check is a violation that changes no state. `vpc_route` changes none either (the
//! table's drop stands in front of a route into a VPC).
//!
//! Invariants: nothing on the node changes (the persisted ruleset, read once by the file
//! policy, loads from nft's stdin in a network namespace of its own); `nft`, `ip` and `tc` run
//! only when
//! [`deevnet_runtime::file_policy::trusted_program`] trusts them, within the bounds of
//! [`deevnet_runtime::bounded_command`]; files are read through
//! [`deevnet_runtime::file_policy::read_trusted`], the kernel's `/proc` as
//! [`deevnet_runtime::sysctl`] reads it. Neighbours: [`deevnet_runtime`].

pub mod ahead;
pub mod checks;
pub mod gate;
pub mod interface;
pub mod kernel;
pub mod nft;
pub mod node;
pub mod params;
pub mod persisted;
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
