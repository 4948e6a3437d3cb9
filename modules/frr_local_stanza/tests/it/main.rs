//! The one integration-test binary of frr_local_stanza (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p frr_local_stanza --test it module::`.

// Helpers shared with the other module crates' tests live in the runtime's `test_support`
// (feature `test-support`): kill9, module_run, TestNamespace.

// The fuzz crate's invariant code (fuzz/src), included by path: that is how the stable smoke
// tests share it with `make fuzz` (the fuzz crate is outside the workspace). Its files refer
// to each other as `crate::input`, so they sit at this binary's root.
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/frr.rs"]
mod frr;
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/input.rs"]
mod input;
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/spec_args.rs"]
mod spec_args;

mod module;
mod ownership;
mod ownership_hostile;
mod robustness;
mod robustness_concurrency;
mod robustness_crash;
mod robustness_files;
mod robustness_fuzz_smoke;
mod robustness_regressions;
mod vectors;
