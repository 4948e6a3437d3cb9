//! The one integration-test binary of sysctl_forwarding (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p sysctl_forwarding --test it in_namespace::`.

// Helpers shared with the other module crates' tests live in the runtime's `test_support`
// (feature `test-support`): kill9, module_run, TestNamespace.

mod in_namespace;
mod robustness_crash;
mod robustness_files;
