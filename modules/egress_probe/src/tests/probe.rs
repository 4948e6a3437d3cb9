//! Issue 29, items 2, 6 and 7: what counts as an answer, what the capture keeps, and when the
//! verdict may say `passed`.

use super::workload::hex;
use crate::capture::{empty_captures, filter_program, keep, Recognizer};
use crate::frame::{Frame, Markers, ETH_P_IP, PACKET_OUTGOING};
use crate::params::{Expect, Proto, Target};
use crate::probe::{echo_answer, echo_request, identity, Echo, EchoAnswer, Settings, PAYLOAD};
use crate::report::MAX_FRAMES;
use crate::report::{build, Capture, ProbeOutcome, Role, Verdict};
use crate::tenant::Interface;
use std::net::Ipv4Addr;
use std::time::Duration;

const WORKLOAD: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 250);
const INTERNET: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 8);
const MGMT: Ipv4Addr = Ipv4Addr::new(10, 20, 99, 5);
pub(super) const NONCE: [u8; 16] = *b"0123456789abcdef";

pub(super) fn echo(sequence: u16) -> Echo<'static> {
    Echo {
        target: INTERNET,
        id: 0x48bc,
        sequence,
        nonce: &NONCE,
        padding: 0,
    }
}

/// An IPv4 header from `source` to `destination` for `payload` (protocol ICMP).
pub(super) fn ipv4(source: Ipv4Addr, destination: Ipv4Addr, payload: &[u8]) -> Vec<u8> {
    let mut packet = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0];
    packet[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    packet.extend_from_slice(&source.octets());
    packet.extend_from_slice(&destination.octets());
    packet.extend_from_slice(payload);
    packet
}

/// The reply a target sends to `request`.
pub(super) fn reply_to(request: &[u8]) -> Vec<u8> {
    let mut icmp = request.to_vec();
    icmp[0] = 0;
    ipv4(INTERNET, WORKLOAD, &icmp)
}

#[test]
fn a_reply_must_carry_the_identifier_sequence_and_nonce_of_the_request() {
    let request = echo_request(0x48bc, 7, &NONCE);
    assert_eq!(&request[..2], &[8, 0]);
    assert_eq!(
        deevnet_probe_port::sock::internet_checksum(&request),
        0,
        "the checksum covers the message"
    );
    assert_eq!(&request[8..], [PAYLOAD, &NONCE[..]].concat());
    let reply = reply_to(&request);
    assert_eq!(echo_answer(&reply, &echo(7)), Some(EchoAnswer::Reply));
    assert_eq!(echo_answer(&reply, &echo(6)), None, "another sequence");
    let other_id = Echo {
        id: 0x48bd,
        ..echo(7)
    };
    assert_eq!(echo_answer(&reply, &other_id), None, "another id");
    let other_target = Echo {
        target: MGMT,
        ..echo(7)
    };
    assert_eq!(echo_answer(&reply, &other_target), None, "another source");
}

/// Item 7: a neighbour spraying echo replies for every identifier cannot know the nonce. This
/// is the forged reply (the payload of the probe before the nonce) that once counted.
#[test]
fn forged_replies_without_the_nonce_are_no_answer() {
    let mut forged = vec![0, 0, 0, 0, 0x48, 0xbc, 0, 7];
    forged.extend_from_slice(PAYLOAD);
    assert_eq!(
        echo_answer(&ipv4(INTERNET, WORKLOAD, &forged), &echo(7)),
        None
    );
    let mut wrong_nonce = echo_request(0x48bc, 7, b"fedcba9876543210");
    wrong_nonce[0] = 0;
    assert_eq!(
        echo_answer(&ipv4(INTERNET, WORKLOAD, &wrong_nonce), &echo(7)),
        None
    );
    let truncated = &reply_to(&echo_request(0x48bc, 7, &NONCE))[..20 + 8 + PAYLOAD.len()];
    assert_eq!(echo_answer(truncated, &echo(7)), None, "nonce cut off");
}

/// Item 6, the exact frame: a neighbour's destination-unreachable quoting only 17 bytes of
/// the packet (less than the quoted IP header). It aborted the module at probe.rs:150.
pub const SHORT_UNREACHABLE: &str = "4500002d000000004001000a0a14810a0a1481fa\
                                     0301fcfe00000000\
                                     450000340000000040010000 0a1481fa cb";

