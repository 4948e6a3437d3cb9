//! `RUNNING_CONFIG \0 INTERFACES \0 CFG \0 DECISIONS`: sdn_check's readers and derivation (deevnet_fuzz_invariants::sdn).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::sdn::check_bytes(data));
