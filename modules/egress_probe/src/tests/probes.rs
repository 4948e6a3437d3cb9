//! Issue 25 without a kernel: many probes' options and refusals, frag-needed and unreachable
//! codes in recorded ICMP errors, full-size replies, blocked targets judged, and frames
//! attributed to the probe that sent them.

use super::probe::{echo, ipv4, reply_to, NONCE};
use super::{params, target};
use crate::capture::filter_program_for;
use crate::frame::{classify, Markers, Packet};
use crate::params::{Expect, Params, ProbeParams, Proto, Run, Size, Target, MAX_PROBES};
use crate::probe::{echo_answer, echo_request_padded, EchoAnswer, IPV4_ECHO_OVERHEAD};
use crate::report::{build, Capture, ProbeOutcome, Role, Verdict};
use std::net::Ipv4Addr;

const INTERNET: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 8);

fn probe(name: &str, address: &str) -> ProbeParams {
    ProbeParams {
        name: name.into(),
        vrf: Some("vrf_tdemo".into()),
        address: address.into(),
        targets: vec![target("203.0.113.8")],
        ..ProbeParams::default()
    }
}

fn run_params(probes: Vec<ProbeParams>) -> Params {
    let mut p = params(Vec::new());
    p.vrf = String::new();
    p.address = String::new();
    p.expect_egress_interface = None;
    p.probes = Some(probes);
    p
}

fn refused(probes: Vec<ProbeParams>, edit: impl FnOnce(&mut Params)) -> String {
    let mut p = run_params(probes);
    edit(&mut p);
    Run::from_params(p).expect_err("must be refused")
}

#[test]
fn many_probes_are_parsed_each_with_the_runs_count_and_forbidden_interfaces() {
    let mut tb = probe("tdemo/ipv6", "10.20.130.250/24");
    tb.forbidden_interfaces = Some(vec!["vmbr0.51".into()]);
    let mut p = run_params(vec![probe("ta", "10.20.129.250/24"), tb]);
    p.forbidden_interfaces = Some(vec!["vmbr0".into()]);
    let run = Run::from_params(p).unwrap();
    assert!(run.listed);
    assert_eq!(run.probes[0].0, "ta");
    assert_eq!(run.probes[1].1.count, 3);
    assert_eq!(
        run.probes[1].1.forbidden_interfaces,
        Some(vec!["vmbr0.51".to_string(), "vmbr0".to_string()])
    );
    assert_eq!(
        run.probes[0].1.forbidden_interfaces,
        Some(vec!["vmbr0".into()])
    );
    // The single form is a run of one, named by its VRF.
    let single = Run::from_params(params(vec![target("203.0.113.8")])).unwrap();
    assert!(!single.listed);
    assert_eq!(single.probes[0].0, "vrf_tdemo");
}

