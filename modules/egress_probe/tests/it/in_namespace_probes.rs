//! Issue 25 on a real kernel (the lab of `in_namespace.rs` plus a second VNet; needs root):
//! many probes in one run, at once, each judged on its own packets; `expect: blocked`; full-size
//! DF probes.
//!
//! ```text
//!   ta 10.20.129.250 ── vnet0 (10.20.129.1/24) ┐
//!   tb 10.20.130.250 ── vnet1 (10.20.130.1/24) ┤ node ── uplink ── router ── internet 203.0.113.8
//!                                  mgmt host ──┘  (null routes: prohibit 10.20.200/24,
//!                                                  unreachable 10.20.201/24, blackhole 10.20.202/24)
//! ```

use crate::in_namespace::{Lab, BLACKHOLE};
use serde_json::{json, Value};

/// The lab with a second tenant VNet and the node's null routes.
fn lab() -> Lab {
    let lab = Lab::new();
    lab.node
        .ip("link add vnet1 type bridge stp_state 0 forward_delay 0");
    lab.node.ip("addr add 10.20.130.1/24 dev vnet1");
    lab.node.ip("link set vnet1 up");
    // A VM's tap on it, as on vnet0: a bridge that lost its last port loses its carrier.
    lab.node.ip("link add tap102i0 type veth peer name tap102p");
    lab.node.ip("link set tap102i0 master vnet1");
    lab.node.ip("link set tap102i0 up");
    lab.node.ip("link set tap102p up");
    lab.router.ip("route add 10.20.130.0/24 via 10.20.50.22");
    lab.node.ip("route add prohibit 10.20.200.0/24");
    lab.node.ip("route add unreachable 10.20.201.0/24");
    lab.node.ip("route add blackhole 10.20.202.0/24");
    lab
}

fn probe(name: &str, address: &str, targets: Value) -> Value {
    json!({"name": name, "vrf": "default", "address": address,
           "expect_egress_interface": "uplink", "targets": targets})
}

fn run_of(probes: Value) -> Value {
    json!({"probes": probes, "count": 2, "timeout": 1})
}

fn target(result: &Value, probe: usize, target: usize) -> &Value {
    &result["probes"][probe]["targets"][target]
}

