//! A packet as the workload's raw ICMP socket receives it: egress_probe's echo, ARP and DNS readers (deevnet_fuzz::egress).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| deevnet_fuzz::egress::check_icmp(data));
