//! The fabric proof's peers on a real kernel (needs root): two nodes, each a namespace with the
//! tenant's VNet bridge, joined by a VXLAN port on each over a veth underlay, as an EVPN zone
//! joins them (here with a static remote instead of BGP). The module runs on node A; the peer
//! workload on node B is a namespace holding the peer's address on B's bridge, and an impostor
//! holds it on A's own bridge instead.
//!
//! ```text
//!   workload 10.20.129.250 ┐                                          ┌ peer 10.20.129.251
//!   (impostor .251) ─ vnet0 (10.20.129.1/24) ─ vxlan_t0 ┐     ┌ vxlan_t0 ─ vnet0
//!                         node A        ul0 192.168.50.1 ── 192.168.50.2 ul0   node B
//! ```

use crate::in_namespace::wait_for_probe_on;
use crate::in_namespace::{pair, probe_links_of, result_of, run_on, spawn_on, state_of};
use deevnet_probe_port::sock;
use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

const WORKLOAD: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 250);
const PEER: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 251);
/// The VNet's MTU on both nodes: the VXLAN port's (1500 less the encapsulation).
const VNET_MTU: u64 = 1450;

/// Nodes A and B, their VNet bridges joined by their VXLAN ports over the underlay.
struct Fabric {
    a: TestNamespace,
    b: TestNamespace,
}

impl Fabric {
    fn new() -> Fabric {
        let a = TestNamespace::new("dvn-egp-fa");
        let b = TestNamespace::new("dvn-egp-fb");
        pair(&a, "ul0", &b, "ul0");
        for (node, local, remote) in [
            (&a, "192.168.50.1", "192.168.50.2"),
            (&b, "192.168.50.2", "192.168.50.1"),
        ] {
            node.ip(&format!("addr add {local}/24 dev ul0"));
            node.ip("link add vnet0 type bridge stp_state 0 forward_delay 0");
            node.ip(&format!(
                "link add vxlan_t0 type vxlan id 129 local {local} remote {remote} dstport 4789 \
                 dev ul0"
            ));
            node.ip("link set vxlan_t0 master vnet0");
            node.ip("link set vxlan_t0 up");
            node.ip("link set vnet0 up");
        }
        // The VNet's gateway on the node the workload is on (the peer's node needs none here).
        a.ip("addr add 10.20.129.1/24 dev vnet0");
        Fabric { a, b }
    }

    /// Node A as `before` was taken: no probe's veth, the same links, addresses and routes.
    fn a_as_it_was(&self, before: &str) {
        assert_eq!(probe_links_of(&self.a), Vec::<String>::new());
        assert_eq!(state_of(&self.a), before);
    }
}

/// A host with `address` on `node`'s VNet, by its port `tap`: held as long as it answers.
fn host(node: &TestNamespace, tap: &str, address: Ipv4Addr) -> TestNamespace {
    let host = TestNamespace::new("dvn-egp-fh");
    pair(&host, "eth0", node, tap);
    node.ip(&format!("link set {tap} master vnet0"));
    host.ip(&format!("addr add {address}/24 dev eth0"));
    host
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The peer target, its requests to leave by A's VXLAN port; `size`: a full-size one.
fn peer(size: Option<&str>) -> Value {
    let mut target = json!({"address": PEER.to_string(), "peer": true, "via": "vxlan_t0"});
    if let Some(size) = size {
        target["size"] = json!(size);
    }
    target
}

/// `start_at` as the result gives it back: serde_json's reading of a float may differ from the
/// one written in its last bit.
fn assert_same_instant(returned: &Value, start_at: f64) {
    let returned = returned.as_f64().unwrap();
    assert!(
        (returned - start_at).abs() < 1e-6,
        "{returned} for {start_at}"
    );
}

fn peer_args(targets: Value, start_at: f64, timeout: u32) -> Value {
    json!({"vrf": "default", "address": "10.20.129.250/24", "targets": targets, "count": 2,
           "timeout": timeout, "start_at": start_at})
}

#[test]
fn a_peer_across_the_vxlan_port_passes_small_and_full_size() {
    let fabric = Fabric::new();
    let _peer = host(&fabric.b, "tap201i0", PEER);
    let before = state_of(&fabric.a);
    // Long past: the workloads probe as soon as they are ready, and say how late they were.
    let start_at = now() - 100.0;
    let result = run_on(
        &fabric.a,
        peer_args(json!([peer(None), peer(Some("mtu"))]), start_at, 1),
    );
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    for target in result["targets"].as_array().unwrap() {
        assert_eq!(target["received"], json!(2), "{result:#}");
        assert_eq!(target["left_by"], json!(["vxlan_t0"]), "{result:#}");
        assert_eq!(
            (target["peer"].clone(), target["via"].clone()),
            (json!(true), json!("vxlan_t0"))
        );
    }
    assert_eq!(result["targets"][1]["size"], json!(VNET_MTU), "{result:#}");
    assert_eq!(result["probes"][0]["targets"][0]["via"], json!("vxlan_t0"));
    assert_same_instant(&result["start_at"], start_at);
    let late = result["start_late_secs"].as_f64().unwrap();
    assert!(late >= 100.0, "{result:#}");
    fabric.a_as_it_was(&before);
}

#[test]
fn a_peer_answered_on_the_nodes_own_bridge_fails_naming_via() {
    let fabric = Fabric::new();
    let _impostor = host(&fabric.a, "tap101i0", PEER);
    let before = state_of(&fabric.a);
    let result = run_on(&fabric.a, peer_args(json!([peer(None)]), now(), 1));
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert_eq!(result["targets"][0]["received"], json!(2), "{result:#}");
    assert_eq!(result["targets"][0]["left_by"], json!([]), "{result:#}");
    assert_eq!(
        result["msg"],
        json!(
            "10.20.129.251 icmp: 2/2 replies, but no probe packet left by vxlan_t0 (via): the \
             replies did not come across vxlan_t0, they were answered on the node's side of it"
        )
    );
    fabric.a_as_it_was(&before);
}

/// The peer's raw ICMP socket, bound to its address: it sees every echo that reaches it.
fn echo_socket(host: &TestNamespace) -> OwnedFd {
    host.enter(|| {
        let fd = sock::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP).unwrap();
        sock::bind_v4(&fd, std::net::SocketAddrV4::new(PEER, 0)).unwrap();
        fd
    })
}