#[test]
fn two_probes_at_once_are_each_judged_on_their_own_packets() {
    let lab = lab();
    // Tenant ta's traffic to the internet leaves by the management side (a policy route of
    // its source alone); tb's, to the same target, by the uplink.
    lab.node.ip("rule add from 10.20.129.250 lookup 100");
    lab.node
        .ip("route add 203.0.113.8 via 10.20.99.5 dev mgmt table 100");
    let before = lab.state();
    let result = lab.run(run_of(json!([
        probe(
            "ta",
            "10.20.129.250/24",
            json!([{"address": "203.0.113.8"}])
        ),
        probe(
            "tb",
            "10.20.130.250/24",
            json!([{"address": "203.0.113.8"}])
        ),
    ])));
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    let (ta, tb) = (&result["probes"][0], &result["probes"][1]);
    assert_eq!(
        (ta["name"].clone(), tb["name"].clone()),
        (json!("ta"), json!("tb"))
    );
    assert_eq!(ta["verdict"], json!("failed"), "{result:#}");
    let ta_msg = ta["msg"].as_str().unwrap();
    assert!(ta_msg.starts_with("ta: "), "{ta_msg}");
    assert!(
        ta_msg.contains("2 tenant packets left by mgmt untranslated"),
        "{ta_msg}"
    );
    // tb's packets to the same target are not counted as ta's, nor ta's leak as tb's.
    assert_eq!(tb["verdict"], json!("passed"), "{result:#}");
    assert_eq!(target(&result, 1, 0)["replies"], json!(2));
    assert_eq!(target(&result, 1, 0)["left_by"], json!(["uplink"]));
    let tb_mgmt = tb["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == json!("mgmt"))
        .unwrap();
    assert_eq!(tb_mgmt["packets"], json!(0), "{result:#}");
    // One line per failed probe, the tenant first.
    assert_eq!(result["msg"].as_str().unwrap(), ta_msg);
    assert!(result["problems"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p.as_str().unwrap().starts_with("ta: ")));
    assert!(lab.probe_links().is_empty());
    assert_eq!(lab.state(), before);
}

#[test]
fn blocked_targets_are_told_apart_and_an_answer_names_who_answered() {
    let lab = lab();
    let before = lab.state();
    let blocked = |address: &str| json!({"address": address, "expect": "blocked"});
    // One null route per probe: the node's ICMP errors to one source are rate-limited (a
    // burst of about two), and each probe has its own source.
    let result = lab.run(run_of(json!([
        probe(
            "ta",
            "10.20.129.250/24",
            json!([
                blocked("10.20.200.5"),
                // The other tenant's workload, started in the same run: it answers.
                blocked("10.20.130.250"),
                // Dropped beyond the node: the probe left it.
                blocked(BLACKHOLE),
            ])
        ),
        probe("tb", "10.20.130.250/24", json!([blocked("10.20.201.5")])),
        probe("tc", "10.20.129.240/24", json!([blocked("10.20.202.5")])),
    ])));
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert_eq!(
        target(&result, 0, 0)["blocked_by"],
        json!("icmp admin-prohibited"),
        "{result:#}"
    );
    assert_eq!(target(&result, 0, 0)["verdict"], json!("passed"));
    let answered = target(&result, 0, 1);
    assert_eq!(answered["verdict"], json!("failed"));
    assert_eq!(answered["answered_by"], json!("10.20.130.250"));
    let ta_msg = result["probes"][0]["msg"].as_str().unwrap();
    assert!(
        ta_msg.starts_with("ta: ")
            && ta_msg.contains("10.20.130.250 icmp: answered by 10.20.130.250 (2/2 probes)"),
        "{ta_msg}"
    );
    // Sent toward the perimeter by the expected egress and dropped there: blocked beyond the
    // node (the role's management targets on an exit node), told apart from a null route.
    let beyond = target(&result, 0, 2);
    assert_eq!(beyond["verdict"], json!("passed"), "{result:#}");
    assert_eq!(beyond["blocked_by"], json!("dropped beyond the node"));
    assert_eq!(beyond["left_by"], json!(["uplink"]));
    for (probe, by) in [(1, "icmp host-unreachable"), (2, "no answer")] {
        assert_eq!(
            result["probes"][probe]["verdict"],
            json!("passed"),
            "{result:#}"
        );
        assert_eq!(
            target(&result, probe, 0)["blocked_by"],
            json!(by),
            "{result:#}"
        );
    }
    assert!(lab.probe_links().is_empty());
    assert_eq!(lab.state(), before);
}

#[test]
fn probes_run_at_once_not_one_after_another() {
    let lab = lab();
    // Four probes, each waiting 2 × 1 s for a silent target: one after another, never more
    // than one workload would exist at a time.
    let probes: Vec<Value> = (0..4)
        .map(|i| {
            probe(
                &format!("t{i}"),
                &format!("10.20.129.{}/24", 240 + i),
                json!([{"address": "10.20.202.5", "expect": "blocked"}]),
            )
        })
        .collect();
    let (result, most_at_once) = lab.run_counting_workloads(run_of(json!(probes)));
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(result["probes"].as_array().unwrap().len(), 4);
    assert_eq!(most_at_once, 4, "the four workloads never existed together");
    assert!(lab.probe_links().is_empty());
}

#[test]
fn a_full_size_probe_passes_on_arrival_or_frag_needed_and_fails_on_a_silent_drop() {
    let lab = lab();
    // The router's next hop is 4 bytes short: it says so (fragmentation needed, MTU 1496).
    lab.router.ip("link set inet0 mtu 1496");
    lab.internet.ip("link set eth0 mtu 1496");
    let targets = json!([{"address": "203.0.113.8", "size": "mtu"},
                         {"address": "203.0.113.8", "size": 1400}]);
    let result = lab.run(run_of(json!([probe(
        "ta",
        "10.20.129.250/24",
        targets.clone()
    )])));
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(
        target(&result, 0, 0)["frag_needed_mtu"],
        json!(1496),
        "{result:#}"
    );
    // size: mtu is the VNet's, in bytes.
    assert_eq!(target(&result, 0, 0)["size"], json!(1500));
    assert_eq!(target(&result, 0, 1)["replies"], json!(2), "{result:#}");
    assert_eq!(target(&result, 0, 1)["frag_needed_mtu"], json!(null));

    // The same short hop, but the router's own packets back to the tenant are dropped (its
    // ICMP suppressed, as a filtering firewall would): the probe vanishes without a word.
    lab.router
        .ip("rule add iif lo to 10.20.129.0/24 lookup 200");
    lab.router.ip("route add blackhole default table 200");
    let result = lab.run(run_of(json!([probe("ta", "10.20.129.250/24", targets)])));
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert_eq!(target(&result, 0, 0)["verdict"], json!("failed"));
    assert_eq!(target(&result, 0, 1)["verdict"], json!("passed"));
    assert_eq!(
        result["msg"],
        json!("ta: 203.0.113.8 icmp: a DF probe of 1500 bytes got 0/2 replies and no fragmentation-needed came back: silently dropped (a hop's MTU is smaller and its ICMP is lost or filtered)")
    );
    assert!(lab.probe_links().is_empty());
}

#[test]
fn refusals_of_many_probes_name_the_probe_and_leave_nothing() {
    let lab = lab();
    let before = lab.state();
    let cases = [
        (
            json!([probe(
                "ta",
                "10.20.129.250/24",
                json!([{"address": "203.0.113.8", "size": 1501}])
            )]),
            "probes[0] (ta): targets[0].size: 1501 is above the MTU of vnet0 (1500)",
        ),
        (
            json!([
                probe(
                    "ta",
                    "10.20.129.250/24",
                    json!([{"address": "203.0.113.8"}])
                ),
                probe("tb", "10.20.130.10/24", json!([{"address": "203.0.113.8"}])),
                probe("tc", "10.20.129.10/24", json!([{"address": "203.0.113.8"}]))
            ]),
            "probes[2] (tc): address: 10.20.129.10 is in use on vnet0",
        ),
        (
            json!([
                probe(
                    "ta",
                    "10.20.129.250/24",
                    json!([{"address": "203.0.113.8"}])
                ),
                probe(
                    "tb",
                    "10.20.129.250/24",
                    json!([{"address": "203.0.113.8"}])
                )
            ]),
            "probes[1].address: 10.20.129.250 is also probe ta's",
        ),
        (
            // This kernel's bridges cannot filter VLANs: the refusal path, on a real dump.
            json!([{"name": "tv", "bridge": "vnet1", "vlan": 201, "address": "10.20.201.250/24",
                    "gateway": "10.20.201.1", "targets": [{"address": "203.0.113.8"}]}]),
            "probes[0] (tv): vlan: 201 given, but bridge vnet1 is not VLAN-aware (vlan_filtering is off)",
        ),
    ];
    for (probes, expected) in cases {
        let result = lab.run(run_of(probes));
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(expected),
            "expected {expected:?}, got {msg:?}"
        );
        assert_eq!(lab.state(), before, "after {expected}");
    }
}

