use super::*;
use crate::evaluate;
use crate::report::State;

fn failed(observed: &Observed) -> Vec<&'static str> {
    evaluate(&request(), observed).violations
}

fn check<'a>(report: &'a crate::Report, name: &str) -> &'a crate::Check {
    report
        .checks
        .iter()
        .find(|c| c.name == name)
        .expect("every check is reported")
}

#[test]
fn the_recorded_enforced_router_passes_every_check_in_order() {
    let report = evaluate(&request(), &enforced());
    let names: Vec<&str> = report.checks.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "table_present",
            "open_forward_policy",
            "first_in_forward",
            "private_accept_ahead",
            "vpc_route",
            "uplink_snat",
            "routing_gate",
            "forwarding",
            "persisted",
            "reload_survival",
            "transit_interface",
            "legacy_tables",
            "reverse_path"
        ]
    );
    assert_eq!(
        report.violations,
        Vec::<&str>::new(),
        "{:#?}",
        report.checks
    );
    assert_eq!(report.state, State::Enforced);
    assert_eq!(report.nft_version, "1.0.6");
    assert_eq!(report.forward_chains.len(), 1);
    assert_eq!(report.forward_chains[0].priority, -200);
}

#[test]
fn a_flushed_ruleset_with_the_gate_is_closed_and_names_each_violation() {
    let mut observed = enforced();
    observed.ruleset = ruleset(FLUSHED);
    let report = evaluate(&request(), &observed);
    assert_eq!(report.state, State::Closed);
    assert_eq!(
        report.violations,
        [
            "table_present",
            "open_forward_policy",
            "first_in_forward",
            "private_accept_ahead",
            "uplink_snat",
            "persisted"
        ]
    );
    let msg = report.conclude().expect_err("violations fail the run").msg;
    assert!(
        msg.starts_with(
            "transit router closed: table_present: table inet deevnet_transit is absent."
        ),
        "{msg}"
    );
    assert!(
        msg.contains(
            "Fix: load the persisted ruleset: `nft -f /etc/nftables.d/deevnet-transit-router.nft`"
        ),
        "{msg}"
    );
}

#[test]
fn no_table_and_no_gate_with_forwarding_on_is_open() {
    let mut observed = enforced();
    observed.ruleset = ruleset(FLUSHED);
    observed.ipv4_rules.clear();
    observed.ipv6_rules.clear();
    let report = evaluate(&request(), &observed);
    assert_eq!(report.state, State::Open);
    assert!(report.violations.contains(&"routing_gate"));
    assert_eq!(
        report.gate,
        crate::report::Gate {
            ipv4: false,
            ipv6: false
        }
    );
    assert!(check(&report, "open_forward_policy")
        .message
        .contains("a forward policy of accept with no collection rules"));
}

#[test]
fn forwarding_off_is_closed_whatever_else() {
    let mut observed = enforced();
    observed.ruleset = ruleset(FLUSHED);
    observed.ipv4_rules.clear();
    observed.forwarding.transit = false;
    let report = evaluate(&request(), &observed);
    assert_eq!(report.state, State::Closed);
    assert!(
        check(&report, "open_forward_policy").ok,
        "forwarding off: nothing is open"
    );
    let forwarding = check(&report, "forwarding");
    assert!(!forwarding.ok);
    assert_eq!(forwarding.fix, "`sysctl -w net.ipv4.conf.tr-transit.forwarding=1` and persist it in /etc/sysctl.d (the role does)");
}

#[test]
fn an_accept_of_a_private_range_ahead_of_the_drop_names_its_rule() {
    let mut observed = enforced();
    observed.ruleset = ruleset(ACCEPT_AHEAD);
    let report = evaluate(&request(), &observed);
    assert_eq!(
        report.state,
        State::Closed,
        "the gate holds, the table does not decide"
    );
    let ahead = check(&report, "private_accept_ahead");
    assert!(!ahead.ok);
    assert!(
        ahead
            .message
            .contains("inet deevnet_transit from_transit (rule handle"),
        "{}",
        ahead.message
    );
    assert!(
        ahead.message.contains("accepts 10.0.0.0/8"),
        "{}",
        ahead.message
    );
    // The running table differs from the persisted one by that rule.
    let persisted = check(&report, "persisted");
    assert!(
        persisted.message.contains("running but not in"),
        "{}",
        persisted.message
    );
    assert!(
        persisted.message.contains("10.0.0.0"),
        "{}",
        persisted.message
    );
}

