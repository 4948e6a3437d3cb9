//! Classification and the result, on the frames recorded in tests/recorded/namespace_run.txt
//! (a real run in namespaces) and on variants of them: translated by SNAT, tagged, lost.

use super::workload::hex;
use crate::frame::{classify, Direction, Frame, Packet, ETH_P_IP};
use crate::recorded_run::{markers, targets};
use crate::report::{build, Capture, ProbeOutcome, Role, Verdict};
use std::net::Ipv4Addr;

const SNAT: [u8; 4] = [10, 20, 50, 22];

/// (interface, frame) as recorded.
fn recorded() -> Vec<(String, Frame)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/recorded/namespace_run.txt"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let frame = Frame {
                protocol: ETH_P_IP,
                packet_type: fields[1].parse().unwrap(),
                metadata_tag: None,
                bytes: hex(fields[2]),
            };
            (fields[0].to_string(), frame)
        })
        .collect()
}

fn captures(frames: &[(String, Frame)]) -> Vec<Capture> {
    [("mgmt", Role::Forbidden), ("uplink", Role::Egress)]
        .iter()
        .map(|(name, role)| Capture {
            interface: name.to_string(),
            role: *role,
            frames: frames
                .iter()
                .filter(|(i, _)| i == name)
                .map(|(_, f)| f.clone())
                .collect(),
            overflowed: false,
        })
        .collect()
}

fn answered() -> Vec<ProbeOutcome> {
    vec![
        ProbeOutcome {
            sent: 1,
            received: 1,
            rtts_ms: vec![1.5],
            error: None,
            ..ProbeOutcome::default()
        };
        4
    ]
}

/// SNAT on the way out (source) and on the way back (destination), as the lab's nft rule does.
fn translate(frame: &mut Frame) {
    let at = if frame.is_outgoing() { 12 } else { 16 };
    frame.bytes[at..at + 4].copy_from_slice(&SNAT);
}