#[test]
fn a_hundred_probes_are_up_together_and_leave_nothing() {
    // How long 100 probes take against one is a benchmark's question (the tenant play's probe
    // step); here, that they run together and clean up.
    let lab = lab();
    let before = lab.state();
    let probes: Vec<Value> = (0..100)
        .map(|i| {
            probe(
                &format!("t{i}"),
                &format!("10.20.129.{}/24", 100 + i),
                json!([{"address": "203.0.113.8"}]),
            )
        })
        .collect();
    let (result, most_at_once) =
        lab.run_counting_workloads(json!({"probes": probes, "count": 2, "timeout": 1}));
    assert_eq!(result["verdict"], json!("passed"), "{}", result["msg"]);
    assert_eq!(result["probes"].as_array().unwrap().len(), 100);
    assert_eq!(most_at_once, 100);
    assert!(lab.probe_links().is_empty());
    assert_eq!(lab.state(), before);
}

/// The lab in IPv6 too: the same links, each with an address of both families.
fn dual_stack(lab: &Lab) {
    let forward = |ns: &deevnet_runtime::test_support::TestNamespace| {
        let status = ns
            .command("sh")
            .arg("-c")
            .arg("echo 1 > /proc/sys/net/ipv6/conf/all/forwarding")
            .status()
            .unwrap();
        assert!(status.success());
    };
    for (ns, address, dev) in [
        (&lab.node, "fd00:129::1/64", "vnet0"),
        (&lab.node, "fd00:50::22/64", "uplink"),
        (&lab.node, "fd00:99::22/64", "mgmt"),
        (&lab.router, "fd00:50::1/64", "eth0"),
        (&lab.router, "2001:db8:113::1/64", "inet0"),
        (&lab.internet, "2001:db8:113::8/64", "eth0"),
        (&lab._vm, "fd00:129::10/64", "eth0"),
        (&lab.mgmt, "fd00:99::5/64", "eth0"),
    ] {
        ns.ip(&format!("-6 addr add {address} dev {dev} nodad"));
    }
    lab.internet.ip("-6 route add default via 2001:db8:113::1");
    lab.router.ip("-6 route add fd00:129::/64 via fd00:50::22");
    lab.node.ip("-6 route add default via fd00:50::1");
    lab.node.ip("-6 route add prohibit fd00:200::/64");
    lab.mgmt.ip("-6 route add default via fd00:99::22");
    forward(&lab.node);
    forward(&lab.router);
    // The internet host's services in IPv6: TCP 443 accepts, UDP 53 answers with the ID.
    let (listener, dns) = lab.internet.enter(|| {
        (
            std::net::TcpListener::bind("[2001:db8:113::8]:443").unwrap(),
            std::net::UdpSocket::bind("[2001:db8:113::8]:53").unwrap(),
        )
    });
    std::thread::spawn(move || for _stream in listener.incoming().flatten() {});
    std::thread::spawn(move || {
        let mut buffer = [0u8; 512];
        while let Ok((len, peer)) = dns.recv_from(&mut buffer) {
            if len >= 2 {
                let _ = dns.send_to(
                    &[buffer[0], buffer[1], 0x81, 0x80, 0, 0, 0, 0, 0, 0, 0, 0],
                    peer,
                );
            }
        }
    });
}