#[test]
fn a_short_icmp_error_quoting_17_bytes_is_no_answer_and_no_crash() {
    let frame = hex(&SHORT_UNREACHABLE.replace(' ', ""));
    assert_eq!(frame.len(), 20 + 8 + 17);
    assert_eq!(echo_answer(&frame, &echo(0)), None);
    // Every shorter cut of it and of a full answer: no read beyond the bytes.
    let request = echo_request(0x48bc, 7, &NONCE);
    let mut full = hex("45000038000000004001000a0a14320a0a1481fa");
    full.extend_from_slice(&[3, 1, 0, 0, 0, 0, 0, 0]);
    full.extend(hex("4500003400000000400100000a1481facb007108"));
    full.extend_from_slice(&request[..8 + crate::probe::PAYLOAD.len() + NONCE.len()]);
    assert_eq!(
        echo_answer(&full, &echo(7)),
        Some(EchoAnswer::Unreachable(Ipv4Addr::new(10, 20, 50, 10), 1))
    );
    for packet in [&frame, &full, &reply_to(&request)] {
        for len in 0..packet.len() {
            let _ = echo_answer(&packet[..len], &echo(7));
        }
    }
    // A quoted header length below 20 or a header length of 0 reads nothing either.
    let mut odd = full.clone();
    odd[28] = 0x41;
    assert_eq!(echo_answer(&odd, &echo(7)), None);
    odd[0] = 0x40;
    assert_eq!(echo_answer(&odd, &echo(7)), None);
}

#[test]
fn each_run_has_its_own_nonce_and_planned_ports() {
    let t = |proto, port| Target {
        address: INTERNET.into(),
        proto,
        port,
        expect: Expect::Reply,
        size: None,
        peer: false,
        via: None,
    };
    let targets = [
        t(Proto::Icmp, None),
        t(Proto::Tcp, Some(443)),
        t(Proto::Udp, Some(53)),
    ];
    let settings = Settings {
        workload: WORKLOAD.into(),
        count: 3,
        timeout: Duration::from_secs(1),
        mtu: 1500,
    };
    let first = identity(&targets, settings, 0x48bc).unwrap();
    let second = identity(&targets, settings, 0x48bc).unwrap();
    assert_ne!(first.nonce, second.nonce);
    let ports: Vec<(Proto, u16)> = first.markers.local_ports.clone();
    assert_eq!(ports.len(), 4, "3 TCP attempts, 1 UDP socket: {ports:?}");
    assert_eq!(
        ports.iter().filter(|(p, _)| *p == Proto::Tcp).count(),
        3,
        "{ports:?}"
    );
    for (i, (_, port)) in ports.iter().enumerate() {
        assert!((10_000..32_000).contains(port), "{port}");
        assert_eq!(*port, ports[0].1 + i as u16, "consecutive");
    }
    let filter = filter_program(&first.markers, &[]);
    assert!(
        filter.len() < 64,
        "the filter's size does not grow with the targets"
    );
    let per_interface = filter_program(&first.markers, &[1, 2, 3]).len() - filter.len();
    assert_eq!(per_interface, 6, "two instructions per unwatched interface");
    let many: Vec<u32> = (0..5_000).collect();
    assert!(
        filter_program(&first.markers, &many).len() < 4_096,
        "BPF_MAXINSNS"
    );
}

fn markers() -> Markers {
    Markers {
        workload: WORKLOAD.into(),
        icmp_id: 0x48bc,
        local_ports: vec![(Proto::Tcp, 20_001)],
    }
}

fn targets() -> Vec<Target> {
    vec![
        Target {
            address: INTERNET.into(),
            proto: Proto::Icmp,
            port: None,
            expect: Expect::Reply,
            size: None,
            peer: false,
            via: None,
        },
        Target {
            address: MGMT.into(),
            proto: Proto::Icmp,
            port: None,
            expect: Expect::None,
            size: None,
            peer: false,
            via: None,
        },
    ]
}

pub(super) fn outgoing(bytes: Vec<u8>) -> Frame {
    Frame {
        protocol: ETH_P_IP,
        packet_type: PACKET_OUTGOING,
        metadata_tag: None,
        bytes,
    }
}

fn interface(index: u32, name: &str) -> Interface {
    Interface {
        index,
        name: name.into(),
    }
}

/// Item 2: a flood toward a target on a forbidden interface is not the probe's and never fills
/// the cap; the probe's own leak is kept after it.
#[test]
fn unrelated_traffic_toward_a_target_never_fills_the_cap() {
    let recognizer = Recognizer {
        watched: vec![
            (interface(3, "mgmt"), Role::Forbidden),
            (interface(4, "uplink"), Role::Egress),
        ],
        tagged_ports: None,
        targets: targets(),
        markers: markers(),
    };
    let (mut captures, positions) = empty_captures(&recognizer.watched);
    // The node's own pings toward the leak target, another identifier.
    let mut flood = echo_request(0x1234, 0, &NONCE);
    flood[0] = 8;
    let flood = ipv4(Ipv4Addr::new(10, 20, 99, 22), MGMT, &flood);
    for _ in 0..MAX_FRAMES + 5_000 {
        keep(
            &mut captures,
            &positions,
            &recognizer,
            3,
            outgoing(flood.clone()),
        );
    }
    let leak = ipv4(WORKLOAD, MGMT, &echo_request(0x48bc, 0, &NONCE));
    keep(
        &mut captures,
        &positions,
        &recognizer,
        3,
        outgoing(leak.clone()),
    );
    keep(&mut captures, &positions, &recognizer, 3, outgoing(leak));
    // Unwatched interfaces (the VNet, the probe's veth) are not kept at all.
    keep(&mut captures, &positions, &recognizer, 9, outgoing(flood));
    assert_eq!(captures[0].frames.len(), 2);
    assert!(!captures[0].overflowed);
    let report = build(
        &targets()[1..],
        &[ProbeOutcome {
            sent: 2,
            ..ProbeOutcome::default()
        }],
        &captures,
        0,
        &markers(),
    );
    assert_eq!(report.verdict, Verdict::Failed);
    assert_eq!(
        report.problems,
        ["2 tenant packets left by mgmt untranslated"]
    );
}

