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

#[cfg(test)]
mod tests;
