//! The run's lifecycle without a kernel: a probe that sent nothing. (What marks a probe's
//! interfaces and which of them a later run may sweep: deevnet_probe_port's tests.)

use crate::params::{Expect, Proto, Target};
use crate::report::{build, Capture, ProbeOutcome, Role, Verdict};
use std::net::Ipv4Addr;

#[test]
fn a_leak_probe_that_sent_nothing_proves_nothing() {
    let target = |address: Ipv4Addr, expect| Target {
        size: None,
        peer: false,
        via: None,
        address: address.into(),
        proto: Proto::Icmp,
        port: None,
        expect,
    };
    let targets = [
        target(Ipv4Addr::new(203, 0, 113, 8), Expect::Reply),
        target(Ipv4Addr::new(10, 20, 99, 5), Expect::None),
    ];
    let outcomes = [
        ProbeOutcome {
            sent: 2,
            received: 2,
            rtts_ms: vec![1.0, 1.0],
            error: None,
            ..ProbeOutcome::default()
        },
        ProbeOutcome {
            sent: 0,
            received: 0,
            rtts_ms: Vec::new(),
            error: Some("unreachable".into()),
            ..ProbeOutcome::default()
        },
    ];
    // The reply target's packets left by the uplink; the capture on mgmt saw nothing.
    let workload = Ipv4Addr::new(10, 20, 129, 250);
    let echo = crate::probe::echo_request(1, 0, b"0123456789abcdef");
    let mut request = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 1, 0, 0];
    request[2..4].copy_from_slice(&((20 + echo.len()) as u16).to_be_bytes());
    request.extend_from_slice(&workload.octets());
    request.extend_from_slice(&Ipv4Addr::new(203, 0, 113, 8).octets());
    request.extend_from_slice(&echo);
    let captures = [
        Capture {
            interface: "mgmt".into(),
            role: Role::Forbidden,
            frames: Vec::new(),
            overflowed: false,
        },
        Capture {
            interface: "uplink".into(),
            role: Role::Other,
            frames: vec![crate::frame::Frame {
                protocol: crate::frame::ETH_P_IP,
                packet_type: crate::frame::PACKET_OUTGOING,
                metadata_tag: None,
                bytes: request,
            }],
            overflowed: false,
        },
    ];
    let markers = crate::frame::Markers {
        workload: workload.into(),
        icmp_id: 1,
        local_ports: Vec::new(),
    };
    let report = build(&targets, &outcomes, &captures, 0, &markers);
    assert_eq!(report.verdict, Verdict::Failed);
    assert_eq!(
        report.problems,
        [
            "10.20.99.5 icmp: no probe was sent (unreachable), so no leak could be seen: a probe \
          that sent nothing proves nothing"
        ]
    );
    assert!(report.targets[0].passed && !report.targets[1].passed);
}
