//! What acts on transit packets outside the forward chain (issue 45: TR1, TR7) and the
//! masquerade's reach (TR11), on listings recorded with nft 1.0.6.

use super::*;
use crate::report::State;
use crate::{evaluate, Check, Report};
use serde_json::Value;

const MARK_WRITERS: &str = include_str!("../../tests/data/nft-1.0.6/mark-writers.json");
const AROUND_FORWARD: &str = include_str!("../../tests/data/nft-1.0.6/around-forward.json");
const NARROW_MASQUERADE: &str = include_str!("../../tests/data/nft-1.0.6/narrow-masquerade.json");

fn audit(json: &str) -> Report {
    let mut observed = enforced();
    observed.ruleset = ruleset(json);
    evaluate(&request(), &observed)
}

fn check<'a>(report: &'a Report, name: &str) -> &'a Check {
    report
        .checks
        .iter()
        .find(|c| c.name == name)
        .expect("every check is reported")
}

/// The listing with `extra` objects added, and without the objects of the tables `without`.
fn edited(json: &str, extra: &[Value], without: &[&str]) -> String {
    let mut value: Value = serde_json::from_str(json).expect("recorded JSON");
    let objects = value["nftables"].as_array_mut().expect("list");
    objects.retain(|o| {
        let body = o.as_object().and_then(|m| m.values().next());
        let table = body.and_then(|b| b.get("table").or_else(|| b.get("name")));
        !table.is_some_and(|t| without.iter().any(|w| t == w))
    });
    objects.extend(extra.iter().cloned());
    value.to_string()
}

fn gate_message(report: &Report) -> String {
    let gate = check(report, "routing_gate");
    assert!(!gate.ok, "{:#?}", report.checks);
    gate.message.clone()
}

#[test]
fn tr1_every_other_writer_of_the_gate_bit_is_named_and_the_router_is_open() {
    let report = audit(MARK_WRITERS);
    let message = gate_message(&report);
    for writer in [
        "ip mangle PREROUTING (rule handle 2) sets the packet mark to 4194304",
        "ip mangle PREROUTING (rule handle 3) sets the packet mark to {\"|\":[{\"meta\":{\"key\":\"mark\"}},4194304]}",
        "ip mangle PREROUTING (rule handle 4) sets the packet mark to {\"ct\":{\"key\":\"mark\"}}",
        "netdev edge ingress (rule handle 2) sets the packet mark",
    ] {
        assert!(message.contains(writer), "{writer} in {message}");
    }
    // Proven harmless: `& 0xff`, `0x1`, and the bit set only on another interface.
    for harmless in ["handle 5)", "handle 6)", "handle 7)"] {
        assert!(
            !message.contains(&format!("PREROUTING (rule {harmless}")),
            "{message}"
        );
    }
    assert_eq!(report.state, State::Open);
    // With the table deleted, the gate still does not hold: open, not closed.
    let deleted = edited(MARK_WRITERS, &[], &["deevnet_transit"]);
    let report = audit(&deleted);
    assert!(gate_message(&report).contains("ip mangle PREROUTING (rule handle 2)"));
    assert_eq!(report.state, State::Open);
}

#[test]
fn tr1_an_iptables_mark_target_and_a_second_marking_rule_of_ours_are_writers() {
    let xt = json!({"rule": {"family": "ip", "table": "mangle", "chain": "PREROUTING", "handle": 40,
        "expr": [{"counter": {"packets": 0, "bytes": 0}}, {"xt": {"type": "target", "name": "MARK"}}]}});
    let ours = json!({"rule": {"family": "inet", "table": "deevnet_transit", "chain": "prerouting", "handle": 41,
        "expr": [{"mangle": {"key": {"meta": {"key": "mark"}}, "value": {"|": [{"meta": {"key": "mark"}}, 4_194_304]}}}]}});
    let chain = json!({"chain": {"family": "ip", "table": "mangle", "name": "PREROUTING", "handle": 1, "type": "filter", "hook": "prerouting", "prio": -150, "policy": "accept"}});
    let table = json!({"table": {"family": "ip", "name": "mangle", "handle": 9}});
    let report = audit(&edited(ENFORCED, &[table, chain, xt, ours], &[]));
    let message = gate_message(&report);
    assert!(
        message.contains("ip mangle PREROUTING (rule handle 40) has the iptables target MARK"),
        "{message}"
    );
    assert!(
        message.contains("inet deevnet_transit prerouting (rule handle 41) sets the packet mark"),
        "{message}"
    );
    assert_eq!(report.state, State::Open);
}

