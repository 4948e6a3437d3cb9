//! The invariants behind deevnet.net's fuzz targets: for each target, what must hold for any
//! input (each function panics, with the input in its message, when an invariant breaks).
//! Two users: the libFuzzer targets in `fuzz/fuzz_targets/` (cargo fuzz, `make fuzz`), and this
//! crate's own integration tests, the stable smoke run (`make fuzz-smoke`, part of
//! `cargo test --workspace`), so both hold the code to the same rules. See TESTING.md.
//!
//! Neighbours: it depends on the module crates it checks ([`specs`] takes their `SPEC`s), no
//! module crate depends on it, and `fuzz/` is its only user besides its own tests.

pub mod egress;
pub mod frr;
pub mod frr_json;
pub mod input;
pub mod nft;
pub mod sdn;
pub mod spec_args;
pub mod specs;
pub mod sysctl_d;
