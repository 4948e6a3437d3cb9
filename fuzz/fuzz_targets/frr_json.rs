//! `NEIGHBORS \0 SUMMARY \0 VNIS \0 NEXT_HOPS \0 ROUTES`: bgp_evpn_assert's FRR JSON readers and checks (deevnet_fuzz_invariants::frr_json).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::frr_json::check_bytes(data));
