//! `FILE \0 DECISIONS`: stanzas applied to a file, twice (deevnet_fuzz_invariants::frr).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::frr::check_stanza_program(data));
