//! The fabric proof's peers without a kernel: a peer target (another node's workload in the
//! workload's own subnet) and its `via`, refused unless whole; `start_at` against the node's
//! clock; the same-subnet refusal lifted for peers alone; `via` captured and judged.

use super::probe::{ipv4, outgoing, NONCE};
use super::tenant::{lab_node, link};
use super::{params, target};
use crate::capture::watched;
use crate::frame::{Frame, Markers};
use crate::params::{check_start_at, Expect, Params, ProbeParams, Proto, Request, Run};
use crate::params::{Target, TargetParams};
use crate::probe::echo_request;
use crate::report::{build, Capture, ProbeOutcome, Role, Verdict};
use crate::tenant::{resolve, NodeFacts, Plan};
use deevnet_runtime::netlink::{Link, Links};
use std::net::Ipv4Addr;

const WORKLOAD: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 250);
const PEER: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 251);

/// The other node's workload as a peer target, its requests to leave by `vxlan_tdemo0`.
fn peer() -> TargetParams {
    TargetParams {
        peer: true,
        via: Some("vxlan_tdemo0".into()),
        ..target("10.20.129.251")
    }
}

fn refused(edit: impl FnOnce(&mut TargetParams)) -> String {
    let mut entry = peer();
    edit(&mut entry);
    Request::from_params(params(vec![target("203.0.113.8"), entry])).expect_err("refused")
}

#[test]
fn a_peer_is_an_echo_that_must_reply_by_its_via_in_the_workloads_subnet() {
    let request = Request::from_params(params(vec![peer()])).unwrap();
    assert!(request.targets[0].peer);
    assert_eq!(request.targets[0].via.as_deref(), Some("vxlan_tdemo0"));
    assert_eq!(
        refused(|t| t.via = None),
        "targets[1].via: missing for the peer 10.20.129.251; its replies prove the fabric only \
         when its requests are seen leaving by the port toward the other node: give via, the \
         VNet's VXLAN port (e.g. vxlan_tdemo0) or a VLAN zone's uplink"
    );
    assert_eq!(
        refused(|t| {
            t.proto = Proto::Tcp;
            t.port = Some(22);
        }),
        "targets[1].peer: true with proto: tcp; a peer is another node's workload, which \
         answers echoes only: set proto: icmp, or drop peer"
    );
    assert_eq!(
        refused(|t| t.expect = Expect::Blocked),
        "targets[1].peer: true with expect: blocked; a peer proves that the fabric carries the \
         subnet between the nodes, so it must answer: set expect: reply, or drop peer"
    );
    assert_eq!(
        refused(|t| t.address = "10.20.130.251".into()),
        "targets[1].peer: true but 10.20.130.251 is outside the workload's subnet \
         10.20.129.0/24; a peer is another node's workload in the same subnet: give its address \
         there, or drop peer"
    );
}

#[test]
fn via_is_an_interface_name_for_a_target_that_must_reply() {
    assert!(
        refused(|t| t.via = Some("vx/0".into()))
            .starts_with("targets[1].via: 'vx/0' is not a valid interface name"),
        "validated as every interface name"
    );
    let leak = |expect| {
        let mut p = params(vec![TargetParams {
            via: Some("vmbr0".into()),
            expect,
            ..target("10.20.99.5")
        }]);
        p.expect_egress_interface = None;
        Request::from_params(p)
    };
    assert_eq!(
        leak(Expect::None).unwrap_err(),
        "targets[0].via: vmbr0 given with expect: none; via is the interface a reply target's \
         requests must leave by: set expect: reply, or drop via"
    );
    assert!(
        leak(Expect::Reply).is_ok(),
        "any reply target may have a via"
    );
    let mut p = params(vec![target("203.0.113.8"), peer()]);
    p.forbidden_interfaces = Some(vec!["vmbr0".into(), "vxlan_tdemo0".into()]);
    assert_eq!(
        Request::from_params(p).unwrap_err(),
        "forbidden_interfaces[1]: vxlan_tdemo0 is also targets[1].via; a target's requests \
         cannot both be expected and forbidden there: drop it from one"
    );
    let twice = Request::from_params(params(vec![
        peer(),
        TargetParams {
            via: Some("vxlan_other0".into()),
            ..peer()
        },
    ]));
    assert!(
        twice
            .unwrap_err()
            .starts_with("targets[1]: 10.20.129.251 icmp is listed twice"),
        "another via is not another probe"
    );
}

