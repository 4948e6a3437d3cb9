//! `frr_local_stanza`: FRR stanzas in `/etc/frr/frr.conf.local`, safe against Proxmox VE's
//! merge of that file into the `frr.conf` it generates.
//!
//! The FRR model and the lint follow `docs/proxmox-frr-merge.md` ("the spec"):
//! * [`grammar`]: what a line is to `frr-reload.py` (A.2) and to Proxmox's merge (B.3, B.4);
//! * [`parse`]: the file as frr-reload's tree of contexts, with source line ranges (A.3, A.5);
//! * [`stanza`]: the `stanzas` option and its checks;
//! * [`edit`]: applying stanzas, rendering them in the portable profile (C.1);
//! * [`rules`] and [`lint`]: Proxmox's merge in both parser generations, one rule per trap;
//! * [`validate`]: the `validate` command;
//! * [`ownership`]: what an `owner` wrote, recorded outside the file, taken back when dropped;
//! * [`secrets`]: passwords and keys, masked in everything the module returns;
//! * [`report`]: the result keys, the lint's verdict on the whole file, the summary;
//! * [`node`]: the file side of one run ([`node::apply`]): lock, read, validate, write.
//!
//! Entry points: [`params::Request::from_params`] checks the options before any file is read,
//! [`node::apply`] runs a checked request on the node (the binary masks its result); the pure
//! core, [`edit::apply`] and [`lint::lint`], is what the fuzz targets call.
//!
//! Invariants: nothing is written until every check passed (`lint=error`, `validate`); the file
//! is resolved by [`deevnet_runtime::file_policy`], locked, and replaced through
//! [`deevnet_runtime::atomic_file`]; nothing an owner did not write is taken back; every
//! secret is masked in what the module returns. Neighbours: [`deevnet_runtime`]; the crate
//! `deevnet_fuzz_invariants` fuzzes its parser, edit and lint.

pub mod edit;
pub mod grammar;
pub mod lint;
pub mod node;
pub mod ownership;
pub mod params;
pub mod parse;
pub mod report;
pub mod rules;
pub mod secrets;
pub mod stanza;
pub mod validate;

#[cfg(test)]
thread_local! {
    /// Pieces, entries and lines looked at by the work whose cost must stay linear (placing
    /// new stanzas, the owner's bookkeeping): the cost the tests bound, in steps, not time.
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[inline]
fn count_step() {
    #[cfg(test)]
    STEPS.with(|steps| steps.set(steps.get() + 1));
}

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
