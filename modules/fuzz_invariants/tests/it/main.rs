//! The one integration-test binary of deevnet_fuzz_invariants: the stable smoke run of every
//! fuzz target (its seed corpus in fuzz/corpus/TARGET, the kept regressions in
//! fuzz/regressions/TARGET and a bounded number of generated inputs), one module per crate the
//! targets check. Filter by it, e.g. `cargo test -p deevnet_fuzz_invariants --test it frr_local_stanza::`.

mod bgp_evpn_assert;
mod egress_probe;
mod frr_local_stanza;
mod qinq_check;
mod runtime;
mod sdn_check;
mod sysctl_forwarding;
mod vrf_route_assert;

use std::path::{Path, PathBuf};

/// `fuzz/`, where the corpora and kept regressions live.
pub fn fuzz_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}
