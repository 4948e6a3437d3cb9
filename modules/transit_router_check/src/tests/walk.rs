//! The walk of the chains that decide transit traffic (issue 45: TR2, TR3, TR8 and unread
//! statements), on listings recorded with nft 1.0.6.

use super::*;
use crate::nft::{Addresses, ReadFacts};
use crate::report::State;
use crate::walk::Walker;
use crate::{evaluate, Check, Report};
use deevnet_runtime::nft::ranges::Range;
use serde_json::Value;

const CONDITIONAL_JUMP: &str = include_str!("../../tests/data/nft-1.0.6/conditional-jump.json");
const LIMITED_DROP: &str = include_str!("../../tests/data/nft-1.0.6/limited-drop.json");
const TWO_DADDR: &str = include_str!("../../tests/data/nft-1.0.6/two-daddr.json");
const DNS_AHEAD: &str = include_str!("../../tests/data/nft-1.0.6/dns-ahead.json");

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

/// The ruleset with the expression of the rule `chain` / `handle` replaced.
fn with_rule_expr(json: &str, chain: &str, handle: i64, expr: Value) -> String {
    let mut value: Value = serde_json::from_str(json).expect("recorded JSON");
    let objects = value["nftables"].as_array_mut().expect("list");
    let rule = objects
        .iter_mut()
        .filter_map(|o| o.get_mut("rule"))
        .find(|r| r["chain"] == chain && r["handle"] == handle)
        .expect("the rule");
    rule["expr"] = expr;
    value.to_string()
}

/// The handle of the rule of `chain` whose expression contains `needle`.
fn handle_of(json: &str, chain: &str, needle: &str) -> i64 {
    let value: Value = serde_json::from_str(json).expect("recorded JSON");
    value["nftables"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|o| o.get("rule"))
        .find(|r| r["chain"] == chain && r["expr"].to_string().contains(needle))
        .and_then(|r| r["handle"].as_i64())
        .expect("the rule")
}

fn not_enforced_by(report: &Report, needle: &str) {
    let ahead = check(report, "private_accept_ahead");
    assert!(!ahead.ok, "{:#?}", report.checks);
    assert!(ahead.message.contains(needle), "{}", ahead.message);
    assert_ne!(report.state, State::Enforced);
}

#[test]
fn tr2_a_conditional_jump_to_the_transit_chain_drops_nothing_for_every_packet() {
    let report = audit(CONDITIONAL_JUMP);
    // `from_transit` decides nothing for every packet now: `to_transit`'s accept is reached.
    not_enforced_by(
        &report,
        "to_transit (rule handle 21) accepts any destination",
    );
    // The gate holds: closed, not enforced.
    assert_eq!(report.state, State::Closed);
}

#[test]
fn tr2_a_rate_limited_private_drop_lets_the_rest_reach_the_uplink_accept() {
    let report = audit(LIMITED_DROP);
    not_enforced_by(
        &report,
        "from_transit (rule handle 19) accepts any destination (no destination match) (reaching 10.0.0.0-10.96.99.255, 10.96.100.16-10.201.255.255, 10.202.1.0-10.255.255.255, 100.64.0.0/10, 169.254.0.0/16, 172.16.0.0/12, 192.168.0.0/16)",
    );
    // The same with `quota`.
    let private = handle_of(ENFORCED, "from_transit", "@private_ranges");
    let quota = with_rule_expr(
        ENFORCED,
        "from_transit",
        private,
        serde_json::json!([
            {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "@private_ranges"}},
            {"quota": {"val": 1, "val_unit": "mbytes"}},
            {"drop": null}
        ]),
    );
    not_enforced_by(&audit(&quota), "(reaching 10.0.0.0-10.96.99.255");
}

#[test]
fn tr2_two_destination_matches_in_one_rule_intersect() {
    let ruleset = ruleset(TWO_DADDR);
    let drop = ruleset
        .rules
        .iter()
        .find(|r| {
            r.expr
                .to_vec()
                .iter()
                .any(|e| e.to_string().contains("172.16.0.5"))
        })
        .expect("the narrowed drop");
    assert_eq!(
        ruleset.facts(drop).daddr,
        Addresses::In(vec![Range::parse_cidr("172.16.0.5").expect("address")])
    );
    let report = audit(TWO_DADDR);
    not_enforced_by(&report, "from_transit (rule handle 19) accepts any destination (no destination match) (reaching 10.0.0.0-10.96.99.255, 10.96.100.16-10.201.255.255, 10.202.1.0-10.255.255.255, 100.64.0.0/10, 169.254.0.0/16, 172.16.0.0-172.16.0.4, 172.16.0.6-172.31.255.255, 192.168.0.0/16)");
}

