//! The kernel's side of the audit on a real kernel (issue 45's TR4-TR7, TR9, TR10, RP): rules
//! narrowed or ahead of the gate, altnames, a bridge, tc, drop-ins, policy routing into a VPC,
//! and the reverse-path filter with real traffic through a router between two namespaces.

use crate::in_namespace::{violations, Router, RULESET};
use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::net::UdpSocket;
use std::time::Duration;

fn check<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name}: {result:#}"))
}

fn message<'a>(result: &'a Value, name: &str) -> &'a str {
    check(result, name)["message"].as_str().unwrap_or_default()
}

/// TR4: with the table gone, a gate narrowed to GRE (and an IPv6 gate narrowed to one address)
/// holds nothing back: open, not closed.
#[test]
fn a_narrowed_gate_leaves_the_router_open() {
    let router = Router::new();
    router.sh("ip -4 rule add priority 100 iif tr-transit fwmark 0/0x400000 ipproto gre prohibit && ip -6 rule add priority 100 iif tr-transit to 2001:db8::1 prohibit");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(result["state"], "open", "{result:#}");
    assert_eq!(result["gate"], json!({"ipv4": false, "ipv6": false}));
    assert!(
        message(&result, "routing_gate").contains("is narrowed by ipproto, so it is not the gate"),
        "{result:#}"
    );
}

/// TR5: a gate written with an altname is the gate; a rule at priority 0 and one naming the
/// transit interface by its altname route ahead of it, each named.
#[test]
fn rules_ahead_at_priority_0_and_by_altname_are_named_and_an_altname_gate_holds() {
    let router = Router::new();
    router.sh(&format!(
        "ip link property add dev tr-transit altname trx && ip -4 rule add priority 100 iif trx fwmark 0/0x400000 prohibit && ip -6 rule add priority 100 iif trx prohibit && nft -f {}",
        router.path("transit.nft").display()
    ));
    let (ok, result) = router.run(json!({}));
    assert!(ok, "{result:#}");
    assert_eq!(result["state"], "enforced");
    router.sh("ip -4 rule add priority 0 iif tr-transit lookup 7 && ip -4 rule add priority 50 iif trx lookup 8");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["routing_gate"], "{result:#}");
    assert_eq!(result["state"], "open");
    let found = message(&result, "routing_gate");
    assert!(
        found.contains("ip -4 rule priority 0 iif tr-transit lookup 7"),
        "{found}"
    );
    assert!(
        found.contains("ip -4 rule priority 50 iif trx lookup 8"),
        "{found}"
    );
}

/// TR5: what table local forwards is routed by the rule at priority 0, ahead of both gates.
#[test]
fn a_forwarding_route_in_table_local_is_named() {
    let router = Router::new();
    router.enforce();
    router.sh("ip link set tr-transit up && ip link set tr-up up && ip -6 route add 2001:db8:5::/48 dev tr-transit table local && ip -4 route add 172.16.0.0/12 dev tr-up table local");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["routing_gate"], "{result:#}");
    let found = message(&result, "routing_gate");
    assert!(
        found.contains("unicast 2001:db8:5::/48 dev tr-transit in table local"),
        "{found}"
    );
    assert!(
        found.contains("unicast 172.16.0.0/12 dev tr-up in table local"),
        "{found}"
    );
}

/// TR6: the transit interface in a bridge, and another interface in the transit network.
#[test]
fn a_bridged_transit_interface_and_another_in_the_transit_network_are_violations() {
    let router = Router::new();
    router.enforce();
    router.sh("ip link add br-t type bridge && ip link set tr-transit master br-t");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["transit_interface"], "{result:#}");
    assert_eq!(result["state"], "open");
    assert!(message(&result, "transit_interface").contains("tr-transit is enslaved to br-t"));
    router.sh("ip link set tr-transit nomaster && ip link add tr-2 type veth peer name tr-3 && ip addr add 198.51.100.7/24 dev tr-2");
    let (_, result) = router.run(json!({}));
    assert_eq!(violations(&result), ["transit_interface"], "{result:#}");
    assert!(message(&result, "transit_interface").contains("tr-2 (198.51.100.7/24)"));
}