#[test]
fn the_roles_own_marking_rule_is_not_a_writer() {
    let report = audit(ENFORCED);
    assert!(check(&report, "routing_gate").ok, "{:#?}", report.checks);
    assert_eq!(report.state, State::Enforced);
}

#[test]
fn tr7_a_netdev_fwd_a_dup_a_queue_and_a_flowtable_are_named() {
    let flowtable = json!({"flowtable": {"family": "inet", "name": "ft", "table": "fast", "handle": 2, "hook": "ingress", "prio": 0, "dev": ["tr-transit", "tr-up"]}});
    let queue = json!({"rule": {"family": "ip", "table": "fast", "chain": "pre", "handle": 30,
        "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, "right": 4789}}, {"queue": {"num": 3, "flags": "bypass"}}]}});
    let report = audit(&edited(AROUND_FORWARD, &[flowtable, queue], &[]));
    let message = gate_message(&report);
    for path in [
        "netdev edge ingress (rule handle 2) in an ingress chain on tr-transit holds fwd",
        "ip fast pre (rule handle 2) holds dup",
        "ip fast pre (rule handle 30) holds queue",
        "flowtable inet fast ft on tr-transit, tr-up: its flows skip the forward chain",
    ] {
        assert!(message.contains(path), "{path} in {message}");
    }
    assert_eq!(report.state, State::Open);
}

#[test]
fn an_ingress_chain_that_only_counts_and_drops_moves_nothing() {
    let chain = json!({"chain": {"family": "netdev", "table": "edge", "name": "ingress", "handle": 1, "type": "filter", "hook": "ingress", "prio": 0, "policy": "accept"}});
    let table = json!({"table": {"family": "netdev", "name": "edge", "handle": 9}});
    let rule = json!({"rule": {"family": "netdev", "table": "edge", "chain": "ingress", "handle": 2,
        "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "10.202.0.5"}}, {"counter": {"packets": 0, "bytes": 0}}, {"drop": null}]}});
    let report = audit(&edited(ENFORCED, &[table, chain, rule], &[]));
    assert!(check(&report, "routing_gate").ok, "{:#?}", report.checks);
    assert_eq!(report.state, State::Enforced);
}

#[test]
fn tr11_a_masquerade_narrowed_to_tcp_is_named() {
    let report = audit(NARROW_MASQUERADE);
    let snat = check(&report, "uplink_snat");
    assert!(!snat.ok, "{:#?}", report.checks);
    assert!(
        snat.message.contains(
            "inet deevnet_transit postrouting (rule handle 23) is narrowed by meta l4proto =="
        ),
        "{}",
        snat.message
    );
    assert!(check(&audit(ENFORCED), "uplink_snat").ok);
}

/// nft 1.0.6 prints `iifname != { "tr-\*", "x0" }` (which excludes only the literal name `tr-*`)
/// as `!= { "tr-*", "x0" }`: such a rule may see transit packets, so its mark write counts; a
/// rule on `iifname != "tr-*"` (a prefix, printed unambiguously) excludes them.
#[test]
fn a_writer_on_an_interface_set_nft_prints_ambiguously_is_named() {
    let mark_on = |handle: i64, right: Value| {
        json!({"rule": {"family": "ip", "table": "mangle", "chain": "PREROUTING", "handle": handle,
            "expr": [{"match": {"op": "!=", "left": {"meta": {"key": "iifname"}}, "right": right}},
                     {"mangle": {"key": {"meta": {"key": "mark"}}, "value": 4_194_304}}]}})
    };
    let chain = json!({"chain": {"family": "ip", "table": "mangle", "name": "PREROUTING", "handle": 1, "type": "filter", "hook": "prerouting", "prio": -150, "policy": "accept"}});
    let table = json!({"table": {"family": "ip", "name": "mangle", "handle": 9}});
    let set = mark_on(40, json!({"set": ["tr-*", "x0"]}));
    let report = audit(&edited(ENFORCED, &[table.clone(), chain.clone(), set], &[]));
    let message = gate_message(&report);
    assert!(
        message.contains("ip mangle PREROUTING (rule handle 40) sets the packet mark"),
        "{message}"
    );
    assert_eq!(report.state, State::Open);
    let prefix = mark_on(41, json!("tr-*"));
    let report = audit(&edited(ENFORCED, &[table, chain, prefix], &[]));
    assert!(check(&report, "routing_gate").ok, "{:#?}", report.checks);
    assert_eq!(report.state, State::Enforced);
}
