//! The logic of `sysctl_forwarding`, apart from its I/O: the sysctl.d format as systemd-sysctl
//! reads it ([`sysctl_d`]), which file wins at boot ([`boot`]), and the file this module owns
//! ([`managed_file`]).

pub mod boot;
pub mod managed_file;
pub mod sysctl_d;