#[test]
fn ipv6_probes_egress_leaks_and_blocks_beside_an_ipv4_one() {
    let lab = lab();
    dual_stack(&lab);
    let before = lab.state();
    let result = lab.run(run_of(json!([
        probe(
            "t6",
            "fd00:129::250/64",
            json!([
                {"address": "2001:db8:113::8"},
                {"address": "2001:db8:113::8", "size": "mtu"},
            {"address": "2001:db8:113::8", "proto": "tcp", "port": 443},
            {"address": "2001:db8:113::8", "proto": "udp"},
                {"address": "fd00:99::5", "expect": "none"},
                {"address": "fd00:200::5", "expect": "blocked"},
            ])
        ),
        probe(
            "t4",
            "10.20.129.250/24",
            json!([{"address": "203.0.113.8"}])
        ),
    ])));
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert_eq!(
        result["msg"],
        json!("t6: 2 tenant packets left by mgmt untranslated"),
        "{result:#}"
    );
    assert_eq!(target(&result, 0, 0)["replies"], json!(2), "{result:#}");
    assert_eq!(target(&result, 0, 0)["left_by"], json!(["uplink"]));
    assert_eq!(
        target(&result, 0, 1)["replies"],
        json!(2),
        "a full-size ICMPv6 echo: {result:#}"
    );
    assert_eq!(target(&result, 0, 1)["size"], json!(1500));
    assert_eq!(
        target(&result, 0, 5)["blocked_by"],
        json!("icmp admin-prohibited"),
        "{result:#}"
    );
    for (t, proto) in [(2, "tcp"), (3, "udp")] {
        assert_eq!(
            target(&result, 0, t)["replies"],
            json!(2),
            "{proto} over IPv6: {result:#}"
        );
        assert_eq!(
            target(&result, 0, t)["left_by"],
            json!(["uplink"]),
            "{result:#}"
        );
    }
    let mgmt = result["probes"][0]["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == json!("mgmt"))
        .unwrap();
    assert_eq!(mgmt["sample"][0]["source"], json!("fd00:129::250"));
    assert_eq!(
        result["probes"][1]["verdict"],
        json!("passed"),
        "{result:#}"
    );
    assert!(lab.probe_links().is_empty());
    assert_eq!(lab.state(), before);

    // The address-in-use check in IPv6: the workload's own duplicate address detection.
    let taken = lab.run(run_of(json!([probe(
        "t6",
        "fd00:129::10/64",
        json!([{"address": "2001:db8:113::8"}])
    )])));
    let msg = taken["msg"].as_str().unwrap();
    assert!(
        msg.starts_with("probes[0] (t6): address: fd00:129::10 is in use on the VNet (duplicate address detection"),
        "{msg}"
    );
    assert!(lab.probe_links().is_empty());
    assert_eq!(lab.state(), before);
}

/// Echo requests toward 198.51.100.0/24 the router receives while `during` runs, in order of
/// arrival: (destination's last octet, ICMP sequence).
fn requests_at_router(lab: &Lab, during: impl FnOnce()) -> Vec<(u8, u16)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let socket = lab.router.enter(|| {
        // SAFETY: plain syscall; the descriptor is owned right away.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK,
                (libc::ETH_P_IP as u16).to_be() as i32,
            )
        };
        assert!(
            fd >= 0,
            "packet socket: {}",
            std::io::Error::last_os_error()
        );
        unsafe { OwnedFd::from_raw_fd(fd) }
    });
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = stop.clone();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 2048];
        while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
            // SAFETY: buffer is valid for its length.
            let len = unsafe {
                libc::recv(
                    socket.as_raw_fd(),
                    buffer.as_mut_ptr() as *mut libc::c_void,
                    buffer.len(),
                    0,
                )
            };
            if len < 28 {
                std::thread::sleep(std::time::Duration::from_millis(5));
                continue;
            }
            let packet = &buffer[..len as usize];
            let header = usize::from(packet[0] & 0x0f) * 4;
            let echo_request = packet[9] == 1 && packet.get(header) == Some(&8);
            if echo_request && packet[16..19] == [198, 51, 100] {
                let sequence = u16::from_be_bytes([packet[header + 6], packet[header + 7]]);
                seen.push((packet[19], sequence));
            }
        }
        seen
    });
    during();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reader.join().unwrap()
}

