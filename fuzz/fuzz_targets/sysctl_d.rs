//! `FILE \0 DECISIONS`: the sysctl.d reader and the module's writer (deevnet_fuzz_invariants::sysctl_d).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz_invariants::sysctl_d::check_bytes(data));
