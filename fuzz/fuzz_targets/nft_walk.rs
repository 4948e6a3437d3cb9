//! `JSON \0 DECISIONS`: the runtime's nftables reader and its walker of jumps (deevnet_fuzz_invariants::nft_walk).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::nft_walk::check_bytes(data));