#[test]
fn start_at_more_than_300_s_ahead_is_refused_naming_the_nodes_clock() {
    let now = 1_767_225_600.25;
    assert_eq!(check_start_at(now + 300.0, now), Ok(now + 300.0));
    assert_eq!(
        check_start_at(now - 5.0, now),
        Ok(now - 5.0),
        "already past: probing starts at once"
    );
    assert_eq!(
        check_start_at(now + 301.5, now),
        Err(
            "start_at: 1767225901.75 is 301.5 s after the node's clock (1767225600.250); the \
             run would wait that long before probing: give an instant at most 300 s ahead (and \
             check that the controller's and the node's clocks agree), or leave start_at out"
                .to_string()
        )
    );
    assert!(check_start_at(-1.0, now)
        .unwrap_err()
        .starts_with("start_at: -1 is not an instant; give seconds since the epoch"));
    // Through the run's options, on this machine's clock: a day ahead.
    let mut p = params(vec![target("203.0.113.8")]);
    p.start_at = Some(4_102_444_800.0);
    let msg = Run::from_params(p).unwrap_err();
    assert!(
        msg.starts_with("start_at: 4102444800 is ") && msg.contains("after the node's clock"),
        "{msg}"
    );
}

fn probes_run(targets: Vec<TargetParams>) -> Params {
    let mut p = params(Vec::new());
    p.vrf = String::new();
    p.address = String::new();
    p.expect_egress_interface = None;
    p.probes = Some(vec![ProbeParams {
        name: "tdemo".into(),
        vrf: Some("vrf_tdemo".into()),
        address: "10.20.129.250/24".into(),
        targets,
        ..ProbeParams::default()
    }]);
    p
}

#[test]
fn a_peer_without_start_at_is_refused_saying_why() {
    let why = "the peer's workload on its node must be up while this one probes it, and only \
               one start_at given to every node of the proof puts their probing in one window: \
               give start_at (seconds since the epoch, the same on every node)";
    let single = params(vec![target("203.0.113.8"), peer()]);
    assert_eq!(
        Run::from_params(single.clone()).unwrap_err(),
        format!("targets[1].peer: true without start_at; {why}")
    );
    let listed = probes_run(vec![target("203.0.113.8"), peer()]);
    assert_eq!(
        Run::from_params(listed.clone()).unwrap_err(),
        format!("probes[0].targets[1].peer: true without start_at (probe tdemo); {why}")
    );
    for mut p in [single, listed] {
        p.start_at = Some(1_000_000_000.0);
        let run = Run::from_params(p).unwrap();
        assert_eq!(run.start_at, Some(1_000_000_000.0));
    }
}

/// The lab node with tdemo0's VXLAN port, as a Proxmox EVPN zone makes it.
fn fabric_node() -> NodeFacts {
    let node = lab_node();
    let mut links: Vec<Link> = node.links.iter().cloned().collect();
    links.push(link(12, "vxlan_tdemo0", Some("vxlan"), Some(7)));
    NodeFacts {
        links: Links::new(links),
        addresses: node.addresses,
    }
}

fn planned(targets: Vec<TargetParams>) -> Result<Plan, String> {
    resolve(
        &Request::from_params(params(targets)).unwrap(),
        &fabric_node(),
    )
}

#[test]
fn only_a_peer_may_be_in_the_vnets_own_subnet() {
    let neighbour = planned(vec![target("203.0.113.8"), target("10.20.129.251")]);
    assert_eq!(
        neighbour.unwrap_err(),
        "targets[1].address: 10.20.129.251 is in the VNet's own subnet 10.20.129.0/24 \
         (tdemo0); a probe to it never leaves the node, so it proves nothing about egress: give \
         a host beyond the node, or, for another node's workload of the same proof, set peer: \
         true and via"
    );
    let plan = planned(vec![target("203.0.113.8"), peer()]).unwrap();
    assert!(plan.targets[1].peer);
}

#[test]
fn a_via_must_exist_and_is_captured_not_forbidden() {
    let via = |name: &str| TargetParams {
        via: Some(name.into()),
        ..peer()
    };
    // A via the node lacks is its state, not bad input: the run goes on, the target fails.
    assert!(planned(vec![via("vxlan_nope")]).unwrap().vias.is_empty());
    assert_eq!(
        planned(vec![via("tdemo0")]).unwrap_err(),
        "targets[0].via: tdemo0 is the VNet the workload plugs into; every probe crosses it, \
         also one a neighbour answers: give the VNet's port toward the other node (its VXLAN \
         port, e.g. vxlan_tdemo0) or the VLAN zone's uplink"
    );
    let plan = planned(vec![via("vxlan_tdemo0")]).unwrap();
    // A port of the VNet, not watched on its own account: captured as the peer's way out.
    let watched = watched(&plan, &fabric_node().links, 99);
    assert!(
        watched
            .iter()
            .any(|(i, role)| i.name == "vxlan_tdemo0" && *role == Role::Other),
        "{watched:?}"
    );
    // A via with an address in the main table is an expected way out, not a default forbidden.
    let through_vmbr0 = TargetParams {
        via: Some("vmbr0".into()),
        ..target("203.0.113.8")
    };
    let plan = planned(vec![through_vmbr0]).unwrap();
    let forbidden: Vec<&str> = plan.forbidden.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(forbidden, ["eth0", "vmbr0.51"]);
}