#[test]
fn tr3_dns_any_ahead_of_the_vpc_drop_reaches_every_vpc() {
    let report = audit(DNS_AHEAD);
    not_enforced_by(&report, "reaching 10.0.0.0/8, 100.64.0.0/10, 169.254.0.0/16, 172.16.0.0/12, 192.0.2.0/24, 192.168.0.0/16");
    // Declared servers outside every VPC do not make it an allowance either.
    let listed =
        Request::from_params(params(json!({"dns_servers": ["10.0.0.53"]}))).expect("valid");
    let mut observed = enforced();
    observed.ruleset = ruleset(DNS_AHEAD);
    assert!(!check(&evaluate(&listed, &observed), "private_accept_ahead").ok);
}

#[test]
fn the_roles_ruleset_with_dns_any_behind_the_vpc_drop_is_enforced() {
    let report = audit(ENFORCED);
    assert!(
        check(&report, "private_accept_ahead").ok,
        "{:#?}",
        report.checks
    );
    assert_eq!(report.state, State::Enforced);
}

#[test]
fn an_unread_statement_or_match_in_the_private_drop_does_not_make_it_count() {
    let private = handle_of(ENFORCED, "from_transit", "@private_ranges");
    let daddr = json!({"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "@private_ranges"}});
    let xt = with_rule_expr(
        ENFORCED,
        "from_transit",
        private,
        json!([daddr, {"xt": {"type": "match", "name": "recent"}}, {"drop": null}]),
    );
    let report = audit(&xt);
    not_enforced_by(
        &report,
        "holds statements this audit cannot read (xt match recent)",
    );
    not_enforced_by(&report, "(rule handle 19) accepts any destination");
    let ct = with_rule_expr(
        ENFORCED,
        "from_transit",
        private,
        json!([daddr, {"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": "new"}}, {"drop": null}]),
    );
    not_enforced_by(&audit(&ct), "(rule handle 19) accepts any destination");
}

/// `levels` chains below the forward chain, each jumping `fanout` times to the next, the last
/// holding the private drop.
fn deep_jumps(levels: usize, fanout: usize) -> String {
    let mut objects = vec![
        json!({"table": {"family": "inet", "name": "deevnet_transit"}}),
        json!({"chain": {"family": "inet", "table": "deevnet_transit", "name": "forward", "type": "filter", "hook": "forward", "prio": -200, "policy": "accept"}}),
    ];
    let mut handle = 1;
    let mut rule = |chain: String, expr: Value| {
        handle += 1;
        json!({"rule": {"family": "inet", "table": "deevnet_transit", "chain": chain, "handle": handle, "expr": expr}})
    };
    objects.push(rule(
        "forward".into(),
        json!([{"jump": {"target": "level0"}}]),
    ));
    for level in 0..levels {
        objects.push(json!({"chain": {"family": "inet", "table": "deevnet_transit", "name": format!("level{level}")}}));
        for n in 0..fanout {
            let target = if level + 1 == levels {
                "bottom".to_string()
            } else {
                format!("level{}", level + 1)
            };
            // Each jump narrowed to one source, so none decides: every jump is walked.
            let source = json!({"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": format!("198.51.100.{n}")}});
            objects.push(rule(
                format!("level{level}"),
                json!([source, {"jump": {"target": target}}]),
            ));
        }
    }
    objects
        .push(json!({"chain": {"family": "inet", "table": "deevnet_transit", "name": "bottom"}}));
    objects.push(rule(
        "bottom".into(),
        json!([{"counter": null}, {"drop": null}]),
    ));
    json!({"nftables": objects}).to_string()
}

#[test]
fn tr8_each_chain_is_read_once_however_many_jumps_reach_it() {
    let json = deep_jumps(12, 6);
    let ruleset = ruleset(&json);
    assert_eq!(ruleset.rules.len(), 1 + 12 * 6 + 1);
    let request = request();
    let chain = ruleset.chains[0].clone();
    let walk = Walker::new(&request, &ruleset).walk_base(&chain);
    // 6^12 paths, each rule read once.
    assert_eq!(walk.rule_visits, ruleset.rules.len());
    assert!(walk.findings.is_empty(), "{:?}", walk.findings);
    assert!(!walk.private_drop_reached, "every jump is conditional");
    // A thousand rules, as deep as the kernel allows (`bottom` 15 jumps below the base chain):
    // still each read once.
    let thousand = super::ruleset(&deep_jumps(14, 71));
    let chain = thousand.chains[0].clone();
    let walk = Walker::new(&request, &thousand).walk_base(&chain);
    assert_eq!(thousand.rules.len(), 996);
    assert_eq!(walk.rule_visits, thousand.rules.len());
    assert!(walk.findings.is_empty(), "{:?}", walk.findings);
    // A chain 16 jumps below the base chain, which the kernel refuses to load, is named.
    let deeper = super::ruleset(&deep_jumps(15, 1));
    let walk = Walker::new(&request, &deeper).walk_base(&deeper.chains[0].clone());
    assert_eq!(
        walk.findings,
        ["inet deevnet_transit level14 (rule handle 17) cannot be followed: chain inet deevnet_transit bottom: it lies 16 jumps below its base chain, deeper than the kernel's 16 levels"]
    );
}

