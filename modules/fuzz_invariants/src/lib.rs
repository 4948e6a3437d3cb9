//! The invariants behind deevnet.net's fuzz targets: for each target, what must hold for any
//! input (each function panics, with the input in its message, when an invariant breaks).
//! Two users: the libFuzzer targets in `fuzz/fuzz_targets/` (cargo fuzz, `make fuzz`), and this
//! crate's own integration tests, the stable smoke run (`make fuzz-smoke`, part of
//! `cargo test --workspace`), so both hold the code to the same rules. See TESTING.md.
//!
//! Entry points: one module per module under test, each with a function per target:
//! [`frr`] and [`frr_json`] (`frr_local_stanza`, `bgp_evpn_assert`), [`egress`], [`nft`]
//! (`qinq_check`), [`nft_walk`] (the runtime's nftables reader and walker), [`sdn`], [`snat`]
//! (`vrf_route_assert`'s NAT prediction), [`sysctl_d`], and [`spec_args`] over every spec
//! [`specs`] lists;
//! [`input`] reads a fuzz input as decisions, the same way for both users.
//!
//! Neighbours: it depends on the module crates it checks ([`specs`] takes their `SPEC`s), no
//! module crate depends on it, and `fuzz/` is its only user besides its own tests.

pub mod egress;
pub mod frr;
pub mod frr_json;
pub mod input;
pub mod nft;
pub mod nft_walk;
pub mod sdn;
pub mod snat;
pub mod spec_args;
pub mod specs;
pub mod sysctl_d;