#[test]
fn every_recorded_probe_packet_is_recognized_with_its_target_and_direction() {
    let found: Vec<(String, usize, Direction, bool)> = recorded()
        .iter()
        .filter_map(|(interface, frame)| {
            let packet = Packet::parse(&frame.bytes)?;
            classify(&packet, &targets(), &markers())
                .map(|p| (interface.clone(), p.target, p.direction, p.translated))
        })
        .collect();
    use Direction::{Reply, Request};
    let expected = [
        ("uplink", 0, Request),
        ("uplink", 0, Reply),
        ("uplink", 1, Request),
        ("uplink", 1, Reply),
        ("uplink", 1, Request),
        ("uplink", 1, Reply),
        ("uplink", 1, Request),
        ("uplink", 1, Reply),
        ("uplink", 2, Request),
        ("uplink", 2, Reply),
        ("mgmt", 3, Request),
        ("mgmt", 3, Reply),
    ];
    let expected: Vec<(String, usize, Direction, bool)> = expected
        .iter()
        .map(|(i, t, d)| (i.to_string(), *t, *d, false))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn other_traffic_is_not_the_probe() {
    let markers = markers();
    let (_, echo) = &recorded()[0];
    let mut packet = Packet::parse(&echo.bytes).unwrap();
    packet.source = Ipv4Addr::from(SNAT).into();
    packet.icmp = Some((8, 0x1234));
    assert_eq!(
        classify(&packet, &targets(), &markers),
        None,
        "translated, another echo id"
    );
    packet.icmp = Some((8, 0x48bc));
    assert!(classify(&packet, &targets(), &markers).unwrap().translated);
    packet.destination = Ipv4Addr::new(198, 51, 100, 1).into();
    assert_eq!(
        classify(&packet, &targets(), &markers),
        None,
        "not a target"
    );
    assert_eq!(Packet::parse(&echo.bytes[..12]), None, "truncated");
}

#[test]
fn the_recorded_run_leaks_to_mgmt_and_reaches_the_internet_untranslated() {
    let report = build(
        &targets(),
        &answered(),
        &captures(&recorded()),
        0,
        &markers(),
    );
    assert_eq!(report.verdict, Verdict::Failed);
    assert_eq!(
        report.problems,
        ["1 tenant packet left by mgmt untranslated"]
    );
    let mgmt = &report.interfaces[0];
    assert_eq!(
        (
            mgmt.packets,
            mgmt.untranslated,
            mgmt.translated,
            mgmt.replies
        ),
        (1, 1, Some(false), 1)
    );
    assert_eq!(mgmt.sample[0].source, "10.20.129.250");
    let uplink = &report.interfaces[1];
    // icmp, 3 TCP segments of the handshake and close, udp.
    assert_eq!((uplink.packets, uplink.replies), (5, 5));
    assert_eq!(report.targets[3].left_by, ["mgmt"]);
    assert!(
        !report.targets[3].passed,
        "a leak probe fails where it leaks"
    );
    assert!(report.targets[..3]
        .iter()
        .all(|t| t.passed && t.left_by == ["uplink"]));
}

#[test]
fn both_fixes_translated_egress_and_no_leak_pass() {
    let mut frames: Vec<(String, Frame)> = recorded()
        .into_iter()
        .filter(|(i, _)| i == "uplink")
        .collect();
    frames.iter_mut().for_each(|(_, frame)| translate(frame));
    let report = build(
        &targets()[..3],
        &answered()[..3],
        &captures(&frames),
        0,
        &markers(),
    );
    assert_eq!(report.verdict, Verdict::Passed, "{:?}", report.problems);
    assert_eq!(report.interfaces[1].translated, Some(true));
    assert_eq!(report.interfaces[0].packets, 0);
}

#[test]
fn replies_that_arrive_but_never_reach_the_workload_are_named() {
    // State 1 of the incident: out by the transit, replies back on it, none forwarded inside.
    let mut frames: Vec<(String, Frame)> = recorded()
        .into_iter()
        .filter(|(i, _)| i == "uplink")
        .take(2)
        .collect();
    frames.iter_mut().for_each(|(_, frame)| translate(frame));
    let lost = vec![ProbeOutcome {
        sent: 1,
        received: 0,
        rtts_ms: vec![],
        error: Some("no reply".into()),
        ..ProbeOutcome::default()
    }];
    let report = build(&targets()[..1], &lost, &captures(&frames), 0, &markers());
    assert_eq!(
        report.problems,
        [
            "203.0.113.8 icmp: 0/1 replies (no reply) while traffic left by uplink and 1 reply \
          came back to it: replies are not forwarded back"
        ]
    );
    // Without the reply on the wire: nothing came back.
    let report = build(
        &targets()[..1],
        &lost,
        &captures(&frames[..1]),
        0,
        &markers(),
    );
    assert!(report.problems[0].ends_with("while traffic left by uplink: no reply came back"));
    // Nothing seen at all.
    let report = build(&targets()[..1], &lost, &captures(&[]), 0, &markers());
    assert!(
        report.problems[0].contains("no probe packet left by a captured interface (mgmt, uplink)")
    );
}

#[test]
fn tagged_frames_belong_to_their_vlan_device() {
    let mut frames: Vec<(String, Frame)> = recorded()
        .into_iter()
        .filter(|(i, _)| i == "mgmt")
        .collect();
    frames
        .iter_mut()
        .for_each(|(_, frame)| frame.metadata_tag = Some(201));
    let report = build(&targets(), &answered(), &captures(&frames), 0, &markers());
    assert_eq!(report.interfaces[0].packets, 0);
}

#[test]
fn answered_traffic_that_avoided_the_expected_egress_fails() {
    let mut frames: Vec<(String, Frame)> = recorded()
        .into_iter()
        .filter(|(i, _)| i == "uplink")
        .take(2)
        .collect();
    frames
        .iter_mut()
        .for_each(|(name, _)| *name = "mgmt".into());
    let report = build(
        &targets()[..1],
        &answered()[..1],
        &captures(&frames),
        0,
        &markers(),
    );
    assert_eq!(report.problems[0], "203.0.113.8 icmp: 1/1 replies, but no probe packet left by uplink (expect_egress_interface): the traffic took another way");
    assert_eq!(
        report.problems[1],
        "1 tenant packet left by mgmt untranslated"
    );
}