#[test]
fn tr8_past_its_step_budget_the_walk_names_where_it_stopped() {
    let json = deep_jumps(12, 6);
    let ruleset = ruleset(&json);
    let request = request();
    let chain = ruleset.chains[0].clone();
    let walk = Walker::new(&request, &ruleset)
        .with_budget(20)
        .walk_base(&chain);
    assert_eq!(
        walk.findings,
        ["chain inet deevnet_transit level9: the walk took more than its budget of 20 steps here: this audit cannot judge the rest"]
    );
}

#[test]
fn a_chain_reached_twice_is_judged_by_what_each_caller_decided_before() {
    // The chain `services` accepts UDP 53 to anything; one caller drops the VPC ranges first,
    // the other does not: the second path is named.
    let base = |rules: Value| {
        json!({"nftables": [
            {"table": {"family": "inet", "name": "deevnet_transit"}},
            {"chain": {"family": "inet", "table": "deevnet_transit", "name": "forward", "type": "filter", "hook": "forward", "prio": -200, "policy": "accept"}},
            {"chain": {"family": "inet", "table": "deevnet_transit", "name": "services"}},
            {"rule": {"family": "inet", "table": "deevnet_transit", "chain": "services", "handle": 9, "expr": [
                {"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, "right": 53}}, {"accept": null}]}},
            {"rule": {"family": "inet", "table": "deevnet_transit", "chain": "forward", "handle": 10, "expr": rules}},
            {"rule": {"family": "inet", "table": "deevnet_transit", "chain": "forward", "handle": 11, "expr": [{"jump": {"target": "services"}}]}},
            {"rule": {"family": "inet", "table": "deevnet_transit", "chain": "forward", "handle": 12, "expr": [{"drop": null}]}}
        ]}).to_string()
    };
    let vpc_drop = json!([{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": {"set": [{"prefix": {"addr": "10.202.0.0", "len": 24}}, {"prefix": {"addr": "192.0.2.0", "len": 24}}]}}}, {"drop": null}]);
    let request = request();
    let ruleset_ok = ruleset(&base(vpc_drop));
    let walk = Walker::new(&request, &ruleset_ok).walk_base(&ruleset_ok.chains[0]);
    assert!(walk.findings.is_empty(), "{:?}", walk.findings);
    assert!(walk.private_drop_reached);
    let counter_only = ruleset(&base(json!([{"counter": null}])));
    let walk = Walker::new(&request, &counter_only).walk_base(&counter_only.chains[0]);
    assert_eq!(
        walk.findings,
        ["inet deevnet_transit services (rule handle 9) accepts any destination (no destination match) (reaching 10.0.0.0/8, 100.64.0.0/10, 169.254.0.0/16, 172.16.0.0/12, 192.0.2.0/24, 192.168.0.0/16)"]
    );
}

/// An accept on an interface set nft 1.0.6 prints ambiguously (`{ "tr-*", "x0" }` may hold the
/// literal name `tr-*`) may see transit packets: it is judged. A drop on it decides nothing.
#[test]
fn an_interface_set_in_doubt_counts_for_accepts_and_not_for_drops() {
    let in_doubt = json!({"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": {"set": ["tr-*", "x0"]}}});
    let accept = handle_of(ENFORCED, "from_transit", "vpc_ranges");
    let json = with_rule_expr(
        ENFORCED,
        "from_transit",
        accept,
        json!([in_doubt, {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": {"prefix": {"addr": "10.202.0.0", "len": 24}}}}, {"accept": null}]),
    );
    not_enforced_by(&audit(&json), "accepts 10.202.0.0/24");
    let drop = handle_of(ENFORCED, "from_transit", "private_ranges");
    let json = with_rule_expr(
        ENFORCED,
        "from_transit",
        drop,
        json!([in_doubt, {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "@private_ranges"}}, {"drop": null}]),
    );
    let report = audit(&json);
    assert_ne!(report.state, State::Enforced, "{:#?}", report.checks);
    assert!(!check(&report, "private_accept_ahead").ok);
}
