//! A blocked target's verdict from what came back inside the workload and what the node's
//! capture saw: answers dropped at the node are reachability (EP3), a refusal the node made on
//! the way out is blocking (EP4).

use super::probe::{ipv4, reply_to, NONCE};
use crate::frame::{Frame, Markers, ETH_P_IP, PACKET_OUTGOING};
use crate::params::{Expect, Proto, Target};
use crate::probe::echo_request;
use crate::report::{build, build_on_node, Capture, ProbeOutcome, Role, Verdict};
use std::net::{IpAddr, Ipv4Addr};

const WORKLOAD: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 250);
const TARGET: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 8);

fn markers() -> Markers {
    Markers {
        workload: WORKLOAD.into(),
        icmp_id: 0x48bc,
        local_ports: vec![(Proto::Tcp, 20_001)],
    }
}

fn blocked(proto: Proto, port: Option<u16>) -> Target {
    Target {
        address: TARGET.into(),
        proto,
        port,
        expect: Expect::Blocked,
        size: None,
        peer: false,
        via: None,
    }
}

fn frame(bytes: Vec<u8>, outgoing: bool) -> Frame {
    Frame {
        protocol: ETH_P_IP,
        packet_type: if outgoing { PACKET_OUTGOING } else { 0 },
        metadata_tag: None,
        bytes,
    }
}

fn uplink(frames: Vec<Frame>) -> Vec<Capture> {
    vec![
        Capture {
            interface: "uplink".into(),
            role: Role::Egress,
            frames,
            overflowed: false,
        },
        Capture {
            interface: "mgmt".into(),
            role: Role::Forbidden,
            frames: Vec::new(),
            overflowed: false,
        },
    ]
}

/// EP3: the node drops only the target's answers. Its echoes left by the uplink and its
/// replies came back there: the target is reachable, though nothing reached the workload.
#[test]
fn answers_seen_arriving_at_the_node_are_reachability_even_when_the_node_drops_them() {
    let echo = echo_request(0x48bc, 0, &NONCE);
    let request = ipv4(WORKLOAD, TARGET, &echo);
    let reply = reply_to(&echo);
    let silent = ProbeOutcome {
        sent: 2,
        error: Some("no reply".into()),
        ..ProbeOutcome::default()
    };
    let frames = vec![
        frame(request.clone(), true),
        frame(reply.clone(), false),
        frame(request.clone(), true),
        frame(reply, false),
    ];
    let report = build(
        &[blocked(Proto::Icmp, None)],
        std::slice::from_ref(&silent),
        &uplink(frames),
        0,
        &markers(),
    );
    assert_eq!(report.verdict, Verdict::Failed);
    assert!(!report.targets[0].passed);
    assert_eq!(
        report.targets[0].answered_by.as_deref(),
        Some("203.0.113.8")
    );
    assert_eq!(report.targets[0].blocked_by, None);
    assert_eq!(
        report.problems,
        [
            "203.0.113.8 icmp: answers arrived at the node by uplink (2) and were dropped there, \
          before the workload though it must be blocked: the isolation is missing"
        ]
    );
    // Only the requests seen: dropped beyond the node, as before.
    let report = build(
        &[blocked(Proto::Icmp, None)],
        &[silent],
        &uplink(vec![frame(request.clone(), true), frame(request, true)]),
        0,
        &markers(),
    );
    assert_eq!(report.verdict, Verdict::Passed, "{:?}", report.problems);
    assert_eq!(
        report.targets[0].blocked_by.as_deref(),
        Some("dropped beyond the node")
    );
}

/// EP4: a REJECT at the node (a TCP reset in the target's name) while nothing of the probe
/// left the node: blocked by the node, not answered by the target.
#[test]
fn a_refusal_the_node_made_on_the_way_out_is_blocking() {
    let refused = ProbeOutcome {
        sent: 2,
        refused: true,
        error: Some("refused".into()),
        ..ProbeOutcome::default()
    };
    let tcp = blocked(Proto::Tcp, Some(443));
    let report = build_on_node(
        std::slice::from_ref(&tcp),
        std::slice::from_ref(&refused),
        &uplink(Vec::new()),
        0,
        &markers(),
        &[IpAddr::from([10, 20, 50, 22])],
    );
    assert_eq!(report.verdict, Verdict::Passed, "{:?}", report.problems);
    assert_eq!(
        report.targets[0].blocked_by.as_deref(),
        Some("rejected by the node")
    );
    assert_eq!(report.targets[0].answered_by, None);
    // The node's own address refusing is the node answering: the tenant reached its stack.
    let own = Target {
        address: IpAddr::from([10, 20, 50, 22]),
        ..tcp
    };
    let report = build_on_node(
        &[own],
        std::slice::from_ref(&refused),
        &uplink(Vec::new()),
        0,
        &markers(),
        &[IpAddr::from([10, 20, 50, 22])],
    );
    assert_eq!(report.verdict, Verdict::Failed);
    assert_eq!(
        report.targets[0].answered_by.as_deref(),
        Some("10.20.50.22")
    );
    // An echo reply is never a reject, whatever the capture saw.
    let replied = ProbeOutcome {
        sent: 2,
        received: 2,
        rtts_ms: vec![1.0, 1.0],
        ..ProbeOutcome::default()
    };
    let report = build_on_node(
        &[blocked(Proto::Icmp, None)],
        &[replied],
        &uplink(Vec::new()),
        0,
        &markers(),
        &[],
    );
    assert_eq!(
        report.targets[0].answered_by.as_deref(),
        Some("203.0.113.8")
    );
}
