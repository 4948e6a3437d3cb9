use super::*;
use crate::nft::{Addresses, NameMatch, Owner, ReadFacts, Verdict};
use deevnet_runtime::nft::ranges::Range;

fn from_transit_facts(json: &str) -> Vec<crate::nft::RuleFacts> {
    let ruleset = ruleset(json);
    ruleset
        .rules
        .iter()
        .filter(|r| r.chain == "from_transit")
        .map(|r| ruleset.facts(r))
        .collect()
}

#[test]
fn the_recorded_ruleset_parses_into_tables_chains_sets_and_rules() {
    let ruleset = ruleset(ENFORCED);
    let owner = Owner {
        family: "inet".into(),
        table: "deevnet_transit".into(),
    };
    assert_eq!(ruleset.version, "1.0.6");
    assert!(ruleset.has_table(&owner));
    let forward = ruleset
        .chain(&owner, "forward")
        .and_then(|c| c.base.clone())
        .expect("base chain");
    assert_eq!(
        (forward.kind.as_str(), forward.hook.as_str(), forward.prio),
        ("filter", "forward", -200)
    );
    assert_eq!(
        ruleset
            .chain(&owner, "from_transit")
            .map(|c| c.base.is_none()),
        Some(true)
    );
    assert_eq!(
        ruleset.set_ranges(&owner, "vpc_ranges"),
        Some(vec![
            Range::parse_cidr("10.202.0.0/24").expect("cidr"),
            Range::parse_cidr("192.0.2.0/24").expect("cidr")
        ])
    );
    assert_eq!(ruleset.rules.len(), 15);
}

#[test]
fn each_rule_of_from_transit_reads_as_its_match_and_verdict() {
    let facts = from_transit_facts(ENFORCED);
    assert!(facts[0].ipv6_only && facts[0].verdict == Verdict::Drop);
    assert_eq!(
        facts[1].oifname,
        Some(NameMatch {
            equal: true,
            names: vec!["tr-transit".into()],
            in_set: false,
        })
    );
    assert!(matches!(&facts[2].daddr, Addresses::In(r) if r.len() == 2));
    assert_eq!(facts[4].udp_dport, Some(vec![53]));
    assert_eq!(facts[4].verdict, Verdict::Accept);
    assert!(matches!(&facts[6].daddr, Addresses::In(r) if r.len() == 5));
    assert_eq!(facts[8].daddr, Addresses::Any);
    assert_eq!(facts[8].verdict, Verdict::Drop);
    assert!(facts.iter().all(|f| f.unknown.is_empty()));
}

#[test]
fn the_gate_mark_the_jump_and_the_masquerade_are_read() {
    let ruleset = ruleset(ENFORCED);
    let facts: Vec<_> = ruleset
        .rules
        .iter()
        .map(|r| (r.chain.as_str(), ruleset.facts(r)))
        .collect();
    let mark = facts
        .iter()
        .find(|(c, _)| *c == "prerouting")
        .expect("prerouting rule");
    assert_eq!(mark.1.mark_or, Some(0x40_0000));
    let jump = facts
        .iter()
        .find(|(c, _)| *c == "forward")
        .expect("forward rule");
    assert_eq!(jump.1.verdict, Verdict::Jump("from_transit".into()));
    let nat = facts
        .iter()
        .find(|(c, _)| *c == "postrouting")
        .expect("postrouting rule");
    assert!(nat.1.source_nat);
    assert_eq!(
        nat.1.oifname,
        Some(NameMatch {
            equal: false,
            names: vec!["tr-transit".into()],
            in_set: false,
        })
    );
}

#[test]
fn an_unknown_statement_and_a_missing_set_are_named_not_dropped() {
    let json = r#"{"nftables":[{"rule":{"family":"ip","table":"filter","chain":"FORWARD","handle":3,
        "expr":[{"xt":{"type":"target","name":"ACCEPT"}}]}},
        {"rule":{"family":"ip","table":"filter","chain":"FORWARD","handle":4,
        "expr":[{"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"daddr"}},"right":"@gone"}},{"accept":null}]}}]}"#;
    let ruleset = ruleset(json);
    let facts: Vec<_> = ruleset.rules.iter().map(|r| ruleset.facts(r)).collect();
    assert_eq!(facts[0].unknown, ["xt target ACCEPT"]);
    assert_eq!(facts[0].xt_targets, ["ACCEPT"]);
    assert!(matches!(facts[1].daddr, Addresses::Unknown(_)));
}

#[test]
fn json_that_is_not_nfts_is_an_error_not_a_panic() {
    assert!(Ruleset::parse("{").is_err());
    assert!(Ruleset::parse("{}").is_err());
    assert_eq!(
        Ruleset::parse(r#"{"nftables":[1,{"x":2}]}"#).map(|r| r.rules.len()),
        Ok(0)
    );
}

#[test]
fn interface_wildcards_match_as_nft_does() {
    let m = NameMatch {
        equal: true,
        names: vec!["tr-*".into()],
        in_set: false,
    };
    assert_eq!(m.admits("tr-transit"), Some(true));
    let escaped = NameMatch {
        equal: true,
        names: vec!["tr-\\*".into()],
        in_set: false,
    };
    assert_eq!(escaped.admits("tr-transit"), Some(false));
    assert_eq!(escaped.admits("tr-*"), Some(true));
    let not = NameMatch {
        equal: false,
        names: vec!["tr-transit".into()],
        in_set: false,
    };
    assert_eq!(not.admits("tr-transit"), Some(false));
    assert_eq!(not.admits("eth0"), Some(true));
}

#[test]
fn a_set_element_ending_in_a_star_may_be_literal_so_it_cannot_say() {
    // nft 1.0.6 prints `iifname { "tr-\*" }` and `iifname { "tr-*" }` alike.
    let set = NameMatch {
        equal: true,
        names: vec!["eth0".into(), "tr-*".into()],
        in_set: true,
    };
    assert_eq!(set.admits("tr-transit"), None);
    assert_eq!(set.admits("eth0"), Some(true));
    assert_eq!(set.admits("wg0"), Some(false));
    let not = NameMatch {
        equal: false,
        ..set
    };
    assert_eq!(not.admits("tr-transit"), None);
    assert_eq!(not.admits("wg0"), Some(true));
}
