//! The shared runtime of the deevnet.net modules.
//!
//! Every module binary is `fn main() { MODULE.run(body) }`: this crate reads Ansible's
//! arguments, validates them against the module's declared [`spec`], hands the body a typed
//! parameter struct and a [`Context`] (check mode, diff mode, warnings), and prints exactly one
//! JSON result, even when the body panics.
//!
//! Mechanisms that more than one module needs live here once: the file-safety policy and its
//! lock ([`file_policy`]), atomic file writes ([`atomic_file`]), sysctl keys and `/proc/sys` access ([`sysctl`]), interface-name rules
//! ([`ifname`]).
//!
//! The advice every fix gives for reloading a node's interfaces is [`advice`]: the words of a
//! file of the collection that its Python filters read too.
//!
//! Also: the argument types and their coercion ([`spec`], [`choice`] for choice options), tools
//! run within a time limit and an output cap ([`bounded_command`]), and what an assertion module
//! does with its findings in check mode ([`findings`]).
//!
//! Features: `netlink` (the shared rtnetlink layer, `netlink`: links, addresses, routes,
//! bridge VLANs and fdb), `ethtool` (features and drivers over generic netlink), `nft` (the
//! nftables reader, `nft`: the ruleset nft prints, typed, and one walker of its jumps), `test-support`
//! (for the module crates' tests, `test_support`: namespaces of the test's own, module runs with
//! arguments on stdin, link fixtures, kill -9 during writes), `test-hooks` (pauses the crash tests
//! widen; never in a release build).
//!
//! Invariants: exactly one JSON result per run ([`Module::run`]); every file a module reads or
//! writes goes through [`file_policy`]; a program run as root is one only root could have
//! planted ([`file_policy::trusted_program`]). Neighbours: every module crate depends on this
//! one, and this one on none of them.

pub mod advice;
pub mod atomic_file;
pub mod bounded_command;
pub mod choice;
pub mod file_policy;
pub mod findings;
pub mod ifname;
#[cfg(feature = "netlink")]
pub mod netlink;
#[cfg(feature = "nft")]
pub mod nft;
pub mod protocol;
pub mod spec;
pub mod sysctl;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;

pub use findings::{CheckModeFindings, Findings, FindingsPolicy, CHECK_MODE_FINDINGS, FINDINGS};
pub use protocol::{report_keys, Context, Failure, FileDiff, Module, Outcome, SECRET_MASK};

// For `choices!`, so that a module crate's enum needs no serde of its own in scope.
#[doc(hidden)]
pub use serde as __serde;
pub use spec::{Kind, OptionSpec};

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
