//! The stable smoke run of the fuzz targets on frr_local_stanza (`frr_file`, `frr_stanzas`, and
//! `spec_args` with the module's real spec): the seed corpus, the kept regressions and a
//! bounded number of generated inputs through the same invariant code as `make fuzz`
//! (`deevnet_fuzz_invariants`). `DEEVNET_FUZZ_CASES=N` runs N generated inputs instead of the default.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{frr, input, spec_args};

#[test]
fn fuzz_smoke_frr_file() {
    let ran = input::smoke(
        &fuzz_root(),
        "frr_file",
        input::case_count(3000),
        frr::check_file_bytes,
    );
    assert!(ran > 3000 || input::case_count(3000) < 3000);
}

#[test]
fn fuzz_smoke_frr_stanzas() {
    input::smoke(
        &fuzz_root(),
        "frr_stanzas",
        input::case_count(3000),
        frr::check_stanza_program,
    );
}

#[test]
fn fuzz_smoke_spec_args_with_the_real_spec() {
    let spec = &frr_local_stanza::params::SPEC;
    input::smoke(&fuzz_root(), "spec_args", input::case_count(3000), |data| {
        let rest = data.get(1..).unwrap_or_default();
        frr::typed_arguments(spec_args::check_args(
            "deevnet.net.frr_local_stanza",
            spec,
            rest,
        ));
    });
}
