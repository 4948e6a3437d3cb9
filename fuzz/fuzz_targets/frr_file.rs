//! Arbitrary bytes as frr.conf.local: parse, lint, write back (deevnet_fuzz_invariants::frr).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::frr::check_file_bytes(data));
