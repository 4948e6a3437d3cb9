//! The NAT prediction (`snat_src`) on rulesets as nft 1.0.6 prints them
//! (tests/data/nft-1.0.6, README there): what translates, what does not, what makes the answer
//! unknown; each chain read once; and the answers in the lookups' checks.

use super::*;
use crate::snat::{predict, walk, Packet, Snat};
use std::net::Ipv4Addr;

fn recorded(name: &str) -> Ruleset {
    let json = match name {
        "proxmox-snat-xt" => include_str!("../../tests/data/nft-1.0.6/proxmox-snat-xt.json"),
        "snat-jump" => include_str!("../../tests/data/nft-1.0.6/snat-jump.json"),
        "return-then-snat" => include_str!("../../tests/data/nft-1.0.6/return-then-snat.json"),
        "ct-mark" => include_str!("../../tests/data/nft-1.0.6/ct-mark.json"),
        "wildcards-sets" => include_str!("../../tests/data/nft-1.0.6/wildcards-sets.json"),
        "fanout-41" => include_str!("../../tests/data/nft-1.0.6/fanout-41.json"),
        "empty" => include_str!("../../tests/data/nft-1.0.6/empty.json"),
        other => panic!("no recorded ruleset {other}"),
    };
    Ruleset::parse(json).unwrap()
}

fn v4(text: &str) -> Ipv4Addr {
    text.parse().unwrap()
}

fn packet<'a>(dev: &'a str, src: &str) -> Packet<'a> {
    Packet { dev, src: v4(src) }
}

fn translated(ruleset: &str, dev: &str, src: &str) -> Option<bool> {
    predict(&recorded(ruleset), packet(dev, src)).translated
}

#[test]
fn proxmox_s_iptables_snat_translates_its_subnet_leaving_by_its_device_only() {
    assert_eq!(
        predict(
            &recorded("proxmox-snat-xt"),
            packet("vmbr0.50", "10.20.129.250")
        ),
        Snat {
            src: v4("10.20.129.250"),
            translated: Some(true),
            why: "a source NAT rule of ip nat POSTROUTING matches".into(),
        }
    );
    assert_eq!(
        translated("proxmox-snat-xt", "vmbr0", "10.20.129.250"),
        Some(false)
    );
    assert_eq!(
        translated("proxmox-snat-xt", "vmbr0.50", "10.20.130.250"),
        Some(false)
    );
}

#[test]
fn jumps_returns_and_snat_statements_are_followed() {
    let jumped = predict(&recorded("snat-jump"), packet("nic5", "192.0.2.11"));
    assert_eq!(jumped.translated, Some(true));
    assert_eq!(jumped.why, "a source NAT rule of inet t post matches");
    assert_eq!(translated("snat-jump", "nic6", "192.0.2.11"), Some(false));
    assert_eq!(translated("snat-jump", "nic5", "192.0.3.11"), Some(false));
    assert_eq!(
        translated("return-then-snat", "vmbr0", "10.20.129.250"),
        Some(false)
    );
    assert_eq!(
        translated("return-then-snat", "vmbr0.50", "10.20.129.250"),
        Some(true)
    );
    let none = predict(&recorded("empty"), packet("nic5", "192.0.2.11"));
    assert_eq!(
        (none.translated, none.why.as_str()),
        (Some(false), "no source NAT rule matches")
    );
}

#[test]
fn wildcards_escapes_sets_ranges_and_a_later_base_chain_are_read_as_nft_does() {
    let cases = [
        // "vmbr0\*" is the name vmbr0* itself, not a prefix.
        ("vmbr0x", "10.64.0.1", Some(false)),
        ("vmbr0*", "10.64.0.1", Some(true)),
        // "up*" is a prefix; @tenants holds 10.64.0.0/10 and 198.18.0.10-198.18.0.20.
        ("uplink", "198.18.0.15", Some(true)),
        ("uplink", "198.18.0.21", Some(false)),
        ("uplink", "10.127.255.254", Some(true)),
        // accept ends the first base chain; the one at priority 200 still translates.
        ("acc0", "10.64.0.1", Some(true)),
        ("acc0", "172.16.0.1", Some(false)),
        ("lan1", "192.168.1.1", Some(true)),
        ("lan1", "192.168.1.2", Some(false)),
        ("lan2", "172.16.0.1", Some(false)),
    ];
    for (dev, src, expected) in cases {
        assert_eq!(
            translated("wildcards-sets", dev, src),
            expected,
            "{dev} {src}"
        );
    }
    let late = predict(&recorded("wildcards-sets"), packet("acc0", "10.64.0.1"));
    assert_eq!(late.why, "a source NAT rule of ip nat late matches");
}