fn capture(interface: &str, role: Role, frames: Vec<Frame>) -> Capture {
    Capture {
        interface: interface.into(),
        role,
        frames,
        overflowed: false,
    }
}

#[test]
fn a_peer_answered_on_the_nodes_side_of_its_via_fails_naming_it() {
    let target = Target {
        address: PEER.into(),
        proto: Proto::Icmp,
        port: None,
        expect: Expect::Reply,
        size: None,
        peer: true,
        via: Some("vxlan_tdemo0".into()),
    };
    let markers = Markers {
        workload: WORKLOAD.into(),
        icmp_id: 0x48bc,
        local_ports: Vec::new(),
    };
    let answered = ProbeOutcome {
        sent: 3,
        received: 3,
        rtts_ms: vec![0.2; 3],
        ..ProbeOutcome::default()
    };
    let requests = |n: u16| -> Vec<Frame> {
        (0..n)
            .map(|sequence| {
                outgoing(ipv4(
                    WORKLOAD,
                    PEER,
                    &echo_request(0x48bc, sequence, &NONCE),
                ))
            })
            .collect()
    };
    // The peer's answers, arriving back across the port: each request turned into its reply.
    let replies = |n: u16| -> Vec<Frame> {
        (0..n)
            .map(|sequence| {
                let mut echo = echo_request(0x48bc, sequence, &NONCE);
                echo[0] = 0;
                let sum = u32::from(u16::from_be_bytes([echo[2], echo[3]])) + 0x0800;
                let sum = ((sum & 0xffff) + (sum >> 16)) as u16;
                echo[2..4].copy_from_slice(&sum.to_be_bytes());
                Frame {
                    packet_type: 0,
                    ..outgoing(ipv4(PEER, WORKLOAD, &echo))
                }
            })
            .collect()
    };
    let judged = |vxlan: Vec<Frame>, uplink: Vec<Frame>| {
        let captures = [
            capture("vmbr0.50", Role::Egress, uplink),
            capture("vxlan_tdemo0", Role::Other, vxlan),
        ];
        build(
            std::slice::from_ref(&target),
            std::slice::from_ref(&answered),
            &captures,
            0,
            &markers,
        )
    };
    // Across the fabric: every request left by the VXLAN port.
    let across = judged([requests(3), replies(3)].concat(), Vec::new());
    assert_eq!(across.verdict, Verdict::Passed, "{:?}", across.problems);
    assert_eq!(across.targets[0].left_by, ["vxlan_tdemo0"]);
    assert!(across.targets[0].peer);
    assert_eq!(across.targets[0].via.as_deref(), Some("vxlan_tdemo0"));
    // A neighbour on the node's bridge answered: nothing crossed the port; nor does leaving
    // by the expected egress stand in for it.
    let expected = "10.20.129.251 icmp: 3/3 replies, but no probe packet left by vxlan_tdemo0 \
                    (via): the replies did not come across vxlan_tdemo0, they were answered on \
                    the node's side of it";
    // The request flooded across the port too, but the answer came from the node's side.
    for (vxlan, uplink) in [
        (Vec::new(), Vec::new()),
        (Vec::new(), requests(3)),
        (requests(3), Vec::new()),
    ] {
        let report = judged(vxlan, uplink);
        assert_eq!(report.verdict, Verdict::Failed);
        assert!(!report.targets[0].passed);
        assert_eq!(report.problems, [expected]);
    }
    // The node has no such port (a VNet whose VXLAN device is gone): named, whatever answered.
    let gone = build(
        std::slice::from_ref(&target),
        std::slice::from_ref(&answered),
        &[capture("vmbr0.50", Role::Egress, requests(3))],
        0,
        &markers,
    );
    assert_eq!(gone.verdict, Verdict::Failed);
    // The reload it asks for is the collection's one advice.
    let reload = deevnet_runtime::advice::reload_interfaces(deevnet_runtime::advice::THIS_NODE);
    assert_eq!(
        gone.problems,
        [format!(
            "10.20.129.251 icmp: via vxlan_tdemo0 does not exist on this node, so nothing of it can \
             cross there: re-create the VNet's port toward the other nodes: {reload}"
        )]
    );
}
