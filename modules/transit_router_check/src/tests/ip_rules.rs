use super::*;
use crate::evaluate;
use crate::gate::{parse, routing_ahead};
use crate::report::State;

const NARROWED_4: &str = include_str!("../../tests/data/ip-6.1/narrowed-gate-4.json");
const NARROWED_6: &str = include_str!("../../tests/data/ip-6.1/narrowed-gate-6.json");
const AHEAD_ALTNAME_4: &str = include_str!("../../tests/data/ip-6.1/ahead-altname-4.json");

fn transit() -> Vec<String> {
    vec!["tr-transit".into(), "trx".into()]
}

#[test]
fn a_negated_rule_is_no_gate() {
    // `ip -j -4 rule show` after `ip -4 rule add not priority 100 iif tr-transit fwmark 0/0x400000 prohibit`.
    let json = r#"[{"priority":0,"src":"all","table":"local"},{"priority":100,"not":null,"src":"all","fwmark":"0","fwmask":"0x400000","iif":"tr-transit","action":"prohibit"}]"#;
    let rules = parse(json).expect("ip's JSON");
    assert!(rules[1].not && !rules[0].not);
    assert!(!rules[1].is_ipv4_gate(100, &transit(), 0x40_0000));
    let plain = parse(&json.replace("\"not\":null,", "")).expect("ip's JSON");
    assert!(plain[1].is_ipv4_gate(100, &transit(), 0x40_0000));
}

/// TR4: a gate rule narrowed by another selector is no gate, and what narrows it is named.
#[test]
fn a_gate_narrowed_by_another_selector_is_no_gate_and_the_router_is_open() {
    let mut observed = enforced();
    observed.ruleset = ruleset(FLUSHED);
    observed.ipv4_rules = parse(NARROWED_4).expect("recorded");
    observed.ipv6_rules = parse(NARROWED_6).expect("recorded");
    let report = evaluate(&request(), &observed);
    assert!(!report.gate.ipv4 && !report.gate.ipv6, "{:?}", report.gate);
    assert_eq!(
        report.state,
        State::Open,
        "not closed: GRE-less transit traffic crosses"
    );
    let gate = report
        .checks
        .iter()
        .find(|c| c.name == "routing_gate")
        .expect("reported");
    assert!(!gate.ok);
    assert!(
        gate.message
            .contains("is narrowed by ipproto, so it is not the gate"),
        "{}",
        gate.message
    );
    assert!(
        gate.message.contains("is narrowed by dst,"),
        "{}",
        gate.message
    );
}