#[test]
fn bad_probes_are_refused_naming_the_entry_value_and_fix() {
    let ta = || probe("ta", "10.20.129.250/24");
    let cases: Vec<(String, &str)> = vec![
        (
            refused(vec![ta()], |p| p.vrf = "vrf_tdemo".into()),
            "probes and vrf are mutually exclusive",
        ),
        (
            refused(vec![ta()], |p| p.targets = vec![target("203.0.113.8")]),
            "probes and targets are mutually exclusive",
        ),
        (refused(vec![], |_| {}), "probes is empty"),
        (
            refused(
                (0..=MAX_PROBES)
                    .map(|i| {
                        probe(
                            &format!("t{i}"),
                            &format!("10.20.{}.{}/16", i / 200, i % 200 + 2),
                        )
                    })
                    .collect(),
                |_| {},
            ),
            "probes: 129 entries are more than the 128 one run takes",
        ),
        (
            refused(vec![ta(), probe("ta", "10.20.129.251/24")], |_| {}),
            "probes[1].name: ta is also probes[0]'s",
        ),
        (
            refused(vec![ta(), probe("tb", "10.20.129.250/24")], |_| {}),
            "probes[1].address: 10.20.129.250 is also probe ta's",
        ),
        (
            refused(vec![probe("t a", "10.20.129.250/24")], |_| {}),
            "probes[0].name: 't a' is not a probe name",
        ),
        (
            refused(
                vec![ProbeParams {
                    vlan: Some(4095),
                    bridge: Some("vmbr1".into()),
                    vrf: None,
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].vlan: 4095 is outside 1-4094",
        ),
        (
            refused(
                vec![ProbeParams {
                    vlan: Some(0),
                    bridge: Some("vmbr1".into()),
                    vrf: None,
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].vlan: 0 is outside 1-4094",
        ),
        (
            refused(
                vec![ProbeParams {
                    vlan: Some(201),
                    vrf: None,
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].vlan: vlan 201 without bridge",
        ),
        (
            refused(
                vec![ProbeParams {
                    vlan: Some(201),
                    bridge: Some("vmbr1".into()),
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].bridge: vmbr1 vlan 201 together with vrf",
        ),
        (
            refused(
                vec![ProbeParams {
                    vlan: Some(201),
                    bridge: Some("vmbr1".into()),
                    vrf: None,
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].gateway: missing for bridge vmbr1 vlan 201",
        ),
        (
            refused(
                vec![ProbeParams {
                    bridge: Some("vmbr1".into()),
                    vrf: None,
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].bridge: vmbr1 without vlan",
        ),
        (
            refused(vec![ProbeParams { vrf: None, ..ta() }], |_| {}),
            "probes[0].vrf: missing",
        ),
        (
            refused(
                vec![ProbeParams {
                    address: "2001:db8::5/64".into(),
                    ..ta()
                }],
                |_| {},
            ),
            "probes[0].targets[0].address: 203.0.113.8 is IPv4 but address 2001:db8::5/64 is IPv6",
        ),
    ];
    for (msg, expected) in cases {
        assert!(
            msg.starts_with(expected),
            "expected {expected:?}, got {msg:?}"
        );
    }
}

/// A run of one probe on the VLAN-aware bridge vmbr1, VLAN 201.
fn tagged_run() -> Run {
    let mut tagged = probe("tvlan", "10.20.201.250/24");
    tagged.vrf = None;
    tagged.bridge = Some("vmbr1".into());
    tagged.vlan = Some(201);
    tagged.gateway = Some("10.20.201.1".into());
    Run::from_params(run_params(vec![tagged])).unwrap()
}

/// A tagged workload's router is off the node, beyond a port of its bridge: a trunk carries
/// the workload's VLAN tagged (the tag beside the frame, as the bridge leaves it). Its frames
/// there prove egress; another VLAN's, or a tag on an interface that is no port of the bridge,
/// are not the workload's. Before, the bridge's ports were not watched and tagged frames were
/// dropped, so a tagged probe could never show its packets leaving the node.
#[test]
fn a_tagged_workloads_frames_leave_by_a_trunk_port_of_its_bridge() {
    use crate::capture::{empty_captures, keep, tagged_ports, watched, Recognizer};
    use crate::frame::{Frame, PACKET_OUTGOING};
    use deevnet_runtime::netlink::{BridgeVlanSettings, Link, Links};
    let run = tagged_run();
    let link = |index: u32, name: &str, controller: Option<u32>| Link {
        index,
        name: name.into(),
        controller,
        ..Default::default()
    };
    let mut vmbr1 = link(5, "vmbr1", None);
    vmbr1.kind = Some("bridge".into());
    vmbr1.bridge = Some(BridgeVlanSettings {
        vlan_filtering: Some(true),
        ..Default::default()
    });
    let links = Links::new(vec![
        link(1, "lo", None),
        link(3, "bond0", None),
        vmbr1,
        link(6, "bond0.40", Some(5)),
        link(7, "vrtr-port", Some(5)),
        link(8, "dvp42p0", Some(5)),
    ]);
    let node = crate::tenant::NodeFacts {
        links,
        addresses: Vec::new(),
    };
    let plan = crate::tenant::resolve(&run.probes[0].1, &node).unwrap();
    let recognizer = Recognizer {
        watched: watched(&plan, &node.links, 8),
        tagged_ports: tagged_ports(&plan, &node.links, 8),
        targets: plan.targets.clone(),
        markers: Markers {
            workload: Ipv4Addr::new(10, 20, 201, 250).into(),
            icmp_id: 0x48bc,
            local_ports: Vec::new(),
        },
    };
    let names: Vec<&str> = recognizer
        .watched
        .iter()
        .map(|(i, _)| i.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["bond0", "bond0.40", "vrtr-port"],
        "not the bridge, not its own veth"
    );
    assert_eq!(recognizer.tagged_ports, Some((201, vec![6, 7])));
    let request = ipv4(
        Ipv4Addr::new(10, 20, 201, 250),
        INTERNET,
        &crate::probe::echo_request(0x48bc, 0, &NONCE),
    );
    let frame = |tag: Option<u16>| Frame {
        protocol: crate::frame::ETH_P_IP,
        packet_type: PACKET_OUTGOING,
        metadata_tag: tag,
        bytes: request.clone(),
    };
    let (mut captures, positions) = empty_captures(&recognizer.watched);
    for (interface, tag) in [
        (7, Some(201)),
        (7, Some(202)),
        (3, Some(201)),
        (6, Some(202)),
    ] {
        keep(
            &mut captures,
            &positions,
            &recognizer,
            interface,
            frame(tag),
        );
    }
    // A VLAN device that is a port of the bridge (a QinQ zone's bond0.40) sends the frame with
    // the tag still in it: the workload's VLAN there is the workload's frame too, taken as sent.
    let in_frame = |vlan: u16, inner: u16| Frame {
        protocol: crate::frame::ETH_P_8021Q,
        packet_type: PACKET_OUTGOING,
        metadata_tag: None,
        bytes: [
            &vlan.to_be_bytes()[..],
            &inner.to_be_bytes()[..],
            &request[..],
        ]
        .concat(),
    };
    for (interface, frame) in [
        (6, in_frame(201, crate::frame::ETH_P_IP)),
        (6, in_frame(202, crate::frame::ETH_P_IP)),
        (6, in_frame(201, crate::frame::ETH_P_8021Q)),
        (3, in_frame(201, crate::frame::ETH_P_IP)),
    ] {
        keep(&mut captures, &positions, &recognizer, interface, frame);
    }
    let kept: Vec<(&str, usize)> = captures
        .iter()
        .map(|c| (c.interface.as_str(), c.frames.len()))
        .collect();
    assert_eq!(kept, [("bond0", 0), ("bond0.40", 1), ("vrtr-port", 1)]);
    let on_vlan_device = &captures[1].frames[0];
    assert_eq!(
        (
            on_vlan_device.protocol,
            on_vlan_device.metadata_tag,
            &on_vlan_device.bytes
        ),
        (crate::frame::ETH_P_IP, None, &request),
        "the tag taken off: the workload's frame as sent"
    );
    let answered = ProbeOutcome {
        sent: 1,
        received: 1,
        ..ProbeOutcome::default()
    };
    let report = build(
        &plan.targets,
        &[answered],
        &captures,
        0,
        &recognizer.markers,
    );
    assert_eq!(report.verdict, Verdict::Passed, "{:?}", report.problems);
    assert_eq!(report.targets[0].left_by, ["bond0.40", "vrtr-port"]);
    // A workload in a VRF's VNet: its bridge's ports are its path, not its egress.
    let untagged = crate::tenant::Plan {
        vlan: None,
        ..plan.clone()
    };
    assert_eq!(tagged_ports(&untagged, &node.links, 8), None);
}

#[test]
fn a_tagged_probe_is_checked_against_the_bridge_on_the_node() {
    let run = tagged_run();
    let request = &run.probes[0].1;
    assert_eq!(
        request.tagged,
        Some(crate::params::Tagged {
            bridge: "vmbr1".into(),
            vlan: 201
        })
    );
    let bridge = |filtering: Option<bool>| deevnet_runtime::netlink::Link {
        index: 5,
        name: "vmbr1".into(),
        kind: Some("bridge".into()),
        mtu: Some(9000),
        bridge: Some(deevnet_runtime::netlink::BridgeVlanSettings {
            vlan_filtering: filtering,
            ..Default::default()
        }),
        ..Default::default()
    };
    let node = |filtering| crate::tenant::NodeFacts {
        links: deevnet_runtime::netlink::Links::new(vec![bridge(filtering)]),
        addresses: Vec::new(),
    };
    let plan = crate::tenant::resolve(request, &node(Some(true))).unwrap();
    assert_eq!(
        (plan.vlan, plan.vnet.name.as_str(), plan.mtu),
        (Some(201), "vmbr1", 9000)
    );
    assert!(!plan.gateway_is_node);
    for filtering in [None, Some(false)] {
        let msg = crate::tenant::resolve(request, &node(filtering)).unwrap_err();
        assert!(
            msg.starts_with("vlan: 201 given, but bridge vmbr1 is not VLAN-aware"),
            "{msg}"
        );
    }
}

#[test]
fn sizes_are_for_icmp_replies_between_the_smallest_probe_and_an_ip_packet() {
    let sized = |proto: Proto, expect: Expect, size: &str| {
        let mut t = target("203.0.113.8");
        t.proto = proto;
        t.port = (proto == Proto::Tcp).then_some(443);
        t.expect = expect;
        t.size = Some(size.into());
        crate::params::Request::from_params(params(vec![t]))
    };
    assert_eq!(
        sized(Proto::Icmp, Expect::Reply, "mtu").unwrap().targets[0].size,
        Some(Size::Mtu)
    );
    assert_eq!(
        sized(Proto::Icmp, Expect::Reply, "1450").unwrap().targets[0].size,
        Some(Size::Bytes(1450))
    );
    for (proto, expect, size, words) in [
        (
            Proto::Tcp,
            Expect::Reply,
            "1450",
            "targets[0].size: 1450 given for a tcp target",
        ),
        (
            Proto::Icmp,
            Expect::Blocked,
            "1450",
            "targets[0].size: 1450 given with expect: blocked",
        ),
        (
            Proto::Icmp,
            Expect::Reply,
            "67",
            "targets[0].size: '67' is not a probe size",
        ),
        (
            Proto::Icmp,
            Expect::Reply,
            "65536",
            "targets[0].size: '65536' is not a probe size",
        ),
        (
            Proto::Icmp,
            Expect::Reply,
            "big",
            "targets[0].size: 'big' is not a probe size",
        ),
    ] {
        let msg = sized(proto, expect, size).expect_err("must be refused");
        assert!(msg.starts_with(words), "expected {words:?}, got {msg:?}");
    }
}

/// A router's frag-needed (type 3, code 4, next-hop MTU 1496 in bytes 6-7) quoting the IP
/// header and the start of a 1500-byte echo up to its nonce, as Linux sends it (up to 576
/// bytes in all).
#[test]
fn a_frag_needed_names_its_mtu_and_an_unreachable_its_code() {
    let padding = 1500 - IPV4_ECHO_OVERHEAD;
    let request = echo_request_padded(0x48bc, 7, &NONCE, padding);
    let quoted = {
        let mut q = vec![0x45, 0, 0x05, 0xdc, 0, 0, 0x40, 0, 0x3f, 1, 0, 0];
        q.extend_from_slice(&[10, 20, 129, 250]);
        q.extend_from_slice(&INTERNET.octets());
        q.extend_from_slice(&request[..QUOTED]);
        q
    };
    let router = Ipv4Addr::new(10, 20, 50, 1);
    let error = |code: u8, rest: [u8; 4]| {
        let mut icmp = vec![3, code, 0, 0];
        icmp.extend_from_slice(&rest);
        icmp.extend_from_slice(&quoted);
        ipv4(router, Ipv4Addr::new(10, 20, 129, 250), &icmp)
    };
    let full = crate::probe::Echo { padding, ..echo(7) };
    assert_eq!(
        echo_answer(&error(4, [0, 0, 0x05, 0xd8]), &full),
        Some(EchoAnswer::FragNeeded(router, 1496))
    );
    assert_eq!(
        echo_answer(&error(13, [0; 4]), &full),
        Some(EchoAnswer::Unreachable(router, 13))
    );
    assert_eq!(
        echo_answer(&error(4, [0, 0, 0x05, 0xd8]), &echo(8)),
        None,
        "another sequence"
    );
    // The full-size reply carries the padding back; the small one's shape is no answer to it.
    assert_eq!(
        echo_answer(&reply_to(&request), &full),
        Some(EchoAnswer::Reply)
    );
    assert_eq!(echo_answer(&reply_to(&request), &echo(7)), None);
}

/// The echo header, the fixed text and the nonce: what a quote must hold.
const QUOTED: usize = 8 + crate::probe::PAYLOAD.len() + crate::probe::NONCE_LEN;

/// EP2: a neighbour that never saw the probe sprays frag-needed for every identifier and
/// sequence. The identifier and sequence are public, the nonce is not: a quote without it, or
/// cut before it, is no answer, so a silent drop stays one.
#[test]
fn an_icmp_error_counts_only_when_its_quote_holds_the_runs_nonce() {
    let padding = 1500 - IPV4_ECHO_OVERHEAD;
    let request = echo_request_padded(0x48bc, 7, &NONCE, padding);
    let forged = |quote: &[u8]| {
        let mut icmp = vec![3, 4, 0, 0, 0, 0, 0x05, 0xd8];
        icmp.extend_from_slice(&[0x45, 0, 0x05, 0xdc, 0, 0, 0x40, 0, 0x3f, 1, 0, 0]);
        icmp.extend_from_slice(&[10, 20, 129, 250]);
        icmp.extend_from_slice(&INTERNET.octets());
        icmp.extend_from_slice(quote);
        ipv4(
            Ipv4Addr::new(10, 20, 129, 66),
            Ipv4Addr::new(10, 20, 129, 250),
            &icmp,
        )
    };
    let full = crate::probe::Echo { padding, ..echo(7) };
    // The first 8 bytes only: all RFC 792 asks, and all a forger knows.
    assert_eq!(echo_answer(&forged(&request[..8]), &full), None);
    // The whole quote with another run's nonce.
    let other = echo_request_padded(0x48bc, 7, &[0x5a; crate::probe::NONCE_LEN], padding);
    assert_eq!(echo_answer(&forged(&other[..QUOTED]), &full), None);
    // Cut inside the nonce.
    assert_eq!(echo_answer(&forged(&request[..QUOTED - 1]), &full), None);
    // The real quote.
    assert_eq!(
        echo_answer(&forged(&request[..QUOTED]), &full),
        Some(EchoAnswer::FragNeeded(Ipv4Addr::new(10, 20, 129, 66), 1496))
    );
}

fn blocked(address: Ipv4Addr) -> Target {
    Target {
        address: address.into(),
        proto: Proto::Icmp,
        port: None,
        expect: Expect::Blocked,
        size: None,
        peer: false,
        via: None,
    }
}

fn markers(workload: [u8; 4], icmp_id: u16) -> Markers {
    Markers {
        workload: Ipv4Addr::from(workload).into(),
        icmp_id,
        local_ports: Vec::new(),
    }
}

fn echo_frame(source: [u8; 4], destination: Ipv4Addr, id: u16, length: usize, kind: u8) -> Vec<u8> {
    let mut icmp = vec![kind, 0, 0, 0];
    icmp.extend_from_slice(&id.to_be_bytes());
    icmp.extend_from_slice(&[0, 0]);
    icmp.resize(length - 20, 0);
    ipv4(Ipv4Addr::from(source), destination, &icmp)
}

fn outgoing(bytes: Vec<u8>) -> crate::frame::Frame {
    crate::frame::Frame {
        protocol: crate::frame::ETH_P_IP,
        packet_type: crate::frame::PACKET_OUTGOING,
        metadata_tag: None,
        bytes,
    }
}

#[test]
fn blocked_targets_are_judged_by_answers_icmp_and_where_the_probe_went() {
    let silent = Ipv4Addr::new(10, 20, 202, 5);
    let targets = [
        blocked(Ipv4Addr::new(10, 20, 200, 5)),
        blocked(Ipv4Addr::new(10, 20, 130, 250)),
        blocked(silent),
        blocked(Ipv4Addr::new(198, 51, 100, 9)),
        blocked(Ipv4Addr::new(198, 51, 100, 10)),
    ];
    let node = Ipv4Addr::new(10, 20, 129, 1);
    let outcomes = [
        ProbeOutcome {
            sent: 2,
            unreachable: Some((node.into(), 13)),
            ..ProbeOutcome::default()
        },
        ProbeOutcome {
            sent: 2,
            received: 2,
            rtts_ms: vec![0.1, 0.1],
            ..ProbeOutcome::default()
        },
        ProbeOutcome {
            sent: 2,
            error: Some("no reply".into()),
            ..ProbeOutcome::default()
        },
        ProbeOutcome {
            sent: 2,
            error: Some("no reply".into()),
            ..ProbeOutcome::default()
        },
        ProbeOutcome {
            sent: 2,
            error: Some("no reply".into()),
            ..ProbeOutcome::default()
        },
    ];
    let elsewhere = echo_frame(
        [10, 20, 50, 22],
        Ipv4Addr::new(198, 51, 100, 10),
        0x48bc,
        68,
        8,
    );
    let leaving = echo_frame(
        [10, 20, 50, 22],
        Ipv4Addr::new(198, 51, 100, 9),
        0x48bc,
        68,
        8,
    );
    let captures = [
        Capture {
            interface: "uplink".into(),
            role: Role::Egress,
            frames: vec![outgoing(leaving)],
            overflowed: false,
        },
        Capture {
            interface: "eth9".into(),
            role: Role::Other,
            frames: vec![outgoing(elsewhere)],
            overflowed: false,
        },
    ];
    let report = build(
        &targets,
        &outcomes,
        &captures,
        0,
        &markers([10, 20, 129, 250], 0x48bc),
    );
    let by: Vec<Option<&str>> = report
        .targets
        .iter()
        .map(|t| t.blocked_by.as_deref())
        .collect();
    assert_eq!(
        by,
        [
            Some("icmp admin-prohibited"),
            None,
            Some("no answer"),
            Some("dropped beyond the node"),
            None
        ]
    );
    let passed: Vec<bool> = report.targets.iter().map(|t| t.passed).collect();
    assert_eq!(passed, [true, false, true, true, false]);
    assert_eq!(
        report.targets[1].answered_by.as_deref(),
        Some("10.20.130.250")
    );
    assert_eq!(report.verdict, Verdict::Failed);
    assert_eq!(
        report.problems,
        [
            "10.20.130.250 icmp: answered by 10.20.130.250 (2/2 probes) though it must be \
             blocked: the isolation is missing",
            "198.51.100.10 icmp: no answer, but its probes left the node by eth9: not blocked \
             at the node"
        ]
    );
}

/// Two probes to one target, both translated to the node's address by SNAT: each frame is the
/// probe's whose echo identifier it carries, and the kernel filter passes both probes' own.
#[test]
fn frames_are_attributed_to_the_probe_that_sent_them_also_after_snat() {
    let targets = [Target {
        expect: Expect::Reply,
        ..blocked(INTERNET)
    }];
    let (ta, tb) = (
        markers([10, 20, 129, 250], 0x1000),
        markers([10, 20, 130, 250], 0x1001),
    );
    let snat = [10, 20, 50, 22];
    let from_tb = Packet::parse(&echo_frame(snat, INTERNET, 0x1001, 68, 8)).unwrap();
    assert!(classify(&from_tb, &targets, &ta).is_none());
    assert!(classify(&from_tb, &targets, &tb).is_some());
    let untranslated_ta =
        Packet::parse(&echo_frame([10, 20, 129, 250], INTERNET, 0x1001, 68, 8)).unwrap();
    assert!(
        classify(&untranslated_ta, &targets, &ta).is_some(),
        "its own address"
    );
    let one = filter_program_for(std::slice::from_ref(&ta), &[], &[]);
    let two = filter_program_for(&[ta.clone(), tb.clone()], &[], &[]);
    assert_eq!(two.len() - one.len(), 4, "four instructions a workload");
    let all: Vec<Markers> = (0..MAX_PROBES as u16)
        .map(|i| markers([10, 20, (i / 200) as u8, (i % 200 + 2) as u8], 0x1000 + i))
        .collect();
    assert!(filter_program_for(&all, &(0..1_000).collect::<Vec<u32>>(), &[]).len() < 4_096);
    // Tagged workloads' VLANs: one block, each VLAN once, two instructions each; past what a
    // short jump spans, one instruction that passes every in-frame tag.
    let tagged = filter_program_for(std::slice::from_ref(&ta), &[], &[201, 299, 201]);
    assert_eq!(
        tagged.len() - one.len(),
        3 + 2 * 2 - 1,
        "one reject becomes the block"
    );
    let many: Vec<u16> = (1..=500).collect();
    let accept_all = filter_program_for(&[ta], &[], &many);
    assert_eq!(accept_all.len(), one.len());
    assert_ne!(accept_all, one, "the reject becomes an accept");
}

/// A full-size and a small echo to one target: the capture tells them apart by length.
#[test]
fn a_full_size_and_a_small_probe_to_one_target_are_counted_apart() {
    let small = Target {
        expect: Expect::Reply,
        ..blocked(INTERNET)
    };
    let full = Target {
        size: Some(Size::Bytes(1500)),
        ..small.clone()
    };
    let targets = [full, small];
    let ta = markers([10, 20, 129, 250], 0x1000);
    let of = |length| {
        let packet =
            Packet::parse(&echo_frame([10, 20, 50, 22], INTERNET, 0x1000, length, 8)).unwrap();
        classify(&packet, &targets, &ta).map(|p| p.target)
    };
    assert_eq!(of(1500), Some(0));
    assert_eq!(of(68), Some(1));
}

/// TCP and UDP know no ICMP codes, only the socket's error: a reset or a port unreachable is
/// the target's host answering; a host unreachable is blocked.
#[test]
fn a_refused_connection_is_an_answer_and_an_unreachable_one_is_blocked() {
    let tcp = Target {
        proto: Proto::Tcp,
        port: Some(443),
        ..blocked(INTERNET)
    };
    let targets = [
        tcp.clone(),
        Target {
            port: Some(22),
            ..tcp
        },
    ];
    let outcomes = [
        ProbeOutcome {
            sent: 2,
            refused: true,
            error: Some("refused".into()),
            ..ProbeOutcome::default()
        },
        ProbeOutcome {
            sent: 2,
            error: Some("unreachable".into()),
            ..ProbeOutcome::default()
        },
    ];
    let report = build(
        &targets,
        &outcomes,
        &[],
        0,
        &markers([10, 20, 129, 250], 0x48bc),
    );
    assert_eq!(
        report.targets[0].answered_by.as_deref(),
        Some("203.0.113.8")
    );
    assert!(!report.targets[0].passed);
    assert_eq!(report.problems[0], "203.0.113.8 tcp/443: answered by 203.0.113.8 (0/2 probes, refused by the host) though it must be blocked: the isolation is missing");
    assert_eq!(
        report.targets[1].blocked_by.as_deref(),
        Some("icmp unreachable")
    );
    assert!(report.targets[1].passed);
}

const WORKLOAD6: &str = "fd00:129::250";
const INTERNET6: &str = "2001:db8:113::8";

/// An IPv6 packet from `source` to `destination` carrying `payload` under `next` (no
/// extension header), as a capture or a router's error quotes it.
fn ipv6(source: &str, destination: &str, next: u8, payload: &[u8]) -> Vec<u8> {
    let mut packet = vec![0x60, 0, 0, 0];
    packet.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    packet.extend_from_slice(&[next, 64]);
    packet.extend_from_slice(&source.parse::<std::net::Ipv6Addr>().unwrap().octets());
    packet.extend_from_slice(&destination.parse::<std::net::Ipv6Addr>().unwrap().octets());
    packet.extend_from_slice(payload);
    packet
}

fn echo6(sequence: u16) -> Vec<u8> {
    let mut request = crate::probe::echo_request_padded(0x1000, sequence, &NONCE, 0);
    request[0] = 128;
    request
}

/// An ICMPv6 echo of the probe, as captured leaving untranslated and after NPTv6 / SNAT66:
/// each is the probe's, by its address or by its echo identifier; a tagged copy is the VLAN
/// device's, not the interface's.
#[test]
fn ipv6_frames_are_classified_also_after_translation() {
    let targets = [Target {
        address: INTERNET6.parse().unwrap(),
        proto: Proto::Icmp,
        port: None,
        expect: Expect::Reply,
        size: None,
        peer: false,
        via: None,
    }];
    let ta = Markers {
        workload: WORKLOAD6.parse().unwrap(),
        icmp_id: 0x1000,
        local_ports: vec![(Proto::Tcp, 20_000)],
    };
    let untranslated = Packet::parse(&ipv6(WORKLOAD6, INTERNET6, 58, &echo6(0))).unwrap();
    let probe = classify(&untranslated, &targets, &ta).unwrap();
    assert!(!probe.translated);
    assert_eq!(untranslated.length, 40 + 48);
    let translated = Packet::parse(&ipv6("2001:db8:50::22", INTERNET6, 58, &echo6(0))).unwrap();
    assert!(classify(&translated, &targets, &ta).unwrap().translated);
    let other_id = {
        let mut e = echo6(0);
        e[5] = 0x01;
        Packet::parse(&ipv6("2001:db8:50::22", INTERNET6, 58, &e)).unwrap()
    };
    assert!(
        classify(&other_id, &targets, &ta).is_none(),
        "another run's echo"
    );
    let mut reply = echo6(0);
    reply[0] = 129;
    let back = Packet::parse(&ipv6(INTERNET6, "2001:db8:50::22", 58, &reply)).unwrap();
    assert_eq!(
        classify(&back, &targets, &ta).map(|p| p.direction),
        Some(crate::frame::Direction::Reply)
    );
    let tcp = Packet::parse(&ipv6(
        WORKLOAD6,
        INTERNET6,
        6,
        &[0x4e, 0x20, 1, 0xbb, 0, 0, 0, 0],
    ))
    .unwrap();
    assert_eq!((tcp.proto, tcp.ports), (Proto::Tcp, Some((20_000, 443))));
    // Extension headers, truncated headers: nobody's.
    assert!(Packet::parse(&ipv6(WORKLOAD6, INTERNET6, 0, &echo6(0))).is_none());
    assert!(Packet::parse(&ipv6(WORKLOAD6, INTERNET6, 58, &echo6(0))[..44]).is_none());
    let tagged = crate::frame::Frame {
        protocol: crate::frame::ETH_P_IPV6,
        packet_type: crate::frame::PACKET_OUTGOING,
        metadata_tag: Some(201),
        bytes: ipv6(WORKLOAD6, INTERNET6, 58, &echo6(0)),
    };
    assert!(tagged.is_tagged());
    // The kernel filter grows by the IPv6 block only when a workload is IPv6.
    let v4 = markers([10, 20, 129, 250], 0x1000);
    let with_v6 = filter_program_for(&[v4.clone(), ta], &[], &[]);
    assert!(with_v6.len() > filter_program_for(&[v4], &[], &[]).len() + 18);
}

/// ICMPv6 errors as a router sends them (no IPv6 header: the raw socket strips it), quoting
/// the request's IPv6 header and echo header: packet too big names the MTU, destination
/// unreachable its code in ICMP's words.
#[test]
fn icmpv6_errors_name_the_mtu_and_the_unreachable_code() {
    use crate::probe::{echo6_answer, Echo6, EchoAnswer6};
    let router: std::net::Ipv6Addr = "fd00:50::1".parse().unwrap();
    let quoted = ipv6(WORKLOAD6, INTERNET6, 58, &echo6(3));
    let error = |kind: u8, code: u8, rest: [u8; 4]| {
        let mut message = vec![kind, code, 0, 0];
        message.extend_from_slice(&rest);
        message.extend_from_slice(&quoted);
        message
    };
    let echo = Echo6 {
        target: INTERNET6.parse().unwrap(),
        id: 0x1000,
        sequence: 3,
        nonce: &NONCE,
        padding: 0,
    };
    assert_eq!(
        echo6_answer(&error(2, 0, [0, 0, 0x05, 0xd8]), router, &echo),
        Some(EchoAnswer6::PacketTooBig(1496))
    );
    for (code, as_icmp) in [(0, 0), (1, 13), (3, 1), (4, 3), (6, 106)] {
        assert_eq!(
            echo6_answer(&error(1, code, [0; 4]), router, &echo),
            Some(EchoAnswer6::Unreachable(as_icmp))
        );
    }
    assert_eq!(
        echo6_answer(
            &error(1, 1, [0; 4]),
            router,
            &Echo6 {
                sequence: 4,
                ..echo
            }
        ),
        None,
        "another sequence"
    );
    let mut reply = echo6(3);
    reply[0] = 129;
    let target: std::net::Ipv6Addr = INTERNET6.parse().unwrap();
    assert_eq!(
        echo6_answer(&reply, target, &echo),
        Some(EchoAnswer6::Reply)
    );
    assert_eq!(
        echo6_answer(&reply, router, &echo),
        None,
        "from another host"
    );
    for cut in 0..reply.len() {
        assert_eq!(echo6_answer(&reply[..cut], target, &echo), None);
    }
}
