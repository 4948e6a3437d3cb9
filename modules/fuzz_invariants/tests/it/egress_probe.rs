//! The stable smoke run of the fuzz targets on egress_probe (`egress_frame`, `egress_icmp`): the
//! seed corpus (real frames, and the 17-byte ICMP error of issue 29), the kept regressions and
//! a bounded number of generated inputs through the same invariant code as `make fuzz`
//! (`deevnet_fuzz_invariants::egress`). `DEEVNET_FUZZ_CASES=N` runs N generated inputs instead of the
//! default.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{egress, input};
use egress_probe::capture::filter_program;
use egress_probe::probe::{echo_answer, Echo, EchoAnswer};

fn seed(target: &str, name: &str) -> Vec<u8> {
    std::fs::read(fuzz_root().join("corpus").join(target).join(name)).unwrap()
}

#[test]
fn fuzz_smoke_egress_frame() {
    input::smoke(
        &fuzz_root(),
        "egress_frame",
        input::case_count(5000),
        egress::check_frame,
    );
}

#[test]
fn fuzz_smoke_egress_icmp() {
    input::smoke(
        &fuzz_root(),
        "egress_icmp",
        input::case_count(5000),
        egress::check_icmp,
    );
}

/// The corpus means what its names say: the real reply is an answer, the forged one, the
/// short error and an error quoting the public 8 bytes without the nonce are not, and the kernel filter passes every recorded probe frame but the flood.
#[test]
fn the_seeds_are_what_they_are_named() {
    let echo = |sequence| Echo {
        target: egress::INTERNET,
        id: egress::ICMP_ID,
        sequence,
        nonce: &egress::NONCE,
        padding: 0,
    };
    let answer = |name: &str, sequence| echo_answer(&seed("egress_icmp", name), &echo(sequence));
    assert_eq!(answer("echo-reply-with-nonce", 0), Some(EchoAnswer::Reply));
    assert_eq!(answer("forged-reply-without-nonce", 0), None);
    assert_eq!(answer("unreachable-quoting-17-bytes", 0), None);
    assert!(matches!(
        answer("unreachable-quoting-the-request", 1),
        Some(EchoAnswer::Unreachable(_, _))
    ));
    assert_eq!(answer("unreachable-quoting-8-bytes", 1), None);

    let program = filter_program(&egress::markers(), &[7]);
    let passes = |name: &str, ifindex| {
        let frame = seed("egress_frame", name);
        egress::run_filter(&program, &frame[1..], 0x0800, ifindex)
    };
    for n in 0..12 {
        let name = std::fs::read_dir(fuzz_root().join("corpus/egress_frame"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|f| f.starts_with(&format!("recorded-{n:02}-")))
            .unwrap();
        assert!(passes(&name, 3), "{name}");
    }
    assert!(passes("translated-uplink-out", 4));
    assert!(!passes("flood-toward-target-mgmt-out", 3));
    assert!(!passes("fragment-mgmt-out", 3));
    assert!(
        !passes("recorded-00-uplink-out", 7),
        "the VNet side is dropped"
    );
    assert!(
        !egress::run_filter(&program, &[0; 40], 0x86dd, 3),
        "not IPv4"
    );
}
