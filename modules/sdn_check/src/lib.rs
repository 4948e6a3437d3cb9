//! The logic of `sdn_check`: a Proxmox node's SDN intent, derived from the cluster's
//! configuration by the generator's rules (docs/proxmox-sdn.md), and its drift.
//!
//! [`intent`] is what Proxmox declares for one node (zones, VNets, subnets, tenants), pure and
//! derived from files; [`finding`] is one difference between what is declared and what the
//! node has, with its fix in words.

pub mod finding;
pub mod intent;

pub use finding::Finding;
pub use intent::{NodeIntent, SubnetIntent, Tenant, VnetIntent, ZoneIntent, ZoneType};
pub mod kernel_drift;
pub mod node;
pub mod observation;