#[test]
fn a_foreign_forward_chain_ahead_is_named_and_its_private_accept_too() {
    let mut observed = enforced();
    observed.ruleset = ruleset(FOREIGN_AHEAD);
    let report = evaluate(&request(), &observed);
    let first = check(&report, "first_in_forward");
    assert!(!first.ok);
    assert!(
        first.message.contains("ip filter FORWARD (priority -300)"),
        "{}",
        first.message
    );
    let ahead = check(&report, "private_accept_ahead");
    assert!(
        ahead.message.contains("ip filter FORWARD"),
        "{}",
        ahead.message
    );
    assert!(ahead.message.contains("172.16.0.0/12"), "{}", ahead.message);
    assert_eq!(report.forward_chains.len(), 2);
}

#[test]
fn dns_to_declared_servers_is_an_allowance_and_to_others_is_not() {
    let mut observed = enforced();
    observed.ruleset = ruleset(DNS_SET);
    let declared =
        Request::from_params(params(json!({"dns_servers": ["10.0.0.53"]}))).expect("valid");
    let report = evaluate(&declared, &observed);
    assert!(
        check(&report, "private_accept_ahead").ok,
        "{:#?}",
        report.checks
    );
    let other =
        Request::from_params(params(json!({"dns_servers": ["192.0.2.53"]}))).expect("valid");
    let report = evaluate(&other, &observed);
    let ahead = check(&report, "private_accept_ahead");
    assert!(!ahead.ok);
    assert!(
        ahead.message.contains("accepts 10.0.0.53"),
        "{}",
        ahead.message
    );
}

#[test]
fn a_route_into_a_vpc_range_is_named_with_its_table_and_a_blackhole_is_not() {
    let mut observed = enforced();
    observed.routes = recorded_routes();
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["vpc_route"]);
    assert_eq!(report.routes_into_vpc.len(), 1);
    assert_eq!(report.routes_into_vpc[0].dst, "10.202.0.0/25");
    assert_eq!(report.routes_into_vpc[0].table, "7");
    assert_eq!(
        report.routes_into_vpc[0].gateway.as_deref(),
        Some("10.9.0.2")
    );
    assert!(check(&report, "vpc_route")
        .fix
        .starts_with("`ip route del 10.202.0.0/25 table 7`"));
}

#[test]
fn snat_needs_the_transit_sources_going_out_of_the_uplink() {
    let observed = enforced();
    let elsewhere =
        Request::from_params(params(json!({"transit_network": "198.51.0.0/16"}))).expect("valid");
    assert_eq!(failed_with(&elsewhere, &observed), ["uplink_snat"]);
}

fn failed_with(request: &Request, observed: &Observed) -> Vec<&'static str> {
    evaluate(request, observed).violations
}

#[test]
fn the_gate_needs_both_rules_its_mark_and_nothing_routing_ahead() {
    let mut observed = enforced();
    observed.ipv6_rules.clear();
    assert_eq!(failed(&observed), ["routing_gate"]);
    let other_mark = Request::from_params(params(json!({"gate_mark": 0x80_0000}))).expect("valid");
    let report = evaluate(&other_mark, &enforced());
    assert!(!report.gate.ipv4 && report.gate.ipv6);
    let mut observed = enforced();
    observed.ipv4_rules = gate::parse(RULE_AHEAD_4).expect("recorded");
    let report = evaluate(&request(), &observed);
    let gate = check(&report, "routing_gate");
    assert!(!gate.ok);
    assert!(
        gate.message
            .contains("ip -4 rule priority 50 iif tr-transit lookup 7"),
        "{}",
        gate.message
    );
}

