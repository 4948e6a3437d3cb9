//! Invariants of `egress_probe`'s parsers of received bytes, shared by the libFuzzer targets
//! `egress_frame` and `egress_icmp` and the stable smoke test
//! (`modules/fuzz_invariants/tests/it/egress_probe.rs`). Any bytes a neighbour or the
//! wire can send: no panic, and what the parsers say is what the bytes hold.

use crate::input::Input;
use deevnet_probe_port::bpf::Instruction;
use egress_probe::capture::{self, Recognizer};
use egress_probe::frame::{classify, Direction, Frame, Packet, ETH_P_IP};
use egress_probe::params::Proto;
use egress_probe::probe::{echo_answer, is_dns_answer, Echo, EchoAnswer, PAYLOAD};
// The recorded run's fixture, shared with egress_probe's frame tests; re-exported for the
// smoke tests.
pub use egress_probe::recorded_run::{markers, targets, ICMP_ID, INTERNET, MGMT, WORKLOAD};
use egress_probe::report::{build, ProbeOutcome, Role, Verdict};
use egress_probe::tenant::Interface;
use egress_probe::{arp, probe};

/// The nonce of the corpus's echo replies.
pub const NONCE: [u8; probe::NONCE_LEN] = *b"0123456789abcdef";
const FORBIDDEN: u32 = 3;
const EGRESS: u32 = 4;
const VNET: u32 = 7;

/// Target `egress_frame`: `KIND PACKET`. KIND picks the packet type (outgoing or not), a VLAN
/// tag and the interface; PACKET is the IPv4 packet as a capture socket returns it.
pub fn check_frame(data: &[u8]) {
    let mut input = Input::new(data);
    let kind = input.byte();
    let bytes = input.rest();
    let frame = Frame {
        protocol: ETH_P_IP,
        packet_type: if kind & 1 == 1 { 4 } else { 0 },
        metadata_tag: (kind & 2 == 2).then_some(201),
        bytes: bytes.to_vec(),
    };
    let interface = [FORBIDDEN, EGRESS, VNET][usize::from(kind >> 2) % 3];
    let (targets, markers) = (targets(), markers());
    let parsed = Packet::parse(bytes);
    if let Some(packet) = parsed {
        let address = |range: std::ops::Range<usize>| -> std::net::IpAddr {
            match range.len() {
                4 => <[u8; 4]>::try_from(&bytes[range]).unwrap().into(),
                _ => <[u8; 16]>::try_from(&bytes[range]).unwrap().into(),
            }
        };
        if bytes[0] >> 4 == 6 {
            assert!(bytes.len() >= 40, "{bytes:02x?}");
            assert_eq!(packet.source, address(8..24));
            assert_eq!(packet.destination, address(24..40));
        } else {
            assert!(bytes.len() >= 20 && bytes[0] >> 4 == 4, "{bytes:02x?}");
            assert_eq!(packet.source, address(12..16));
            assert_eq!(packet.destination, address(16..20));
        }
        assert_eq!(packet.icmp.is_some(), packet.proto == Proto::Icmp);
        assert_eq!(packet.ports.is_some(), packet.proto != Proto::Icmp);
    }
    let probe = parsed.and_then(|packet| classify(&packet, &targets, &markers));
    if let Some(probe) = probe {
        let target = &targets[probe.target];
        let (this_side, workload_side) = match probe.direction {
            Direction::Request => (probe.packet.destination, probe.packet.source),
            Direction::Reply => (probe.packet.source, probe.packet.destination),
        };
        assert_eq!(this_side, target.address);
        assert_eq!(probe.packet.proto, target.proto);
        assert_eq!(probe.translated, workload_side != WORKLOAD);
        // The kernel filter must never drop one of the probe's frames.
        let program = capture::filter_program(&markers, &[VNET]);
        if interface != VNET {
            assert!(
                run_filter(&program, bytes, ETH_P_IP, interface),
                "the kernel filter drops a probe frame: {bytes:02x?}"
            );
        }
    }

    let recognizer = Recognizer {
        watched: vec![
            (interface_named(FORBIDDEN, "mgmt"), Role::Forbidden),
            (interface_named(EGRESS, "uplink"), Role::Egress),
        ],
        tagged_ports: None,
        targets: targets.clone(),
        markers: markers.clone(),
    };
    let (mut captures, positions) = capture::empty_captures(&recognizer.watched);
    capture::keep(
        &mut captures,
        &positions,
        &recognizer,
        interface,
        frame.clone(),
    );
    let kept: usize = captures.iter().map(|c| c.frames.len()).sum();
    assert_eq!(
        kept,
        usize::from(probe.is_some() && interface != VNET && !frame.is_tagged())
    );
    let answered = vec![
        ProbeOutcome {
            sent: 1,
            received: 1,
            rtts_ms: vec![1.0],
            error: None,
            ..ProbeOutcome::default()
        };
        targets.len()
    ];
    let report = build(&targets, &answered, &captures, 0, &markers);
    let leaked = report
        .interfaces
        .iter()
        .any(|i| i.role == Role::Forbidden && i.packets > 0);
    if leaked {
        assert_eq!(report.verdict, Verdict::Failed);
    }
    if report.verdict == Verdict::Passed {
        assert!(report.problems.is_empty());
    }
    // A lossy capture is never passed, whatever it kept.
    captures[0].overflowed = true;
    let lossy = build(&targets, &answered, &captures, 1, &markers);
    assert_ne!(lossy.verdict, Verdict::Passed);
}

