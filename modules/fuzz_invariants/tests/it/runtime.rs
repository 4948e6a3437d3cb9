//! The stable smoke run of the fuzz target `spec_args` on the runtime's argument validation,
//! with a spec that uses every kind of option (no_log ones among them): the seed corpus, the
//! kept regressions and a bounded number of generated inputs through the same invariant code as
//! `make fuzz` (`deevnet_fuzz_invariants`). `DEEVNET_FUZZ_CASES=N` runs N generated inputs.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{input, nft_walk, spec_args};

#[test]
fn fuzz_smoke_spec_args_with_every_kind_of_option() {
    input::smoke(&fuzz_root(), "spec_args", input::case_count(5000), |data| {
        spec_args::check_args(
            "deevnet.net.probe",
            &spec_args::REPRESENTATIVE,
            data.get(1..).unwrap_or_default(),
        );
    });
}

/// The stable smoke run of the fuzz target `nft_walk` on the runtime's nftables reader and its
/// walker of jumps.
#[test]
fn fuzz_smoke_nft_walk() {
    input::smoke(
        &fuzz_root(),
        "nft_walk",
        input::case_count(3000),
        nft_walk::check_bytes,
    );
}