#[test]
fn the_persisted_check_names_a_missing_file_a_refusal_and_a_difference() {
    let mut observed = enforced();
    observed.persisted = Persisted::Missing;
    let report = evaluate(&request(), &observed);
    assert!(check(&report, "persisted")
        .message
        .contains("does not exist"));
    observed.persisted =
        Persisted::Refused("ruleset_path=/x could have been written by another user".into());
    let report = evaluate(&request(), &observed);
    assert!(check(&report, "persisted")
        .message
        .starts_with("ruleset_path=/x could have been written"));
    observed.persisted = Persisted::Loaded(ruleset(ACCEPT_AHEAD));
    let report = evaluate(&request(), &observed);
    let persisted = check(&report, "persisted");
    assert!(
        persisted
            .message
            .contains("missing from the running table: rule"),
        "{}",
        persisted.message
    );
}

#[test]
fn reload_survival_needs_the_unit_enabled_and_reloaded_with_nftables() {
    let mut observed = enforced();
    observed.unit.enabled_by = None;
    let report = evaluate(&request(), &observed);
    assert_eq!(
        check(&report, "reload_survival").fix,
        "`systemctl enable deevnet-transit-router.service`"
    );
    let mut observed = enforced();
    observed.unit.unit = Ok(Some("[Unit]\n[Install]\nWantedBy=sysinit.target\n".into()));
    assert_eq!(failed(&observed), ["reload_survival"]);
    observed.unit.nftables_conf = Ok(Some(
        "flush ruleset\ninclude \"/etc/nftables.d/*.nft\"\n".into(),
    ));
    assert_eq!(failed(&observed), Vec::<&str>::new());
    observed.unit.unit = Ok(None);
    assert_eq!(failed(&observed), ["reload_survival"]);
}

#[test]
fn a_report_without_violations_succeeds_and_says_so() {
    let outcome = evaluate(&request(), &enforced())
        .conclude()
        .expect("all pass");
    assert_eq!(outcome.msg, "transit router enforced: all 13 checks passed");
    assert_eq!(outcome.data["state"], "enforced");
    assert_eq!(outcome.data["violations"], json!([]));
}

#[test]
fn a_foreign_chain_at_the_same_priority_counts_as_ahead() {
    let same = FOREIGN_AHEAD.replace("\"prio\": -300", "\"prio\": -200");
    assert_ne!(same, FOREIGN_AHEAD);
    let mut observed = enforced();
    observed.ruleset = ruleset(&same);
    let report = evaluate(&request(), &observed);
    assert!(check(&report, "first_in_forward")
        .message
        .contains("(priority -200)"));
    let ahead = check(&report, "private_accept_ahead");
    assert!(
        ahead.message.contains("ip filter FORWARD"),
        "{}",
        ahead.message
    );
}

/// The flags are read by the runtime's one policy: from nft's text listing, since nft 1.0.6
/// misprints a single flag in JSON (`"flags": "inet"` here).
#[test]
fn a_dormant_table_does_not_decide_and_the_gate_keeps_it_closed() {
    let mut observed = enforced();
    observed.ruleset = Ruleset::parse_listings(DORMANT, DORMANT_TEXT).expect("recorded");
    let report = evaluate(&request(), &observed);
    let present = check(&report, "table_present");
    assert!(!present.ok);
    assert!(
        present
            .message
            .contains("is dormant (flags dormant), so its chains see no packet"),
        "{}",
        present.message
    );
    assert_eq!(report.state, State::Closed);
    // From the JSON alone the flags cannot be read: the table may be dormant.
    observed.ruleset = ruleset(DORMANT);
    let report = evaluate(&request(), &observed);
    let present = check(&report, "table_present");
    assert!(!present.ok);
    assert!(
        present.message.contains("so it may be dormant"),
        "{}",
        present.message
    );
    assert_eq!(report.state, State::Closed);
}

/// A flag that leaves the table in force (`persist`, as the text listing prints it) is no
/// reason to fail: only a dormant table, or flags that cannot be read, are.
#[test]
fn a_table_flagged_persist_is_in_force() {
    let persist = DORMANT_TEXT.replace("\tflags dormant", "\tflags persist");
    assert_ne!(persist, DORMANT_TEXT);
    let mut observed = enforced();
    observed.ruleset = Ruleset::parse_listings(DORMANT, &persist).expect("recorded");
    let report = evaluate(&request(), &observed);
    let present = check(&report, "table_present");
    assert!(present.ok, "{}", present.message);
}