/// TR4: every key ip prints that the gate lacks narrows it, a key unknown to the module too; a
/// rule the kernel has not bound to an interface (`iif_detached`) matches nothing.
#[test]
fn every_other_key_narrows_and_only_the_plain_gate_is_one() {
    let gate = r#"{"priority":100,"src":"all","fwmark":"0","fwmask":"0x400000","iif":"tr-transit","action":"prohibit"#;
    let plain = parse(&format!("[{gate}\"}}]")).expect("JSON");
    assert!(plain[0].is_ipv4_gate(100, &transit(), 0x40_0000));
    let with_protocol = parse(&format!("[{gate}\",\"protocol\":\"static\"}}]")).expect("JSON");
    assert!(with_protocol[0].is_ipv4_gate(100, &transit(), 0x40_0000));
    for extra in [
        r#""dst":"10.0.0.0","dstlen":8"#,
        r#""src":"198.51.100.0","srclen":24"#,
        r#""tos":"0x10""#,
        r#""sport":5"#,
        r#""dport":6"#,
        r#""uid_start":1,"uid_end":2"#,
        r#""l3mdev":null"#,
        r#""tun_id":5"#,
        r#""iif_detached":null"#,
        r#""flowlabel":"0x1""#,
    ] {
        let json = format!("[{}\",{extra}}}]", gate.replace(r#""src":"all","#, ""));
        let rules = parse(&json).expect("JSON");
        assert!(
            !rules[0].is_ipv4_gate(100, &transit(), 0x40_0000),
            "{extra} narrows the gate"
        );
        assert!(!rules[0].narrowing().is_empty(), "{extra} is named");
    }
}

/// TR5: a rule at priority 0 and one naming the transit interface by an altname route ahead of
/// the gate; so does a negated rule with another selector. A rule for another `iif`, an `oif`
/// rule, `nop` and the kernel's `lookup local` do not.
#[test]
fn rules_ahead_of_the_gate_at_priority_0_and_by_altname_are_named() {
    let rules = parse(AHEAD_ALTNAME_4).expect("recorded");
    let names = transit();
    let ahead = routing_ahead(
        &rules,
        |r| r.is_ipv4_gate(100, &names, 0x40_0000),
        100,
        &names,
    );
    let described: Vec<String> = ahead.iter().map(|r| r.describe()).collect();
    assert_eq!(
        described,
        [
            "priority 0 iif tr-transit lookup 7",
            "priority 50 iif trx lookup 8",
            "priority 80 not iif trx ipproto udp lookup 11"
        ]
    );
    let mut observed = enforced();
    observed.ipv4_rules = rules;
    observed.transit_names = names;
    let report = evaluate(&request(), &observed);
    assert!(
        report.gate.ipv4,
        "a gate written with the altname is the gate"
    );
    assert_eq!(report.violations, ["routing_gate"]);
    assert_eq!(report.state, State::Open);
}

/// TR5: rules at the gate's priority run in the order the kernel lists them: a lookup listed
/// before the gate runs first.
#[test]
fn a_rule_at_the_gates_priority_listed_before_it_is_ahead() {
    let json = r#"[{"priority":0,"src":"all","table":"local"},{"priority":100,"src":"all","iif":"tr-transit","table":"7"},{"priority":100,"src":"all","fwmark":"0","fwmask":"0x400000","iif":"tr-transit","action":"prohibit"},{"priority":100,"src":"all","iif":"tr-transit","table":"8"}]"#;
    let rules = parse(json).expect("JSON");
    let names = transit();
    let ahead = routing_ahead(
        &rules,
        |r| r.is_ipv4_gate(100, &names, 0x40_0000),
        100,
        &names,
    );
    assert_eq!(ahead.len(), 1);
    assert_eq!(ahead[0].describe(), "priority 100 iif tr-transit lookup 7");
}

/// TR5: table local is looked up at priority 0, ahead of the gate: a unicast route there is named.
#[test]
fn a_forwarding_route_in_table_local_is_ahead_of_the_gate() {
    let mut observed = enforced();
    observed.routes = recorded_routes();
    assert!(evaluate(&request(), &observed)
        .checks
        .iter()
        .any(|c| c.name == "routing_gate" && c.ok));
    observed.routes.push(crate::routes::IpRoute {
        dst: "172.16.0.0/12".into(),
        table: Some("local".into()),
        dev: Some("tr-up".into()),
        gateway: Some("10.9.0.2".into()),
        kind: None,
    });
    let report = evaluate(&request(), &observed);
    let gate = report
        .checks
        .iter()
        .find(|c| c.name == "routing_gate")
        .expect("reported");
    assert!(
        gate.message
            .contains("forwards: unicast 172.16.0.0/12 dev tr-up in table local"),
        "{}",
        gate.message
    );
}

/// TR5: IPv6 table local is looked up ahead of the IPv6 gate too.
#[test]
fn a_forwarding_route_in_ipv6_table_local_is_ahead_of_the_gate() {
    // `ip -j -6 route show table local` with `ip -6 route add 2001:db8:5::/48 dev tr-transit table local`.
    let json = r#"[{"type":"local","dst":"::1","dev":"lo","protocol":"kernel","metric":0,"flags":[],"pref":"medium"},{"dst":"2001:db8:5::/48","dev":"tr-transit","metric":1024,"flags":["linkdown"],"pref":"medium"},{"type":"multicast","dst":"ff00::/8","dev":"tr-transit","protocol":"kernel","metric":256,"flags":["linkdown"],"pref":"medium"}]"#;
    let mut observed = enforced();
    observed.ipv6_local_routes = crate::routes::parse(json).expect("ip's JSON");
    for route in &mut observed.ipv6_local_routes {
        route.table = Some("local".into());
    }
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["routing_gate"]);
    observed.ipv6_local_routes.retain(|r| r.kind.is_some());
    assert!(
        evaluate(&request(), &observed).violations.is_empty(),
        "local and multicast routes are the kernel's own"
    );
}
