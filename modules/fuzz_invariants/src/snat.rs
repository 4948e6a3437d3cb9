//! Invariants of `vrf_route_assert`'s NAT prediction (`snat_src`, `vrf_route_assert::snat`),
//! shared by the libFuzzer target `snat_predict` and the stable smoke test
//! (`modules/fuzz_invariants/tests/it/vrf_route_assert.rs`).

use crate::input::{split_at_nul, Input};
use deevnet_runtime::nft::Ruleset;
use serde_json::{json, Value};
use std::net::Ipv4Addr;
use vrf_route_assert::snat::{walk, Packet};

/// The devices a packet may leave by: plain, wildcard-looking, escaped.
const DEVICES: [&str; 6] = ["nic5", "vmbr0.50", "vmbr0*", "up", "uplink", ""];

/// Target `snat_predict`: `JSON \0 DECISIONS`. Over the JSON's ruleset and one the decisions
/// build (NAT chains with matches on oifname and ip saddr in every printed form, NAT and other
/// statements, jumps and gotos that may miss or loop), the prediction never panics, is the same
/// twice, is unknown exactly when it says it was not evaluated, names the chain when it
/// translates, and reads each rule at most once when it decides.
pub fn check_bytes(data: &[u8]) {
    let (json, decisions) = split_at_nul(data);
    let json = String::from_utf8_lossy(json);
    let mut input = Input::new(decisions);
    if let Ok(ruleset) = Ruleset::parse(&json) {
        predict_for_packets(&ruleset, &mut input, &json);
    }
    let built = built(&mut input).to_string();
    let ruleset = Ruleset::parse(&built).expect("a built ruleset parses");
    predict_for_packets(&ruleset, &mut input, &built);
}

fn predict_for_packets(ruleset: &Ruleset, input: &mut Input, shown: &str) {
    for _ in 0..3 {
        let dev = *input.pick(&DEVICES);
        let src = Ipv4Addr::from(*input.pick(&[0x0a40_01fa_u32, 0xc000_020b, 0xac10_0001]));
        let packet = Packet { dev, src };
        let (answer, rules_read) = walk(ruleset, packet);
        assert_eq!(
            walk(ruleset, packet).0,
            answer,
            "two predictions disagree\n{shown}"
        );
        assert_eq!(answer.src, src);
        assert_eq!(
            answer.translated.is_none(),
            answer.why.starts_with("not evaluated: "),
            "{answer:?}\n{shown}"
        );
        if answer.translated == Some(true) {
            assert!(
                answer.why.starts_with("a source NAT rule of "),
                "{answer:?}\n{shown}"
            );
        }
        if answer.translated.is_some() {
            assert!(
                rules_read <= ruleset.rules.len(),
                "{rules_read} rules read of {}\n{shown}",
                ruleset.rules.len()
            );
        }
    }
}

/// One match of the packet's fields, in the forms nft prints.
fn a_match(input: &mut Input) -> Value {
    let op = *input.pick(&["==", "!=", "in", "<"]);
    let (left, right) = match input.below(6) {
        0 => (
            json!({"meta": {"key": "oifname"}}),
            json!(*input.pick(&["nic5", "vmbr0\\*", "up*", "@ifs", "*"])),
        ),
        1 => (
            json!({"meta": {"key": "oifname"}}),
            json!({"set": [*input.pick(&["nic*", "vmbr0.50"]), "lan0"]}),
        ),
        2 => (
            json!({"payload": {"protocol": "ip", "field": "saddr"}}),
            json!({"prefix": {"addr": "10.64.0.0", "len": input.below(40)}}),
        ),
        3 => (
            json!({"payload": {"protocol": "ip", "field": "saddr"}}),
            json!(*input.pick(&["192.0.2.11", "@tenants", "@none", "10.0.0.0/8", "x"])),
        ),
        4 => (
            json!({"payload": {"protocol": "ip", "field": "saddr"}}),
            json!({"set": [{"range": ["172.16.0.0", "172.16.0.9"]}, "10.64.1.250", {"elem": 1}]}),
        ),
        _ => (json!({"ct": {"key": "mark"}}), json!(1)),
    };
    json!({"match": {"op": op, "left": left, "right": right}})
}

/// A table of up to 8 chains (the first two postrouting NAT base chains, at random
/// priorities), each with up to 6 rules of matches and a statement.
fn built(input: &mut Input) -> Value {
    let family = *input.pick(&["ip", "inet", "ip6"]);
    let chains = 1 + input.below(8);
    let mut items = vec![
        json!({"table": {"family": family, "name": "nat"}}),
        json!({"set": {"family": family, "table": "nat", "name": "tenants", "type": "ipv4_addr",
                        "elem": [{"prefix": {"addr": "10.64.0.0", "len": 10}}]}}),
    ];
    for i in 0..chains {
        let mut chain = json!({"family": family, "table": "nat", "name": format!("c{i}")});
        if i < 2 {
            chain["type"] = json!(*input.pick(&["nat", "filter"]));
            chain["hook"] = json!("postrouting");
            chain["prio"] = json!(input.below(3) * 100);
        }
        items.push(json!({ "chain": chain }));
    }
    let mut handle = 0;
    for i in 0..chains {
        for _ in 0..input.below(7) {
            handle += 1;
            let mut expr: Vec<Value> = (0..input.below(3)).map(|_| a_match(input)).collect();
            let target = match input.below(6) {
                0 => "missing".to_string(),
                1 => format!("c{}", input.below(chains)),
                _ => format!("c{}", (i + 1 + input.below(3)).min(chains - 1)),
            };
            expr.push(match input.below(10) {
                0 => json!({"masquerade": null}),
                1 => json!({"snat": {"addr": "10.20.50.22"}}),
                2 => json!({"xt": {"type": "target", "name": *input.pick(&["SNAT", "MASQUERADE", "MARK"])}}),
                3 => json!({"jump": {"target": target}}),
                4 => json!({"goto": {"target": target}}),
                5 => json!({"return": null}),
                6 => json!({"accept": null}),
                7 => json!({"drop": null}),
                8 => json!({"counter": {"packets": 0, "bytes": 0}}),
                _ => input
                    .pick(&[json!("text"), json!({}), json!({"jump": {}})])
                    .clone(),
            });
            items.push(
                json!({"rule": {"family": family, "table": "nat", "chain": format!("c{i}"),
                                       "handle": handle, "expr": expr}}),
            );
        }
    }
    json!({ "nftables": items })
}
