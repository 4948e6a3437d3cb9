//! `JSON \0 TEXT \0 DECISIONS`: qinq_check's nftables ruleset reader and guard (deevnet_fuzz_invariants::nft).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::nft::check_bytes(data));
