//! Issue 29, items 2, 6 and 7, on a real kernel (the lab of `in_namespace.rs`; needs root):
//! noise that filled the capture, a neighbour's short ICMP error, and forged egress.

use crate::in_namespace::{probe_args, Lab, BLACKHOLE};
use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The probe's payload before its nonce: what a forger knows from the source or one capture.
const OLD_PAYLOAD: &[u8] = b"deevnet.net egress_probe";

/// Sends `packets` (ICMP messages, checksummed here) from `source` in `ns` to `destination`,
/// round after round, `pause` between rounds, until dropped.
struct Spray {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<u64>>,
}

impl Spray {
    fn start(
        ns: &TestNamespace,
        source: Ipv4Addr,
        destination: Ipv4Addr,
        packets: Vec<Vec<u8>>,
        pause: Duration,
    ) -> Spray {
        let fd = ns.enter(move || {
            // SAFETY: plain syscalls; the descriptor is owned right away.
            let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP) };
            assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let sa = sockaddr(source);
            let bound = unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    &sa as *const libc::sockaddr_in as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            assert_eq!(bound, 0, "bind: {}", std::io::Error::last_os_error());
            fd
        });
        let packets: Vec<Vec<u8>> = packets.into_iter().map(checksummed).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let to = sockaddr(destination);
            let mut sent = 0u64;
            while !stopping.load(Ordering::Relaxed) {
                for packet in &packets {
                    // SAFETY: packet and to are valid for their lengths.
                    let n = unsafe {
                        libc::sendto(
                            fd.as_raw_fd(),
                            packet.as_ptr() as *const libc::c_void,
                            packet.len(),
                            0,
                            &to as *const libc::sockaddr_in as *const libc::sockaddr,
                            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                        )
                    };
                    sent += u64::from(n > 0);
                }
                std::thread::sleep(pause);
            }
            sent
        });
        Spray {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Spray {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn sockaddr(address: Ipv4Addr) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(address).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn checksummed(mut icmp: Vec<u8>) -> Vec<u8> {
    icmp[2] = 0;
    icmp[3] = 0;
    let mut sum: u32 = icmp
        .chunks(2)
        .map(|p| u32::from(u16::from_be_bytes([p[0], *p.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    icmp[2..4].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    icmp
}

/// An echo reply as the probe's was before the nonce: identifier, sequence, payload.
fn forged_reply(id: u16, sequence: u16) -> Vec<u8> {
    let mut icmp = vec![0, 0, 0, 0];
    icmp.extend_from_slice(&id.to_be_bytes());
    icmp.extend_from_slice(&sequence.to_be_bytes());
    icmp.extend_from_slice(OLD_PAYLOAD);
    icmp
}

/// The module run on the node while something else happens; the result.
fn run_while(lab: &Lab, args: Value, during: impl FnOnce(u32) -> Spray) -> Value {
    let (child, _dir) = lab.spawn(&args);
    let spray = during(child.id());
    let output = child.wait_with_output().unwrap();
    drop(spray);
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: exit {:?}, stdout {}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// Item 6: any neighbour on the VNet may send the workload an ICMP unreachable quoting 17
/// bytes; the module aborted (exit 134, index out of bounds at probe.rs:150).
#[test]
fn a_neighbours_short_icmp_error_does_not_abort_the_probe() {
    let lab = Lab::new();
    // Destination-unreachable quoting 17 bytes: an IP header cut after the first destination byte.
    let mut short = vec![3, 1, 0, 0, 0, 0, 0, 0];
    short.extend_from_slice(&[0x45, 0, 0, 0x34, 0, 0, 0, 0, 0x40, 1, 0, 0]);
    short.extend_from_slice(&[10, 20, 129, 250, 203]);
    assert_eq!(short.len(), 8 + 17);
    // The first target waits its whole timeout, reading every ICMP message that arrives.
    let targets = json!([{"address": BLACKHOLE, "expect": "none"}, {"address": "203.0.113.8"}]);
    let result = run_while(&lab, probe_args(targets), |_| {
        Spray::start(
            &lab._vm,
            Ipv4Addr::new(10, 20, 129, 10),
            Ipv4Addr::new(10, 20, 129, 250),
            vec![short],
            Duration::from_millis(10),
        )
    });
    assert_eq!(result["verdict"], json!("passed"), "{result:#}");
    assert_eq!(result["targets"][1]["received"], json!(2));
    assert!(lab.probe_links().is_empty());
}

/// Item 7: egress blackholed on the node, a VM on the VNet answering in the target's name for
/// every identifier. The control run first: without expect_egress_interface, real egress is
/// proven by the probe's packets leaving by an interface that is not forbidden.
#[test]
fn forged_echo_replies_while_egress_is_blackholed_prove_nothing() {
    let lab = Lab::new();
    let mut args = probe_args(json!([{"address": "203.0.113.8"}]));
    args.as_object_mut()
        .unwrap()
        .remove("expect_egress_interface");
    args["forbidden_interfaces"] = json!(["mgmt"]);
    let control = lab.run(args.clone());
    assert_eq!(control["verdict"], json!("passed"), "{control:#}");
    assert_eq!(control["targets"][0]["left_by"], json!(["uplink"]));
    let uplink = &control["interfaces"].as_array().unwrap()[1];
    assert_eq!(
        (&uplink["name"], &uplink["role"]),
        (&json!("uplink"), &json!("other"))
    );

    lab.node.ip("route add blackhole 203.0.113.8/32");
    lab._vm.ip("addr add 203.0.113.8/32 dev eth0");
    let result = run_while(&lab, args, |pid| {
        // The run's identifier first each round (a spray of all 65,536 finds it too, slower).
        let id = (pid & 0xffff) as u16;
        let mut packets: Vec<Vec<u8>> = (0..2).map(|seq| forged_reply(id, seq)).collect();
        packets.extend((0..512u16).map(|other| forged_reply(other.wrapping_mul(128), 0)));
        Spray::start(
            &lab._vm,
            Ipv4Addr::new(203, 0, 113, 8),
            Ipv4Addr::new(10, 20, 129, 250),
            packets,
            Duration::from_millis(1),
        )
    });
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    let target = &result["targets"][0];
    assert_eq!(target["received"], json!(0), "{target}");
    assert_eq!(target["left_by"], json!([]), "{target}");
    assert!(lab.probe_links().is_empty());
}

/// Item 7: a target on the VNet itself answers without anything leaving the node.
#[test]
fn a_target_in_the_vnets_own_subnet_is_refused() {
    let lab = Lab::new();
    let mut args = probe_args(json!([{"address": "10.20.129.10"}]));
    args.as_object_mut()
        .unwrap()
        .remove("expect_egress_interface");
    args["forbidden_interfaces"] = json!(["mgmt"]);
    let result = lab.run(args);
    assert_eq!(result["failed"], json!(true), "{result:#}");
    assert_eq!(
        result["msg"],
        json!(
            "targets[0].address: 10.20.129.10 is in the VNet's own subnet 10.20.129.0/24 \
             (vnet0); a probe to it never leaves the node, so it proves nothing about egress: \
             give a host beyond the node, or, for another node's workload of the same proof, \
             set peer: true and via"
        )
    );
    assert!(lab.probe_links().is_empty());
}

/// Item 2: the node's own traffic toward a leak target on the forbidden interface, more than
/// the capture keeps, while the probe leaks there. The cap counted it and hid the leak.
#[test]
fn a_flood_toward_the_target_on_the_forbidden_interface_does_not_hide_a_leak() {
    let lab = Lab::new();
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let socket = lab.node.enter(|| UdpSocket::bind("10.20.99.22:0").unwrap());
    let flood = std::thread::spawn(move || {
        let to = SocketAddrV4::new(Ipv4Addr::new(10, 20, 99, 5), 9);
        let mut sent = 0u64;
        while !stopping.load(Ordering::Relaxed) {
            for _ in 0..200 {
                sent += u64::from(socket.send_to(b"unrelated", to).is_ok());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        sent
    });
    // A first target that waits its whole timeout: the flood is well past the cap when the
    // leak target's packets leave.
    let result = lab.run(probe_args(json!([
        {"address": BLACKHOLE, "expect": "none"},
        {"address": "10.20.99.5", "expect": "none"}])));
    stop.store(true, Ordering::Relaxed);
    let sent = flood.join().unwrap();
    assert!(sent > 20_000, "the flood sent only {sent} datagrams");
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert_eq!(
        result["problems"],
        json!(["2 tenant packets left by mgmt untranslated"])
    );
    assert_eq!(result["capture"], json!({"dropped": 0, "overflowed": []}));
    assert!(lab.probe_links().is_empty());
}

/// A host on the VNet answering ARP for `gateway` with its own MAC, until dropped.
struct ArpImpostor {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<u64>>,
}

impl ArpImpostor {
    fn start(ns: &TestNamespace, dev: &'static str, gateway: Ipv4Addr) -> ArpImpostor {
        let mac = link_mac(ns, dev);
        let fd = ns.enter(move || {
            const ETH_P_ARP: u16 = 0x0806;
            // SAFETY: plain syscalls; the descriptor is owned right away.
            let fd = unsafe {
                libc::socket(
                    libc::AF_PACKET,
                    libc::SOCK_DGRAM | libc::SOCK_NONBLOCK,
                    i32::from(ETH_P_ARP.to_be()),
                )
            };
            assert!(
                fd >= 0,
                "packet socket: {}",
                std::io::Error::last_os_error()
            );
            unsafe { OwnedFd::from_raw_fd(fd) }
        });
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut answered = 0u64;
            let mut buffer = [0u8; 128];
            while !stopping.load(Ordering::Relaxed) {
                // SAFETY: zeroed sockaddr_ll is valid; buffer and from are valid for their lengths.
                let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
                let mut from_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
                let len = unsafe {
                    libc::recvfrom(
                        fd.as_raw_fd(),
                        buffer.as_mut_ptr() as *mut libc::c_void,
                        buffer.len(),
                        0,
                        &mut from as *mut _ as *mut libc::sockaddr,
                        &mut from_len,
                    )
                };
                let arp = &buffer[..len.max(0) as usize];
                // A request (operation 1) for the gateway's address.
                if arp.len() < 28 || arp[6..8] != [0, 1] || arp[24..28] != gateway.octets() {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                let mut reply = arp[..28].to_vec();
                reply[7] = 2;
                reply[8..14].copy_from_slice(&mac);
                reply[14..18].copy_from_slice(&gateway.octets());
                reply[18..28].copy_from_slice(&arp[8..18]);
                let mut to = from;
                to.sll_halen = 6;
                to.sll_addr[..6].copy_from_slice(&arp[8..14]);
                // SAFETY: reply and to are valid for their lengths.
                let sent = unsafe {
                    libc::sendto(
                        fd.as_raw_fd(),
                        reply.as_ptr() as *const libc::c_void,
                        reply.len(),
                        0,
                        &to as *const libc::sockaddr_ll as *const libc::sockaddr,
                        std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
                    )
                };
                answered += u64::from(sent > 0);
            }
            answered
        });
        ArpImpostor {
            stop,
            thread: Some(thread),
        }
    }

    /// How many ARP requests it answered.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap())
    }
}

impl Drop for ArpImpostor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The MAC of `dev` in `ns`, from `ip -o link`.
fn link_mac(ns: &TestNamespace, dev: &str) -> [u8; 6] {
    let output = std::process::Command::new("ip")
        .args(["-n", ns.name(), "-o", "link", "show", "dev", dev])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let mac = text
        .split_whitespace()
        .skip_while(|word| *word != "link/ether")
        .nth(1)
        .unwrap_or_else(|| panic!("no MAC on {dev}: {text}"));
    let bytes: Vec<u8> = mac
        .split(':')
        .map(|part| u8::from_str_radix(part, 16).unwrap())
        .collect();
    bytes.try_into().unwrap()
}

/// EP1: a VM on the VNet claims the gateway's address and routes the workload's traffic
/// itself: the egress target on to the node, the leak toward management dropped. Here the
/// node does not answer ARP on the VNet at all (arp_ignore 8), so the impostor's answer is the
/// only one: without the pinned gateway the workload would route by the VM, see its egress
/// pass and its leak vanish. With it, the workload's packets go to the node's bridge, and the
/// leak by management is seen, as without the VM.
#[test]
fn a_neighbour_claiming_the_gateway_cannot_hide_a_leak() {
    let lab = Lab::new();
    let targets = json!([{"address": "203.0.113.8"}, {"address": "10.20.99.5", "expect": "none"}]);
    let control = lab.run(probe_args(targets.clone()));
    assert_eq!(control["verdict"], json!("failed"), "{control:#}");
    assert_eq!(control["targets"][0]["passed"], json!(true), "{control:#}");
    assert!(
        control["msg"]
            .as_str()
            .unwrap()
            .contains("tenant packets left by mgmt untranslated"),
        "{control:#}"
    );

    // A bridge MAC of its own, as Proxmox's bridges have (ifupdown2 sets it): one without
    // takes its lowest port's, and the workload's port may be that.
    lab.node.ip("link set vnet0 address 02:00:00:00:01:01");
    crate::in_namespace::sysctl(&lab.node, "conf/vnet0/arp_ignore", "8");
    // The VM: a router back to the node for everything but management, which it drops.
    crate::in_namespace::sysctl(&lab._vm, "ip_forward", "1");
    crate::in_namespace::sysctl(&lab._vm, "conf/all/send_redirects", "0");
    crate::in_namespace::sysctl(&lab._vm, "conf/eth0/send_redirects", "0");
    lab._vm.ip("route add default via 10.20.129.1");
    lab._vm.ip("route add blackhole 10.20.99.0/24");
    lab._vm.ip(&format!(
        "neigh replace 10.20.129.1 lladdr {} dev eth0 nud permanent",
        {
            let mac = link_mac(&lab.node, "vnet0");
            mac.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        }
    ));
    let impostor = ArpImpostor::start(&lab._vm, "eth0", Ipv4Addr::new(10, 20, 129, 1));
    let result = lab.run(probe_args(targets));
    impostor.stop();
    assert_eq!(result["verdict"], json!("failed"), "{result:#}");
    assert!(
        result["msg"]
            .as_str()
            .unwrap()
            .contains("tenant packets left by mgmt untranslated"),
        "{result:#}"
    );
    assert_eq!(result["targets"][0]["passed"], json!(true), "{result:#}");
    assert!(lab.probe_links().is_empty());
}