/// `packet` (an IPv4 packet) is an ICMP message of `kind` from `source`: its identifier and
/// sequence.
fn icmp_from(packet: &[u8], kind: u8, source: Ipv4Addr) -> Option<(u16, u16)> {
    let header = usize::from(*packet.first()? & 0x0f) * 4;
    let icmp = packet.get(header..header + 8)?;
    (packet[9] == 1 && packet[12..16] == source.octets() && icmp[0] == kind).then(|| {
        (
            u16::from_be_bytes([icmp[4], icmp[5]]),
            u16::from_be_bytes([icmp[6], icmp[7]]),
        )
    })
}

/// In the peer's namespace: waits for the workload's `probes` echo requests, then sends it
/// `echoes` of its own, one after another, each answered or given up after a while. When the
/// first probe arrived (seconds since the epoch), and how many echoes were answered.
fn echoes_answered_after_its_probes(socket: &OwnedFd, probes: usize, echoes: u16) -> (f64, u16) {
    const ID: u16 = 0x7e57;
    let mut buffer = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut seen, mut first) = (0, None);
    while seen < probes {
        let len = sock::recv_until(socket, deadline, &mut buffer)
            .unwrap()
            .expect("the workload's probes never reached the peer");
        if icmp_from(&buffer[..len], 8, WORKLOAD).is_some() {
            first = first.or(Some(now()));
            seen += 1;
        }
    }
    let mut answered = 0;
    for sequence in 0..echoes {
        let mut echo = vec![8, 0, 0, 0];
        echo.extend_from_slice(&ID.to_be_bytes());
        echo.extend_from_slice(&sequence.to_be_bytes());
        let checksum = sock::internet_checksum(&echo);
        echo[2..4].copy_from_slice(&checksum.to_be_bytes());
        sock::sendto_v4(socket, &echo, WORKLOAD).unwrap();
        let given_up = Instant::now() + Duration::from_millis(500);
        while let Some(len) = sock::recv_until(socket, given_up, &mut buffer).unwrap() {
            if icmp_from(&buffer[..len], 0, WORKLOAD) == Some((ID, sequence)) {
                answered += 1;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    (first.unwrap_or_default(), answered)
}

/// The workload probes at start_at, not before; its own probes are answered at once, but it
/// stays up, answering, until start_at + count × timeout: the peer's echoes after them all
/// get their replies.
#[test]
fn every_workload_stays_up_answering_until_the_window_ends() {
    let fabric = Fabric::new();
    let peer_host = host(&fabric.b, "tap201i0", PEER);
    let socket = echo_socket(&peer_host);
    let before = state_of(&fabric.a);
    // Ahead of the setup (the ARP check alone takes 3 s); the window closes 2 × 3 s later.
    let start_at = now() + 8.0;
    let (child, _dir) = spawn_on(&fabric.a, &[], &peer_args(json!([peer(None)]), start_at, 3));
    let (first_probe, answered) = echoes_answered_after_its_probes(&socket, 2, 5);
    let result = result_of(child);
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(result["targets"][0]["received"], json!(2), "{result:#}");
    assert_same_instant(&result["start_at"], start_at);
    assert!(result["start_late_secs"].is_f64(), "{result:#}");
    // One clock, the machine's: the wait for start_at is a sleep until then (start_at as the
    // module read it, which may differ from the one written in its last bit).
    assert!(
        first_probe >= start_at - 1e-6,
        "the first probe came {} s before start_at",
        start_at - first_probe
    );
    assert_eq!(
        answered, 5,
        "the workload went before the window's end: {answered} of the peer's 5 echoes after \
         its own probes answered"
    );
    fabric.a_as_it_was(&before);
}

/// Killed while its workload waits for start_at: the namespace goes with the process, and the
/// veth with it (marked, for the next run's sweep, while the kernel tears it down).
#[test]
fn kill_9_while_waiting_for_start_at_leaves_nothing() {
    let fabric = Fabric::new();
    let _peer = host(&fabric.b, "tap201i0", PEER);
    let before = state_of(&fabric.a);
    let start_at = now() + 120.0;
    let (mut child, _dir) = spawn_on(&fabric.a, &[], &peer_args(json!([peer(None)]), start_at, 1));
    wait_for_probe_on(&fabric.a, &mut child);
    // Into the wait: the workload is configured within moments of its veth.
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run did not wait for start_at"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let settled = Instant::now();
    while !probe_links_of(&fabric.a).is_empty() && settled.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    fabric.a_as_it_was(&before);
}
