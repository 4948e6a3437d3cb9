//! The logic of `sysctl_forwarding` (the binary keeps the protocol and the writes).
//!
//! - [`params`]: the options ([`SPEC`], [`Params`]) and the validated [`Request`].
//! - The pure core: the sysctl.d format as systemd-sysctl reads it ([`sysctl_d`]), which file
//!   wins at boot ([`boot`]; its folder scan reads files), the file this module owns
//!   ([`managed_file`]), the result's keys and summary ([`report`]).
//! - The node's side ([`node`]): the files and `/proc/sys` values read to plan the run and
//!   to report it.
//!
//! Invariants: nothing is written until every check passed (the boot conflict included); the
//! file is replaced through the runtime's [`deevnet_runtime::atomic_file`] under its lock; the
//! values reported are read back from `/proc/sys`. Neighbours: [`deevnet_runtime`] only.

pub mod boot;
pub mod managed_file;
pub mod node;
pub mod params;
pub mod report;
pub mod sysctl_d;

pub use params::{BootConflict, Options, Params, Request, State, SPEC};

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
