//! The one integration-test binary of frr_local_stanza (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p frr_local_stanza --test it module::`.

// Helpers shared with the other module crates' tests live in the runtime's `test_support`
// (feature `test-support`): kill9, module_run, TestNamespace.

mod module;
mod ownership;
mod ownership_hostile;
mod robustness;
mod robustness_concurrency;
mod robustness_crash;
mod robustness_files;
mod robustness_regressions;
mod vectors;
