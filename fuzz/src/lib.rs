//! The invariants behind deevnet.net's fuzz targets. Each module here is also compiled into a
//! stable smoke test of the crate it checks (`#[path]` includes in
//! `modules/*/tests/it/robustness_fuzz_smoke.rs`), so `make test` and `make fuzz` hold the code to
//! the same rules. See TESTING.md.

pub mod egress;
pub mod frr;
pub mod input;
pub mod spec_args;
pub mod specs;
pub mod sysctl_d;