fn capture(name: &str, role: Role, frames: Vec<Frame>, overflowed: bool) -> Capture {
    Capture {
        interface: name.into(),
        role,
        frames,
        overflowed,
    }
}

fn answered() -> Vec<ProbeOutcome> {
    vec![ProbeOutcome {
        sent: 1,
        received: 1,
        rtts_ms: vec![1.0],
        error: None,
        ..ProbeOutcome::default()
    }]
}

/// Item 2: a capture that overflowed or dropped frames may have missed a leak: never `passed`.
#[test]
fn an_overflowed_or_lossy_capture_is_never_passed() {
    let request = ipv4(WORKLOAD, INTERNET, &echo_request(0x48bc, 0, &NONCE));
    let egress = || {
        capture(
            "uplink",
            Role::Egress,
            vec![outgoing(request.clone())],
            false,
        )
    };
    let clean = build(
        &targets()[..1],
        &answered(),
        &[capture("mgmt", Role::Forbidden, vec![], false), egress()],
        0,
        &markers(),
    );
    assert_eq!(clean.verdict, Verdict::Passed, "{:?}", clean.problems);

    let overflowed = build(
        &targets()[..1],
        &answered(),
        &[capture("mgmt", Role::Forbidden, vec![], true), egress()],
        0,
        &markers(),
    );
    assert_eq!(overflowed.verdict, Verdict::Inconclusive);
    assert_eq!(overflowed.capture.overflowed, ["mgmt"]);
    assert!(
        overflowed.problems[0].starts_with(&format!(
            "the capture is incomplete (more than {MAX_FRAMES} probe frames crossed mgmt)"
        )),
        "{:?}",
        overflowed.problems
    );

    let dropped = build(
        &targets()[..1],
        &answered(),
        &[capture("mgmt", Role::Forbidden, vec![], false), egress()],
        3,
        &markers(),
    );
    assert_eq!(dropped.verdict, Verdict::Inconclusive);
    assert!(dropped.problems[0].contains("the kernel dropped 3 captured frames"));

    // Lossy and failing: failed, with both said.
    let failing = build(
        &targets()[..1],
        &[ProbeOutcome {
            sent: 1,
            ..ProbeOutcome::default()
        }],
        &[capture("mgmt", Role::Forbidden, vec![], true), egress()],
        1,
        &markers(),
    );
    assert_eq!(failing.verdict, Verdict::Failed);
    assert_eq!(failing.problems.len(), 2, "{:?}", failing.problems);
    assert_eq!(
        serde_json::to_value(&failing).unwrap()["verdict"],
        serde_json::json!("failed")
    );
    assert_eq!(
        serde_json::to_value(&dropped).unwrap()["verdict"],
        serde_json::json!("inconclusive")
    );
}

/// Item 7: without expect_egress_interface, replies prove egress only with probe packets seen
/// leaving by an interface that is not forbidden.
#[test]
fn without_an_expected_egress_replies_alone_prove_nothing() {
    let request = ipv4(WORKLOAD, INTERNET, &echo_request(0x48bc, 0, &NONCE));
    let mgmt = || capture("mgmt", Role::Forbidden, vec![], false);
    let nothing_left = build(&targets()[..1], &answered(), &[mgmt()], 0, &markers());
    assert_eq!(nothing_left.verdict, Verdict::Failed);
    assert_eq!(
        nothing_left.problems,
        [
            "203.0.113.8 icmp: 1/1 replies, but no probe packet left the node by an interface \
          that is not forbidden: the replies did not come from beyond the node"
        ]
    );
    let left = build(
        &targets()[..1],
        &answered(),
        &[
            mgmt(),
            capture("eth1", Role::Other, vec![outgoing(request)], false),
            capture("eth2", Role::Other, vec![], false),
        ],
        0,
        &markers(),
    );
    assert_eq!(left.verdict, Verdict::Passed, "{:?}", left.problems);
    assert_eq!(left.targets[0].left_by, ["eth1"]);
    let listed: Vec<&str> = left.interfaces.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(listed, ["mgmt", "eth1"], "other interfaces only where seen");
}
