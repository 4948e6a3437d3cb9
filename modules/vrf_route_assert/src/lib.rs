//! `deevnet.net.vrf_route_assert`: where tenant traffic really goes, asked of the kernel.
//!
//! The evaluation runs against a [`Kernel`]: the node's (netlink, `/proc/sys` and nft, in
//! [`node`]) or recorded answers in tests. For each declared VRF it checks that the VRF exists,
//! that its own table has the expected default routes ([`defaults`]: Proxmox's `unreachable
//! default metric 4278198272` catch-all is reported, never taken for a usable default), that
//! its lookups cannot fall through to the main table ([`fall_through`]), how each destination
//! resolves for traffic in the VRF ([`lookup`]: `ip route get DST vrf NAME`; generated for
//! every prefix connected on a forbidden interface by [`connected`]; with `iif`, for a packet
//! arriving by an interface, in [`input`]; with `snat_src`, whether the node's nftables NAT
//! chains source-translate a workload's packets leaving by the answer, in [`snat`]), and that
//! the interfaces those routes leave by forward and accept asymmetric returns ([`exits`]). The
//! VRF named `default` is the main table. VRFs nobody declared are inspected for fall-through
//! on request; [`settle`] re-checks until all pass or time is up.
//!
//! Entry points: [`params::Request::from_params`] validates the options; [`assert_vrfs`] runs
//! every check once and returns the [`Report`] of [`CheckResult`]s; [`settle::settle`] repeats
//! it until it passes or `settle_timeout` is up. The binary's `main.rs` only chains these.
//!
//! Invariants: nothing is changed on the node, so check mode runs everything; an answer from
//! any table but the VRF's own is fall-through, a finding even when nothing else was expected;
//! a check the kernel could not answer fails the run with [`deevnet_runtime::Failure`], never
//! passes; a kernel without VRF support ([`vrf_support`]) is named, never taken for "no VRF
//! falls through".
//!
//! Neighbours: [`deevnet_runtime`] (netlink, sysctl keys, the nftables reader, the module
//! protocol); the playbook `fabric_proof` asks its lookups and source NAT; the role runs
//! it from `tasks/tenant_egress.yml`; `egress_probe` proves with traffic what this module
//! proves from the kernel's answers.

mod assert;
pub mod connected;
pub mod defaults;
pub mod exits;
pub mod fall_through;
pub mod input;
mod kernel;
pub mod lookup;
pub mod node;
pub mod params;
mod report;
pub mod settle;
pub mod snat;
mod view;
pub mod vrf_support;

pub use assert::assert_vrfs;
pub use defaults::{DefaultRoute, VrfState};
pub use kernel::Kernel;
pub use report::{CheckResult, Report};
pub use view::VrfView;

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
