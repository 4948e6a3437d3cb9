//! The logic of `change_guard`: one guarded change on one node.
//!
//! - [`params`]: the options ([`SPEC`], [`Params`]) and the validated [`Request`].
//! - [`state_dir`]: the guard's own folder, refused when anyone but root could have planted
//!   what it holds; [`records`]: the lock and the switch as JSON there.
//! - [`snapshot`]: the files a change may touch, recorded and put back; [`restore`]: a restore
//!   and the reload commands it calls for.
//! - [`switch`]: what fires the switch (a transient systemd timer when systemd is PID 1, else a
//!   detached process of this binary), its command lines as data, and the identity of its
//!   process; [`arming`]: `state=armed` and the switch's end.
//! - [`guard`]: one module run, state by state; [`expire`]: the binary's modes outside
//!   Ansible, the switch firing (`--expire`) and the boot (`--boot`).
//! - [`report`]: the result's keys.
//!
//! Invariants: every run on a node holds the runtime's lock on `<state_dir>/lock` while it
//! reads and writes the guard's records, the switch too when it fires; every check that can
//! refuse (the options, `state_dir`'s owner and mode, the lock's holder, the paths, the reload
//! programs) runs before the first write; the switch is signalled only while `/proc` shows the
//! very process recorded (pid, start time, command line). Neighbours: [`deevnet_runtime`].

pub mod arming;
pub mod expire;
pub mod guard;
pub mod params;
pub mod records;
pub mod report;
pub mod restore;
pub mod snapshot;
pub mod state_dir;
pub mod switch;

pub use params::{Params, Request, State, SPEC};

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
