//! The stable smoke run of the fuzz target `snat_predict` on vrf_route_assert's NAT prediction.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{input, snat};

#[test]
fn fuzz_smoke_snat_predict() {
    input::smoke(
        &fuzz_root(),
        "snat_predict",
        input::case_count(3000),
        snat::check_bytes,
    );
}