#[test]
fn a_translating_chain_of_a_table_dormant_or_maybe_dormant_is_unknown_never_nat() {
    let json = include_str!("../../tests/data/nft-1.0.6/dormant.json");
    let text = include_str!("../../tests/data/nft-1.0.6/dormant.txt");
    let listed = Ruleset::parse_listings(json, text).unwrap();
    let dormant = predict(&listed, packet("nic5", "192.0.2.11"));
    assert_eq!(dormant.translated, None);
    assert_eq!(
        dormant.why,
        "not evaluated: table ip nat is dormant (flags dormant), so its chains see no packet"
    );
    // nft 1.0.6 prints the single flag as "nat" in JSON: read alone, the flags are unreadable.
    let json_alone = predict(&Ruleset::parse(json).unwrap(), packet("nic5", "192.0.2.11"));
    assert_eq!(json_alone.translated, None);
    assert!(
        json_alone
            .why
            .starts_with("not evaluated: table ip nat has flags"),
        "{}",
        json_alone.why
    );
    // Where the chain would not translate, whether it runs changes nothing.
    assert_eq!(
        predict(&listed, packet("nic6", "192.0.2.11")).translated,
        Some(false)
    );
}

#[test]
fn a_match_not_understood_makes_the_answer_unknown_never_no_nat() {
    let unknown = predict(&recorded("ct-mark"), packet("nic5", "192.0.2.11"));
    assert_eq!(unknown.translated, None);
    assert!(
        unknown
            .why
            .starts_with("not evaluated: chain ip nat post: rule handle 2: a match on")
            && unknown.why.contains("\"ct\""),
        "{}",
        unknown.why
    );
}

/// One rule of `chain` in table ip nat, with these statements.
fn rule(chain: &str, handle: i64, expr: serde_json::Value) -> serde_json::Value {
    json!({"rule": {"family": "ip", "table": "nat", "chain": chain, "handle": handle,
                    "expr": expr}})
}

fn nat_ruleset(rules: Vec<serde_json::Value>) -> Ruleset {
    let mut objects = vec![
        json!({"table": {"family": "ip", "name": "nat", "handle": 1}}),
        json!({"chain": {"family": "ip", "table": "nat", "name": "post", "handle": 1,
                          "type": "nat", "hook": "postrouting", "prio": 100,
                          "policy": "accept"}}),
        json!({"chain": {"family": "ip", "table": "nat", "name": "sub", "handle": 2}}),
    ];
    objects.extend(rules);
    Ruleset::parse(&json!({ "nftables": objects }).to_string()).unwrap()
}

#[test]
fn every_statement_or_match_the_walk_does_not_model_is_named_as_unknown() {
    let oifname = |right: serde_json::Value| json!({"match": {"op": "==", "left": {"meta": {"key": "oifname"}}, "right": right}});
    let cases = [
        (json!([{"drop": null}]), "the expression \"drop\""),
        (
            json!([{"dnat": {"addr": "10.0.0.1"}}]),
            "the expression \"dnat\"",
        ),
        (
            json!([{"xt": {"type": "match", "name": "conntrack"}}, {"masquerade": null}]),
            "the iptables extension \"conntrack\"",
        ),
        (
            json!([{"match": {"op": "<", "left": {"meta": {"key": "oifname"}}, "right": "nic5"}},
                   {"masquerade": null}]),
            "the operator \"<\"",
        ),
        (
            json!([oifname(json!("@uplinks")), {"masquerade": null}]),
            "an oifname match against the set @uplinks",
        ),
        // nft 1.0.6 prints a set element "nic*" alike for the prefix and the literal star.
        (
            json!([oifname(json!({"set": ["nic*"]})), {"masquerade": null}]),
            "an oifname set element \"nic*\"",
        ),
        (
            json!([{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}},
                              "right": "@missing"}}, {"masquerade": null}]),
            "an ip saddr match against the set @missing",
        ),
        (json!([{"jump": {}}]), "a jump without a target"),
    ];
    for (expr, why) in cases {
        let ruleset = nat_ruleset(vec![rule("post", 5, expr.clone())]);
        let answer = predict(&ruleset, packet("nic5", "192.0.2.11"));
        assert_eq!(answer.translated, None, "{expr}");
        assert!(answer.why.contains(why), "{expr}: {}", answer.why);
    }
    // A jump to a chain that does not exist is the walker's: unknown too.
    let missing = nat_ruleset(vec![rule(
        "post",
        5,
        json!([{"jump": {"target": "nowhere"}}]),
    )]);
    let answer = predict(&missing, packet("nic5", "192.0.2.11"));
    assert_eq!(answer.translated, None);
    assert!(answer.why.contains("nowhere"), "{}", answer.why);
}

