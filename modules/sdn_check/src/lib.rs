//! The logic of `sdn_check`: a Proxmox node's SDN intent, derived from the cluster's
//! configuration by the generator's rules (docs/proxmox-sdn.md), and its drift.
//!
//! [`intent`] is what Proxmox declares for one node (zones, VNets, subnets, tenants), pure and
//! derived from files; [`finding`] is one difference between what is declared and what the
//! node has, with its fix in words.
//!
//! The kernel side: [`observation`] is what the kernel has of what the intent names (pure
//! data), [`node::observe`] reads it over netlink and /proc/sys, and
//! [`kernel_drift::kernel_drift`] compares the two, one finding per difference.

pub mod finding;
pub mod intent;
pub mod kernel_drift;
pub mod node;
pub mod observation;

pub use finding::Finding;
pub use intent::{NodeIntent, SubnetIntent, Tenant, VnetIntent, ZoneIntent, ZoneType};