fn interface_named(index: u32, name: &str) -> Interface {
    Interface {
        index,
        name: name.into(),
    }
}

/// Target `egress_icmp`: a packet as the workload's raw ICMP socket receives it (and as the
/// ARP and DNS readers receive theirs).
pub fn check_icmp(data: &[u8]) {
    for sequence in [0, 1] {
        let echo = Echo {
            target: INTERNET,
            id: ICMP_ID,
            sequence,
            nonce: &NONCE,
            padding: 0,
        };
        match echo_answer(data, &echo) {
            Some(EchoAnswer::Reply) => {
                let header = usize::from(data[0] & 0x0f) * 4;
                assert_eq!(data[12..16], INTERNET.octets());
                let icmp = &data[header..];
                assert_eq!(icmp[0], 0);
                assert_eq!(
                    icmp[4..8],
                    [ICMP_ID.to_be_bytes(), sequence.to_be_bytes()].concat()
                );
                assert_eq!(
                    icmp[8..],
                    [PAYLOAD, &NONCE[..]].concat(),
                    "the nonce came back"
                );
            }
            Some(EchoAnswer::Unreachable(from, _)) | Some(EchoAnswer::FragNeeded(from, _)) => {
                assert_eq!(from.octets(), data[12..16]);
                let quote = [PAYLOAD, &NONCE[..]].concat();
                assert!(
                    data.windows(quote.len()).any(|w| w == quote),
                    "an ICMP error counts only when it quotes the run's nonce"
                );
            }
            None => {}
        }
    }
    if let Some(mac) = arp::answer_for(data, MGMT) {
        assert!(data.len() >= 28);
        assert_eq!(data[8..14], mac);
        assert_eq!(data[14..18], MGMT.octets());
    }
    if is_dns_answer(data, ICMP_ID) {
        assert_eq!(data[..2], ICMP_ID.to_be_bytes());
    }
}

/// A classic BPF interpreter for the instructions the capture's filter uses, as the kernel runs
/// them on a datagram socket's frame (the network header at offset 0): whether it accepts.
pub fn run_filter(program: &[Instruction], packet: &[u8], protocol: u16, ifindex: u32) -> bool {
    let (mut a, mut x, mut pc) = (0u32, 0u32, 0usize);
    let load = |at: u32, size: usize| -> Option<u32> {
        match at {
            0xffff_f000 => return Some(u32::from(protocol)),
            0xffff_f008 => return Some(ifindex),
            _ => {}
        }
        let at = at as usize;
        let bytes = packet.get(at..at.checked_add(size)?)?;
        Some(bytes.iter().fold(0u32, |v, b| v << 8 | u32::from(*b)))
    };
    while let Some(i) = program.get(pc) {
        pc += 1;
        let size = match i.code & 0x18 {
            0x00 => 4,
            0x08 => 2,
            _ => 1,
        };
        match i.code & 0x07 {
            // LD
            0x00 => {
                let at = if i.code & 0xe0 == 0x40 {
                    x.wrapping_add(i.k)
                } else {
                    i.k
                };
                match load(at, size) {
                    Some(v) => a = v,
                    None => return false,
                }
            }
            // LDX MSH
            0x01 => match load(i.k, 1) {
                Some(v) => x = 4 * (v & 0x0f),
                None => return false,
            },
            // ALU AND
            0x04 => a &= i.k,
            // JA: the long jump past the IPv4 block.
            0x05 if i.code & 0xf0 == 0x00 => pc += i.k as usize,
            0x05 => {
                let taken = match i.code & 0xf0 {
                    0x10 => a == i.k,
                    0x20 => a > i.k,
                    0x30 => a >= i.k,
                    0x40 => a & i.k != 0,
                    other => panic!("jump {other:#x} not interpreted"),
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            0x06 => return i.k != 0,
            other => panic!("class {other:#x} not interpreted"),
        }
    }
    panic!("the filter ran off its end")
}
