//! What deevnet.net's probe modules (`egress_probe`, `qinq_probe`) share: a port plugged into a
//! node's bridge from a namespace of this process, and the raw sockets that send and capture
//! through it.
//!
//! - [`namespace`]: the workload's network namespace, held by this process alone, so the kernel
//!   removes it and every veth end inside on any way out, kill -9 included;
//! - [`veth`]: the veth pair into it, its node end marked with the run's [`mark::Mark`] and
//!   removed by a guard; a later run's sweep of what a dead run left behind;
//! - [`mark`]: who made a probe interface, and whether that run is verifiably over;
//! - [`sock`]: the socket calls std has no type for; [`bpf`]: capture filters.
//!
//! Entry points: [`namespace::Namespace`] for the workload, [`veth`] to plug it in and sweep,
//! [`sock`] and [`bpf`] for its frames.
//!
//! Invariant: nothing here deletes an interface that does not carry a mark this code wrote, of
//! this run or of a run that is verifiably over. Neighbours: [`deevnet_runtime`] (its netlink
//! layer) below; `egress_probe` and `qinq_probe` above.

pub mod bpf;
pub mod mark;
pub mod namespace;
pub mod sock;
pub mod veth;
