//! Issue 45's traffic findings on a real kernel: a client on the transit network, the router,
//! and an upstream behind the uplink holding an Internet, two private and a VPC address, each
//! in a namespace of its own. Each case changes the router's ruleset as an attacker with nft
//! access would, shows that a private or VPC address now receives what the client sends, and
//! that the audit then does not say `enforced` (nor `closed`, when the gate is voided).

use crate::in_namespace::Router;
use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::net::UdpSocket;
use std::time::Duration;

const INTERNET: &str = "203.0.113.8";
const PRIVATE: &str = "10.10.0.5";
const PRIVATE_172: &str = "172.16.0.5";
const VPC: &str = "10.202.0.5";
/// UDP datagrams sent to each target per probe.
const SENT: usize = 20;

struct Lab {
    router: Router,
    client: TestNamespace,
    upstream: TestNamespace,
}

impl Lab {
    /// The three namespaces wired and addressed, the router enforced (its gate and table), and
    /// a counter of arrivals per target in the upstream's input hook.
    fn new() -> Lab {
        let client = TestNamespace::new("dvn-trc");
        let upstream = TestNamespace::new("dvn-tru");
        let router = Router::with_links(|ns| {
            ns.ip("link add tr-transit type veth peer name c0");
            ns.ip(&format!("link set c0 netns {}", client.name()));
            ns.ip("link add tr-up type veth peer name u0");
            ns.ip(&format!("link set u0 netns {}", upstream.name()));
            for command in [
                "addr add 198.51.100.1/24 dev tr-transit",
                "addr add 203.0.113.1/29 dev tr-up",
                "link set tr-transit up",
                "link set tr-up up",
                "route add default via 203.0.113.2",
            ] {
                ns.ip(command);
            }
        });
        for command in [
            "addr add 198.51.100.2/24 dev c0",
            "link set c0 up",
            "route add default via 198.51.100.1",
        ] {
            client.ip(command);
        }
        upstream.ip("addr add 203.0.113.2/29 dev u0");
        upstream.ip("link set u0 up");
        for address in [INTERNET, PRIVATE, PRIVATE_172, VPC] {
            upstream.ip(&format!("addr add {address}/32 dev lo"));
        }
        // The reverse-path filter is the other half of issue 45; here it stays out of the way.
        router.sh("sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.tr-transit.rp_filter=0");
        let counters: String = [INTERNET, PRIVATE, PRIVATE_172, VPC]
            .iter()
            .map(|a| format!("counter c{} {{}}\n", a.replace('.', "_")))
            .collect();
        let rules: String = [INTERNET, PRIVATE, PRIVATE_172, VPC]
            .iter()
            .map(|a| format!("ip daddr {a} counter name c{}\n", a.replace('.', "_")))
            .collect();
        let mut nft = upstream
            .command("nft")
            .args(["-f", "-"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("nft");
        use std::io::Write;
        nft.stdin
            .take()
            .expect("stdin")
            .write_all(
                format!("table ip arrivals {{\n{counters}chain input {{ type filter hook input priority 0;\n{rules}}}\n}}\n")
                    .as_bytes(),
            )
            .expect("write");
        assert!(nft.wait().expect("nft").success());
        router.enforce();
        Lab {
            router,
            client,
            upstream,
        }
    }

    fn arrived(&self, address: &str) -> u64 {
        let output = self
            .upstream
            .command("nft")
            .args(["-j", "list", "counter", "ip", "arrivals"])
            .arg(format!("c{}", address.replace('.', "_")))
            .output()
            .expect("nft");
        let listing: Value = serde_json::from_slice(&output.stdout).expect("nft JSON");
        listing["nftables"]
            .as_array()
            .and_then(|items| items.iter().find_map(|i| i.get("counter")))
            .and_then(|c| c["packets"].as_u64())
            .expect("the counter")
    }

    /// Sends [`SENT`] datagrams to `address:port` from the client; how many arrived upstream.
    fn send(&self, address: &'static str, port: u16) -> u64 {
        let before = self.arrived(address);
        self.client.enter(move || {
            let socket = UdpSocket::bind("0.0.0.0:0").expect("socket");
            for _ in 0..SENT {
                socket.send_to(b"transit", (address, port)).expect("send");
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        self.arrived(address) - before
    }

    fn state(&self) -> Value {
        let (_, result) = self.router.run(json!({}));
        result
    }
}

fn state_of(result: &Value) -> &str {
    result["state"].as_str().unwrap_or_default()
}

#[test]
fn the_enforced_router_forwards_to_the_internet_only_and_says_enforced() {
    let lab = Lab::new();
    assert_eq!(lab.send(INTERNET, 9), SENT as u64);
    for target in [PRIVATE, PRIVATE_172, VPC] {
        assert_eq!(lab.send(target, 9), 0, "{target}");
    }
    assert_eq!(lab.send(VPC, 53), 0, "DNS to a VPC");
    let result = lab.state();
    assert_eq!(state_of(&result), "enforced", "{result:#}");
}

#[test]
fn tr1_another_table_setting_the_gate_bit_voids_the_gate_and_the_audit_says_open() {
    let lab = Lab::new();
    lab.router.sh("nft add table ip mangle && nft add chain ip mangle PREROUTING '{ type filter hook prerouting priority -150; }' && nft add rule ip mangle PREROUTING meta mark set ct mark && nft add rule ip mangle PREROUTING meta mark set meta mark or 0x400000");
    let result = lab.state();
    assert_eq!(state_of(&result), "open", "{result:#}");
    // The table deleted: the gate should refuse everything; the writer makes it pass all.
    lab.router.sh("nft delete table inet deevnet_transit");
    assert!(lab.send(PRIVATE, 9) > 0, "the private host is reached");
    let result = lab.state();
    assert_eq!(state_of(&result), "open", "{result:#}");
    let gate = result["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "routing_gate"))
        .expect("routing_gate");
    assert!(
        gate["message"].as_str().is_some_and(
            |m| m.contains("ip mangle PREROUTING (rule handle 3) sets the packet mark")
        ),
        "{gate:#}"
    );
}

/// The rule of `chain` in the table that `nft -a` lists as `listed`, by its handle.
fn handle(lab: &Lab, chain: &str, listed: &str) -> String {
    let listing = lab
        .router
        .sh(&format!("nft -a list chain inet deevnet_transit {chain}"));
    listing
        .lines()
        .find_map(|l| l.trim().strip_prefix(listed)?.strip_prefix(" # handle "))
        .unwrap_or_else(|| panic!("{listed} in {listing}"))
        .to_string()
}

fn replace(lab: &Lab, chain: &str, listed: &str, with: &str) {
    let handle = handle(lab, chain, listed);
    lab.router.sh(&format!(
        "nft replace rule inet deevnet_transit {chain} handle {handle} {with}"
    ));
}

const PRIVATE_DROP: &str = "ip daddr @private_ranges counter packets 0 bytes 0 drop";

#[test]
fn tr2_a_conditional_jump_to_the_transit_chain_is_not_enforced() {
    let lab = Lab::new();
    replace(
        &lab,
        "forward",
        "iifname \"tr-transit\" jump from_transit",
        "iifname tr-transit ip saddr 198.51.100.7 jump from_transit",
    );
    assert_eq!(lab.send(PRIVATE, 9), SENT as u64);
    assert_eq!(lab.send(VPC, 9), SENT as u64);
    let result = lab.state();
    assert_ne!(state_of(&result), "enforced", "{result:#}");
}

#[test]
fn tr2_a_rate_limited_private_drop_is_not_enforced() {
    let lab = Lab::new();
    replace(
        &lab,
        "from_transit",
        PRIVATE_DROP,
        "ip daddr @private_ranges limit rate 1/minute burst 5 packets counter drop",
    );
    let arrived = lab.send(PRIVATE, 9);
    assert!(arrived > 0 && arrived < SENT as u64, "{arrived}");
    let result = lab.state();
    assert_ne!(state_of(&result), "enforced", "{result:#}");
}

#[test]
fn tr2_a_private_drop_narrowed_by_a_second_destination_match_is_not_enforced() {
    let lab = Lab::new();
    replace(
        &lab,
        "from_transit",
        PRIVATE_DROP,
        "ip daddr 172.16.0.5 ip daddr @private_ranges counter drop",
    );
    assert_eq!(lab.send(PRIVATE_172, 9), 0);
    assert_eq!(lab.send(PRIVATE, 9), SENT as u64);
    let result = lab.state();
    assert_ne!(state_of(&result), "enforced", "{result:#}");
}

/// nft 1.0.6 prints a set element `"tr-\\*"` (the literal name `tr-*`) as `"tr-*"`, a prefix
/// of `tr-transit`: a private drop narrowed to that set lets transit packets through, and the
/// audit, unable to tell the two apart, does not count it. The same drop on the match
/// `iifname "tr-*"` (a prefix, printed unambiguously) holds, and the audit says `enforced`.
#[test]
fn a_drop_on_an_interface_set_nft_prints_ambiguously_is_not_counted() {
    let lab = Lab::new();
    replace(
        &lab,
        "from_transit",
        PRIVATE_DROP,
        r#"iifname '{ "tr-\*", "x0" }' ip daddr @private_ranges counter drop"#,
    );
    assert_eq!(lab.send(PRIVATE, 9), SENT as u64);
    let result = lab.state();
    assert_ne!(state_of(&result), "enforced", "{result:#}");
    replace(
        &lab,
        "from_transit",
        r#"iifname { "x0", "tr-*" } ip daddr @private_ranges counter packets 0 bytes 0 drop"#,
        r#"iifname '"tr-*"' ip daddr @private_ranges counter drop"#,
    );
    assert_eq!(lab.send(PRIVATE, 9), 0);
    let result = lab.state();
    assert_eq!(state_of(&result), "enforced", "{result:#}");
}

#[test]
fn tr3_dns_any_ahead_of_the_vpc_drop_is_not_enforced() {
    let lab = Lab::new();
    lab.router
        .sh("nft insert rule inet deevnet_transit from_transit udp dport 53 accept");
    assert_eq!(lab.send(VPC, 53), SENT as u64);
    let result = lab.state();
    assert_ne!(state_of(&result), "enforced", "{result:#}");
}

#[test]
fn tr7_a_netdev_ingress_fwd_on_the_transit_interface_is_open() {
    let lab = Lab::new();
    lab.router.sh("nft add table netdev edge && nft add chain netdev edge ingress '{ type filter hook ingress device tr-transit priority 0; }' && nft add rule netdev edge ingress ip daddr 10.202.0.5 fwd ip to 203.0.113.2 device tr-up");
    assert!(lab.send(VPC, 9) > 0, "the VPC address is reached");
    let result = lab.state();
    assert_eq!(state_of(&result), "open", "{result:#}");
}
