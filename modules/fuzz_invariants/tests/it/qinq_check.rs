//! The stable smoke run of the fuzz target `nft_ruleset` on qinq_check's nftables audit: the
//! seed corpus (nft 1.0.6's listings recorded in modules/qinq_check/tests/data/nft-1.0.6, see
//! fuzz/corpus/nft_ruleset), the kept regressions and a bounded number of generated inputs
//! through the same invariant code as `make fuzz`. `DEEVNET_FUZZ_CASES=N` runs N generated inputs.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{input, nft};
use qinq_check::guest_ports::Ruleset;

#[test]
fn fuzz_smoke_nft_ruleset() {
    input::smoke(
        &fuzz_root(),
        "nft_ruleset",
        input::case_count(3000),
        nft::check_bytes,
    );
}

/// The seeds reach the invariants past the reader: the guard seed is installed (so the
/// dormant and partial variants of it are checked), the dormant ones and the set of literal
/// names are not.
#[test]
fn the_seeds_read_as_recorded() {
    let folder = fuzz_root().join("corpus/nft_ruleset");
    let installed = |seed: &str| {
        let data = std::fs::read(folder.join(seed)).expect("a corpus file");
        let (json, rest) = input::split_at_nul(&data);
        let (text, _) = input::split_at_nul(rest);
        let ruleset = deevnet_runtime::nft::Ruleset::parse_listings(
            &String::from_utf8_lossy(json),
            &String::from_utf8_lossy(text),
        )
        .expect("a seed's JSON parses");
        Ruleset::Read(ruleset).guard_installed()
    };
    assert!(installed("guard"));
    assert!(!installed("guard-dormant"));
    assert!(!installed("dormant-rule-flag-misprinted"));
    // QG1: the guard's table with its patterns in one set, as nft 1.0.6 lists the literal names.
    assert!(!installed("set-guard-literals"));
}