#[test]
fn a_match_that_fails_first_decides_before_one_not_understood_and_goto_ends_the_chain() {
    // The rule cannot apply (oifname differs), whatever the ct match would say.
    let skipped = nat_ruleset(vec![rule(
        "post",
        5,
        json!([{"match": {"op": "==", "left": {"meta": {"key": "oifname"}}, "right": "nic9"}},
               {"match": {"op": "==", "left": {"ct": {"key": "mark"}}, "right": 1}},
               {"masquerade": null}]),
    )]);
    let packet = packet("nic5", "192.0.2.11");
    assert_eq!(predict(&skipped, packet).translated, Some(false));
    // goto: the sub chain's end is the base chain's end; the masquerade after it never runs.
    let goto = nat_ruleset(vec![
        rule("post", 5, json!([{"goto": {"target": "sub"}}])),
        rule("post", 6, json!([{"masquerade": null}])),
        rule("sub", 7, json!([{"counter": {"packets": 0, "bytes": 0}}])),
    ]);
    assert_eq!(predict(&goto, packet).translated, Some(false));
    let jump = nat_ruleset(vec![
        rule("post", 5, json!([{"jump": {"target": "sub"}}])),
        rule("post", 6, json!([{"masquerade": null}])),
        rule("sub", 7, json!([{"return": null}])),
    ]);
    assert_eq!(predict(&jump, packet).translated, Some(true));
}

#[test]
fn a_chain_jumped_to_many_times_is_read_once() {
    // 3^12 paths through the 41 rules: a walk that re-walks each jump reads millions.
    let (answer, rules_read) = walk(&recorded("fanout-41"), packet("uplink", "10.64.1.250"));
    assert_eq!(answer.translated, Some(true));
    assert_eq!(answer.why, "a source NAT rule of ip nat l0 matches");
    assert_eq!(rules_read, 41);
}

fn snat_lookup(dst: &str, src: &str) -> LookupCheck {
    LookupCheck {
        table: Some(ExpectedTable::Any),
        snat_src: Some(v4(src)),
        ..lookup(dst)
    }
}

fn proxmox_node() -> RecordedKernel {
    let mut kernel = RecordedKernel::fixed();
    kernel.nft = Some(include_str!("../../tests/data/nft-1.0.6/proxmox-snat-xt.json").into());
    kernel.lookups.insert(
        ip("203.0.113.8"),
        answer(VRF_TABLE, Some("10.20.50.1"), TRANSIT),
    );
    kernel
        .lookups
        .insert(ip("192.0.2.9"), Lookup::Refused(Refusal::Unreachable));
    kernel
}

fn snat_checks() -> Vec<VrfCheck> {
    vec![VrfCheck {
        lookups: vec![
            snat_lookup("203.0.113.8", "10.20.129.250"),
            snat_lookup("8.8.8.8", "10.20.130.250"),
            snat_lookup("192.0.2.9", "10.20.129.250"),
            LookupCheck {
                table: Some(ExpectedTable::Any),
                ..lookup("10.20.99.5")
            },
        ],
        ..VrfCheck::new("vrf_tdemo")
    }]
}

#[test]
fn each_lookup_with_snat_src_answers_its_source_nat_from_one_read_of_the_ruleset() {
    let mut kernel = proxmox_node();
    let report = run(&mut kernel, &snat_checks());
    let actual = |dst: &str| {
        let check = report
            .checks
            .iter()
            .find(|c| c.check == format!("lookup {dst}"))
            .unwrap();
        check.actual.clone()
    };
    assert_eq!(
        actual("203.0.113.8")["snat"],
        json!({"src": "10.20.129.250", "translated": true,
               "why": "a source NAT rule of ip nat POSTROUTING matches"})
    );
    assert_eq!(
        actual("8.8.8.8")["snat"],
        json!({"src": "10.20.130.250", "translated": false, "why": "no source NAT rule matches"})
    );
    // A refusal leaves by no device, and a lookup without snat_src asks nothing.
    assert!(actual("192.0.2.9").get("snat").is_none());
    assert!(actual("10.20.99.5").get("snat").is_none());
    assert!(report.failures().is_empty(), "{:?}", report.failures());
    assert_eq!(kernel.nft_reads, 1);

    let mut unasked = proxmox_node();
    let mut checks = snat_checks();
    checks[0].lookups.iter_mut().for_each(|l| l.snat_src = None);
    run(&mut unasked, &checks);
    assert_eq!(unasked.nft_reads, 0, "no lookup asks: nft is not run");
}

#[test]
fn a_ruleset_that_cannot_be_read_makes_every_answer_unknown_and_fails_nothing() {
    let mut kernel = proxmox_node();
    kernel.nft = None;
    let report = run(&mut kernel, &snat_checks());
    let internet = report
        .checks
        .iter()
        .find(|c| c.check == "lookup 203.0.113.8")
        .unwrap();
    assert_eq!(
        internet.actual["snat"],
        json!({"src": "10.20.129.250", "translated": null,
               "why": "not evaluated: /usr/sbin/nft is not installed"})
    );
    assert!(report.failures().is_empty(), "{:?}", report.failures());
}