/// TR6: a macvlan on the transit interface receives from the transit wire as itself.
#[test]
fn a_macvlan_on_the_transit_interface_is_a_violation() {
    let router = Router::new();
    router.enforce();
    router.sh("ip link add link tr-transit name mv0 type macvlan");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["transit_interface"], "{result:#}");
    assert_eq!(result["state"], "open");
    assert!(message(&result, "transit_interface").contains("mv0 (macvlan)"));
}

/// TR7: a tc ingress redirect on the transit interface, ahead of the forward hook.
#[test]
fn a_tc_ingress_redirect_is_a_violation_and_an_empty_clsact_is_not() {
    let router = Router::new();
    router.enforce();
    router.sh("tc qdisc add dev tr-transit clsact");
    let (ok, result) = router.run(json!({}));
    assert!(ok, "an empty clsact moves nothing: {result:#}");
    router.sh("tc filter add dev tr-transit ingress protocol ip u32 match u32 0 0 action mirred egress redirect dev tr-up");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["transit_interface"], "{result:#}");
    assert_eq!(result["state"], "open");
    assert!(
        message(&result, "transit_interface").contains("with action mirred to tr-up"),
        "{result:#}"
    );
}

/// TR9: a drop-in that empties ReloadPropagatedFrom= and replaces ExecStart=.
#[test]
fn a_hostile_dropin_fails_reload_survival_and_a_harmless_one_does_not() {
    let router = Router::new();
    router.enforce();
    let folder = router.path("transit.service.d");
    std::fs::create_dir(&folder).expect("drop-in folder");
    std::fs::write(folder.join("10-nice.conf"), "[Service]\nNice=5\n").expect("drop-in");
    let (ok, result) = router.run(json!({}));
    assert!(ok, "{result:#}");
    std::fs::write(
        folder.join("override.conf"),
        "[Unit]\nReloadPropagatedFrom=\n[Service]\nExecStart=\nExecStart=/bin/true\n",
    )
    .expect("drop-in");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["reload_survival"], "{result:#}");
    assert!(message(&result, "reload_survival").contains("override.conf sets ExecStart="));
}

/// TR10: `ip rule to <vpc> lookup 7` and a default in table 7: no route into the VPC in any
/// table, yet the kernel forwards a marked transit packet there.
#[test]
fn a_vpc_reached_by_policy_routing_is_a_violation_and_the_internet_route_is_not() {
    let router = Router::new();
    router.enforce();
    router.sh("ip link set tr-transit up && ip link set tr-up up && ip addr add 198.51.100.1/24 dev tr-transit && ip addr add 203.0.113.1/24 dev tr-up && ip route add default via 203.0.113.2");
    let (ok, result) = router.run(json!({}));
    assert!(
        ok,
        "the Internet's default route is no route into a VPC: {result:#}"
    );
    router.sh("ip -4 rule add priority 200 to 10.202.0.0/24 lookup 7 && ip route add default via 198.51.100.2 table 7");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["vpc_route"], "{result:#}");
    assert_eq!(
        result["routes_into_vpc"],
        json!([]),
        "no route names the VPC"
    );
    assert!(
        message(&result, "vpc_route").contains(
            "to 10.202.0.0 is forwarded by default via 198.51.100.2 dev tr-transit table 7"
        ),
        "{result:#}"
    );
}

/// A router between a gateway on the transit network and a host on the Internet side, each in
/// a namespace of its own; the router's namespace is `Router`'s.
struct Perimeter {
    router: Router,
    gateway: TestNamespace,
    internet: TestNamespace,
}

impl Perimeter {
    fn new(ruleset: &str) -> Perimeter {
        let router = Router::new();
        let gateway = TestNamespace::new("dvn-trg");
        let internet = TestNamespace::new("dvn-tri");
        router.sh(&format!(
            "ip link del tr-transit && ip link add tr-transit type veth peer name gw0 netns {} && ip link add tr-up type veth peer name in0 netns {}",
            gateway.name(),
            internet.name()
        ));
        router.sh("ip addr add 198.51.100.1/24 dev tr-transit && ip link set tr-transit up && ip addr add 203.0.113.1/24 dev tr-up && ip link set tr-up up && ip route add default via 203.0.113.2");
        gateway.ip("addr add 198.51.100.2/24 dev gw0");
        gateway.ip("link set gw0 up");
        gateway.ip("route add default via 198.51.100.1");
        internet.ip("addr add 203.0.113.2/24 dev in0");
        internet.ip("link set in0 up");
        std::fs::write(router.path("transit.nft"), ruleset).expect("ruleset file");
        router.enforce();
        Perimeter {
            router,
            gateway,
            internet,
        }
    }

