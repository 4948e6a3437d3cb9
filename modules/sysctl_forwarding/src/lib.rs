//! The logic of `sysctl_forwarding` (the binary keeps the protocol and the writes): the sysctl.d
//! format as systemd-sysctl reads it ([`sysctl_d`]), which file wins at boot ([`boot`]), the
//! file this module owns ([`managed_file`]), and one run's parameters, plan, boot-conflict
//! check, reports and summary ([`run`]).

pub mod boot;
pub mod managed_file;
pub mod run;
pub mod sysctl_d;
