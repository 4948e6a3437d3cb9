//! The stable smoke run of the fuzz targets on this crate (`frr_file`, `frr_stanzas`, and
//! `spec_args` with the module's real spec): the seed corpus, the kept regressions and a
//! bounded number of generated inputs through the same invariant code as `make fuzz`
//! (`fuzz/src/`). `DEEVNET_FUZZ_CASES=N` runs N generated inputs instead of the default.

use crate::{frr, input, spec_args};
use std::path::{Path, PathBuf};

fn fuzz_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

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
