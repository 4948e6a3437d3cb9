//! The run's lifecycle without a kernel: what marks a probe's interfaces and which of them a
//! later run may sweep; a probe that sent nothing.

use crate::params::{Expect, Proto, Target};
use crate::report::{build, Capture, ProbeOutcome, Role, Verdict};
use crate::workload::{leftovers, veth_names, Mark};
use deevnet_runtime::netlink::{Link, Links};
use std::net::Ipv4Addr;

const BOOT: &str = "3f1c2a9e-5b7d-4e21-9c0a-6d8f1e2b3c4d";

fn mark(pid: u32, start_ticks: u64) -> Mark {
    Mark {
        boot_id: BOOT.into(),
        pid_namespace: 4_026_531_836,
        pid,
        start_ticks,
    }
}

#[test]
fn probe_interfaces_are_named_after_their_run() {
    let (node, inside) = veth_names(4_194_304);
    assert_eq!(
        (node.as_str(), inside.as_str()),
        ("dvprobe4194304", "dvprobe4194304w")
    );
    assert!(node.len() <= 15 && inside.len() <= 15, "IFNAMSIZ");
}

#[test]
fn a_mark_is_read_back_exactly_and_nothing_else_is_one() {
    let written = mark(4_194_304, 123_456_789);
    let alias = written.alias();
    assert_eq!(
        alias,
        format!(
            "deevnet.net egress_probe boot={BOOT} pidns=4026531836 pid=4194304 start=123456789"
        )
    );
    assert!(alias.len() < 256, "IFALIASZ");
    assert_eq!(Mark::parse(&alias), Some(written));
    for other in [
        "",
        "dvprobe4000000",
        "uplink to the core",
        "deevnet.net egress_probe",
        &alias.replace("pid=", "pid=0"),
        &alias.replace("start=", "start=+"),
        &format!("{alias} "),
        &format!("{alias} more=1"),
        &alias.replace(BOOT, "not-a-boot-id"),
        &alias.replace("boot=", "boot=x"),
        &alias.replacen(' ', "  ", 1),
    ] {
        assert_eq!(Mark::parse(other), None, "{other:?}");
    }
}

#[test]
fn only_marked_links_of_runs_that_are_over_are_leftovers() {
    let link = |index: u32, name: &str, alias: Option<String>| Link {
        index,
        name: name.into(),
        alias,
        ..Link::default()
    };
    let links = Links::new(vec![
        link(1, "lo", None),
        // An operator's interface with a probe's name, and one whose alias says nothing.
        link(2, "dvprobe4000000", None),
        link(3, "dvprobe4000001", Some("dvprobe 4000001".into())),
        // A run that is over, one still alive, and one named like neither.
        link(4, "dvprobe10", Some(mark(10, 5).alias())),
        link(5, "dvprobe20", Some(mark(20, 5).alias())),
        link(6, "renamed0", Some(mark(30, 5).alias())),
    ]);
    let over = leftovers(&links, |mark| mark.pid != 20);
    let names: Vec<&str> = over.iter().map(|link| link.name.as_str()).collect();
    assert_eq!(names, ["dvprobe10", "renamed0"]);
}

#[test]
fn only_a_verifiably_dead_run_of_this_boot_and_pid_namespace_is_over() {
    let this = Mark::of_this_process().expect("this test's own mark");
    let same = |pid: u32, start_ticks: u64| Mark {
        pid,
        start_ticks,
        ..this.clone()
    };
    assert!(!this.run_is_over(&this), "this process is alive");
    assert!(
        same(this.pid, this.start_ticks + 1).run_is_over(&this),
        "the same pid started at another time is another process"
    );
    // No pid above the kernel's limit (4194304) exists.
    assert!(same(4_194_305, 1).run_is_over(&this), "no such process");
    let elsewhere = |edit: fn(&mut Mark)| {
        let mut mark = same(4_194_305, 1);
        edit(&mut mark);
        mark.run_is_over(&this)
    };
    assert!(
        !elsewhere(|m| m.pid_namespace += 1),
        "another PID namespace: its pid cannot be checked here"
    );
    assert!(
        !elsewhere(|m| m.boot_id = BOOT.into()),
        "another boot: a forged or copied mark"
    );
}

#[test]
fn a_leak_probe_that_sent_nothing_proves_nothing() {
    let target = |address: Ipv4Addr, expect| Target {
        size: None,
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
