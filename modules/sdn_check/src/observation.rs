//! PLACEHOLDER of branch sdnintent, REPLACED AT MERGE by helper sdnkernel's `observation.rs`
//! (the contract: docs in /work/notes/sdn-contract.md). What the kernel has, as pure types.
//! Here it holds nothing, because this branch observes nothing ([`crate::node::observe`]
//! refuses `kernel: true`).

/// What the kernel has for the node's SDN devices (sdnkernel's version holds it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelView {}
