//! `KIND PACKET`: a captured frame through egress_probe's parser, classification, capture and verdict (deevnet_fuzz::egress).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz::egress::check_frame(data));
