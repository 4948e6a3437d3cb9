//! `FILE \0 DECISIONS`: stanzas applied to a file, twice (deevnet_fuzz::frr).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz::frr::check_stanza_program(data));
