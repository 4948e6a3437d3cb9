//! The one integration-test binary of sysctl_forwarding (one binary per crate, as ripgrep has:
//! one link instead of one per file). Each former `tests/*.rs` is a module here; filter by
//! its path, e.g. `cargo test -p sysctl_forwarding --test it in_namespace::`.

// Helpers shared with the other module crates' tests live in the runtime's `test_support`
// (feature `test-support`): kill9, module_run, TestNamespace.

// The fuzz crate's invariant code (fuzz/src), included by path: that is how the stable smoke
// tests share it with `make fuzz` (the fuzz crate is outside the workspace). Its files refer
// to each other as `crate::input`, so they sit at this binary's root.
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/input.rs"]
mod input;
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/spec_args.rs"]
mod spec_args;
#[allow(dead_code)] // parts serve only the fuzz targets
#[path = "../../../../fuzz/src/sysctl_d.rs"]
mod sysctl_d;

mod in_namespace;
mod robustness_crash;
mod robustness_files;
mod robustness_fuzz_smoke;
