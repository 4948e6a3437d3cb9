//! The logic of `sdn_check`: a Proxmox node's SDN intent, derived from the cluster's
//! configuration by the generator's rules (docs/proxmox-sdn.md), and its drift.
//!
//! [`intent`] is what Proxmox declares for one node (zones, VNets, subnets, tenants), pure and
//! derived from files; [`finding`] is one difference between what is declared and what the
//! node has, with its fix in words.
//!
//! The files: [`params`] (the options), [`files`] (every read, by the runtime's file policy),
//! [`running_config`] (`.running-config`'s JSON), [`section_config`] (the `.cfg` files),
//! [`interfaces`] (`#version:N` and the node's own addresses), [`derive`](mod@derive) (the generator's
//! rules), [`pending`] (changes not applied, a node not reloaded), [`report`] (the result).
//! The kernel: [`node`] (what the kernel has) and [`kernel_drift`] (how it differs).
//!
//! Entry points, in the order the binary's `main.rs` chains them: [`Request::from_params`],
//! [`files::read_sources`], [`report::evaluate`] (the intent and the file-side drift), then
//! [`node::observe`] and [`kernel_drift::kernel_drift`] when `kernel` is on.
//!
//! Invariants: nothing on the node is changed; every file is read through the runtime's file
//! policy ([`deevnet_runtime::file_policy`]), so a missing, malformed, oversized or untrusted
//! file fails naming its path; each [`Finding`] carries its fix in words.
//!
//! Neighbours: [`deevnet_runtime`] (files, netlink, the module protocol); the role runs it
//! from `tasks/sdn.yml`; `vrf_route_assert` asks the kernel where the tenants' traffic goes.

pub mod derive;
pub mod files;
pub mod finding;
pub mod intent;
pub mod interfaces;
pub mod kernel_drift;
pub mod node;
pub mod observation;
pub mod params;
pub mod pending;
pub mod report;
pub mod running_config;
pub mod section_config;

pub use finding::Finding;
pub use intent::{NodeIntent, SubnetIntent, Tenant, VnetIntent, ZoneIntent, ZoneType};
pub use params::{DriftPolicy, Params, Request, SPEC};
pub use report::Report;

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