    fn sysctls(&self, rp_filter: u8, src_valid_mark: u8) {
        self.router.sh(&format!(
            "for i in all tr-transit tr-up; do echo {rp_filter} > /proc/sys/net/ipv4/conf/$i/rp_filter; echo {src_valid_mark} > /proc/sys/net/ipv4/conf/$i/src_valid_mark; done"
        ));
    }

    /// Whether a UDP datagram from the gateway to the Internet host gets its echo back
    /// (masqueraded on the way out).
    fn answered(&self) -> bool {
        let echo = self.internet.enter(|| {
            let socket = UdpSocket::bind("203.0.113.2:7007").expect("bind");
            socket
                .set_read_timeout(Some(Duration::from_secs(3)))
                .expect("timeout");
            socket
        });
        let server = std::thread::spawn(move || {
            let mut buffer = [0u8; 64];
            if let Ok((n, from)) = echo.recv_from(&mut buffer) {
                let _ = echo.send_to(&buffer[..n], from);
            }
        });
        let answered = self.gateway.enter(|| {
            let socket = UdpSocket::bind("198.51.100.2:0").expect("bind");
            socket
                .set_read_timeout(Some(Duration::from_secs(1)))
                .expect("timeout");
            socket
                .send_to(b"transit", "203.0.113.2:7007")
                .expect("send");
            let mut buffer = [0u8; 64];
            socket
                .recv_from(&mut buffer)
                .is_ok_and(|(n, _)| &buffer[..n] == b"transit")
        });
        server.join().expect("echo server");
        answered
    }
}

/// RP: with rp_filter 2 the answers from the uplink are checked by a lookup as if from the
/// transit interface, unmarked: the gate drops them, and the audit says so; src_valid_mark alone
/// does not help (the answers carry no mark); with the table marking the replies to the transit
/// network as the role's does, they pass, and so does the audit.
#[test]
fn the_reverse_path_filter_drops_the_answers_unless_they_are_marked_and_the_audit_agrees() {
    let perimeter = Perimeter::new(RULESET);
    perimeter.sysctls(0, 0);
    assert!(perimeter.answered(), "rp_filter 0: the router forwards");
    let (ok, result) = perimeter.router.run(json!({}));
    assert!(ok, "{result:#}");
    for src_valid_mark in [0, 1] {
        perimeter.sysctls(2, src_valid_mark);
        assert!(
            !perimeter.answered(),
            "rp_filter 2, src_valid_mark {src_valid_mark}: dropped"
        );
        let (ok, result) = perimeter.router.run(json!({}));
        assert!(!ok);
        assert_eq!(violations(&result), ["reverse_path"], "{result:#}");
        assert_eq!(result["state"], "enforced", "availability changes no state");
    }
    let marked = RULESET.replace(
        "\t\tiifname \"tr-transit\" meta mark set meta mark | 0x00400000\n",
        "\t\tiifname \"tr-transit\" meta mark set meta mark | 0x00400000\n\t\tiifname \"tr-up\" ct direction reply ct original ip saddr 198.51.100.0/24 meta mark set meta mark | 0x00400000\n",
    );
    assert_ne!(marked, RULESET);
    let perimeter = Perimeter::new(&marked);
    perimeter.sysctls(2, 0);
    assert!(
        !perimeter.answered(),
        "marked but src_valid_mark 0: dropped"
    );
    assert_eq!(
        violations(&perimeter.router.run(json!({})).1),
        ["reverse_path"]
    );
    for rp_filter in [1, 2] {
        perimeter.sysctls(rp_filter, 1);
        assert!(
            perimeter.answered(),
            "rp_filter {rp_filter}, marked, src_valid_mark 1: answered"
        );
        let (ok, result) = perimeter.router.run(json!({}));
        assert!(ok, "{result:#}");
        assert_eq!(result["state"], "enforced");
    }
}