#[test]
fn every_target_of_a_workload_is_probed_at_once() {
    let lab = crate::in_namespace::Lab::new();
    // Four targets the router drops silently: each waits its whole timeout per attempt.
    for last in 10..=12 {
        lab.router
            .ip(&format!("route add blackhole 198.51.100.{last}/32"));
    }
    let silent: Vec<Value> = (9..=12)
        .map(|last| json!({"address": format!("198.51.100.{last}"), "expect": "none"}))
        .collect();
    let mut result = Value::Null;
    let requests = requests_at_router(&lab, || {
        result = lab.run(crate::in_namespace::probe_args(json!(silent)));
    });
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    // Two attempts per target: eight requests. One after another, the first two would go to
    // one target; at once, the first four go to four.
    assert_eq!(requests.len(), 8, "{requests:?}");
    let mut first: Vec<u8> = requests[..4].iter().map(|(target, _)| *target).collect();
    first.sort_unstable();
    assert_eq!(first, [9, 10, 11, 12], "{requests:?}");
    // Each target's attempts keep their order and a sequence block of their own.
    let mut sequences: Vec<u16> = requests.iter().map(|(_, sequence)| *sequence).collect();
    sequences.sort_unstable();
    sequences.dedup();
    assert_eq!(sequences.len(), 8, "{requests:?}");
    for target in 9..=12 {
        let of: Vec<u16> = requests
            .iter()
            .filter(|(t, _)| *t == target)
            .map(|(_, sequence)| *sequence)
            .collect();
        assert!(of.len() == 2 && of[0] + 1 == of[1], "{requests:?}");
    }
}

/// EP3: the node lets the probes out but drops only the target's answers. The answers were
/// seen arriving by the uplink: the target is reachable, not blocked.
#[test]
fn a_target_whose_answers_the_node_drops_is_reachable_not_blocked() {
    let lab = crate::in_namespace::Lab::new();
    lab.node
        .ip("rule add from 203.0.113.8 iif uplink lookup 100");
    lab.node.ip("route add blackhole default table 100");
    let result = lab.run(crate::in_namespace::probe_args(json!([
        {"address": "203.0.113.8", "expect": "blocked"}
    ])));
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert_eq!(result["targets"][0]["answered_by"], json!("203.0.113.8"));
    assert_eq!(result["targets"][0]["blocked_by"], json!(null));
    assert_eq!(
        result["msg"],
        json!(
            "203.0.113.8 icmp: answers arrived at the node by uplink (2) and were dropped there, \
             before the workload though it must be blocked: the isolation is missing"
        )
    );
    assert!(lab.probe_links().is_empty());
}

/// EP4: the node's firewall rejects the connection on the way out with a reset in the
/// target's name, as Proxmox's REJECT does: nothing left the node, so the node blocked it.
#[test]
fn a_reject_by_the_node_is_blocking_not_an_answer() {
    let lab = crate::in_namespace::Lab::new();
    let nft = |rule: &str| {
        let status = lab
            .node
            .command("/usr/sbin/nft")
            .arg(rule)
            .status()
            .expect("nft");
        assert!(status.success(), "nft {rule}");
    };
    nft("add table inet deevnet_test");
    nft("add chain inet deevnet_test forward { type filter hook forward priority 0; }");
    nft("add rule inet deevnet_test forward ip daddr 203.0.113.8 tcp dport 443 reject with tcp reset");
    let result = lab.run(crate::in_namespace::probe_args(json!([
        {"address": "203.0.113.8", "proto": "tcp", "port": 443, "expect": "blocked"}
    ])));
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(
        result["targets"][0]["blocked_by"],
        json!("rejected by the node")
    );
    assert_eq!(result["targets"][0]["left_by"], json!([]));
    assert!(lab.probe_links().is_empty());
}
