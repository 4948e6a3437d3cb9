//! `JSON \0 DECISIONS`: vrf_route_assert's NAT prediction (deevnet_fuzz_invariants::snat).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::snat::check_bytes(data));
