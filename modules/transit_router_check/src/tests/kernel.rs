use super::*;
use crate::evaluate;
use crate::interface::{self, parse_links, parse_tc};
use crate::kernel::ReversePathSysctls;
use crate::report::State;
use deevnet_runtime::nft::ranges::Range;

const STACKED: &str = include_str!("../../tests/data/ip-6.1/stacked-addr.json");
const BRIDGED: &str = include_str!("../../tests/data/ip-6.1/bridged-addr.json");
const INGRESS_REDIRECT: &str = include_str!("../../tests/data/tc-6.1/ingress-redirect.json");
const QDISC_CLSACT: &str = include_str!("../../tests/data/tc-6.1/qdisc-clsact.json");
const REPLIES_MARKED: &str = include_str!("../../tests/data/nft-1.0.6/replies-marked.json");
const QDISC_SHARED: &str = include_str!("../../tests/data/tc-6.1/qdisc-shared-block.json");

fn check<'a>(report: &'a crate::Report, name: &str) -> &'a crate::Check {
    report
        .checks
        .iter()
        .find(|c| c.name == name)
        .expect("every check is reported")
}

/// TR6: enslaved to a bridge, with another interface in the transit network: open, both named.
#[test]
fn a_bridged_transit_interface_and_a_second_one_in_the_network_are_named_and_open() {
    let links = parse_links(BRIDGED).expect("recorded");
    assert_eq!(
        interface::names(&links, "tr-transit"),
        ["tr-transit", "trx"]
    );
    let network = Range::parse_cidr("198.51.100.0/24").expect("CIDR");
    let mut observed = enforced();
    observed.transit_interface.master = links
        .iter()
        .find(|l| l.ifname == "tr-transit")
        .and_then(|l| l.master.clone());
    observed.transit_interface.others_in_network =
        interface::others_in_transit_network(&links, "tr-transit", network);
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["transit_interface"]);
    assert_eq!(
        report.state,
        State::Open,
        "not enforced: the gate's iif sees br0"
    );
    let message = &check(&report, "transit_interface").message;
    assert!(
        message.contains("tr-transit is enslaved to br0"),
        "{message}"
    );
    assert!(message.contains("tr-2 (198.51.100.7/24)"), "{message}");
    // Forwarding off on the transit interface proves nothing either: the bridge forwards.
    observed.forwarding.transit = false;
    assert_eq!(evaluate(&request(), &observed).state, State::Open);
}

/// TR6, must not pass the other way: an address outside the transit network is no finding.
#[test]
fn an_address_outside_the_transit_network_is_no_finding() {
    let links = parse_links(BRIDGED).expect("recorded");
    let elsewhere = Range::parse_cidr("203.0.113.0/24").expect("CIDR");
    assert!(interface::others_in_transit_network(&links, "tr-transit", elsewhere).is_empty());
    assert!(interface::others_in_transit_network(
        &links,
        "tr-2",
        Range::parse_cidr("198.51.100.0/24").expect("CIDR")
    )
    .is_empty());
}

/// TR7: a tc ingress redirect on the transit interface moves packets ahead of the forward hook.
#[test]
fn a_tc_ingress_redirect_is_named_and_the_router_is_open() {
    let ingress = parse_tc(INGRESS_REDIRECT).expect("recorded");
    let qdiscs = parse_tc(QDISC_CLSACT).expect("recorded");
    let found = interface::unproven_tc(&qdiscs, &ingress, &[]);
    assert_eq!(
        found,
        ["tc ingress filter u32 pref 49152 chain 0 with action mirred to tr-up"]
    );
    let mut observed = enforced();
    observed.transit_interface.tc = Ok(found);
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["transit_interface"]);
    assert_eq!(report.state, State::Open);
    // tc that cannot be read proves nothing either.
    observed.transit_interface.tc = Err("/usr/sbin/tc is not installed".into());
    let report = evaluate(&request(), &observed);
    assert_eq!(report.state, State::Open);
    assert!(check(&report, "transit_interface")
        .message
        .contains("tc on tr-transit cannot be judged: /usr/sbin/tc is not installed"));
}

/// TR7 and TR1: `skbedit` anywhere on the transit interface writes marks; a shared block's
/// filters are not listed per device; a bpf classifier decides in place. Gact and police alone,
/// and an empty clsact, are harmless. (tc's JSON as iproute2 6.1 prints it; this kernel lacks
/// act_skbedit, so the skbedit filter is written in that shape, not recorded.)
#[test]
fn skbedit_shared_blocks_and_bpf_are_unproven_and_gact_is_harmless() {
    let skbedit = serde_json::json!([{"protocol":"ip","pref":1,"kind":"u32","chain":0,"options":{"actions":[{"order":1,"kind":"skbedit","mark":4194304,"mask":4194304,"control_action":{"type":"pipe"}}]}}]);
    let skbedit = skbedit.as_array().expect("array").clone();
    assert_eq!(
        interface::unproven_tc(&[], &[], &skbedit),
        ["tc egress filter u32 pref 1 chain 0 with action skbedit"]
    );
    let shared = parse_tc(QDISC_SHARED).expect("recorded");
    assert_eq!(
        interface::unproven_tc(&shared, &[], &[]),
        ["a clsact qdisc with a shared ingress_block 22, whose filters are not listed per device"]
    );
    let bpf = serde_json::json!([{"protocol":"all","pref":1,"kind":"bpf","chain":0,"options":{"direct-action":true}}]);
    assert_eq!(
        interface::unproven_tc(&[], bpf.as_array().expect("array"), &[]).len(),
        1
    );
    let gact = serde_json::json!([{"protocol":"ip","pref":1,"kind":"u32","chain":0},{"protocol":"ip","pref":1,"kind":"u32","chain":0,"options":{"actions":[{"order":1,"kind":"gact","control_action":{"type":"drop"}},{"order":2,"kind":"police"}]}}]);
    let clsact = parse_tc(QDISC_CLSACT).expect("recorded");
    assert!(interface::unproven_tc(&clsact, gact.as_array().expect("array"), &[]).is_empty());
    assert_eq!(
        parse_tc("").expect("nothing printed"),
        Vec::<serde_json::Value>::new()
    );
}

/// TR1 (not nftables): iptables-legacy tables cannot be listed by nft: a violation naming them,
/// and nothing is provable.
#[test]
fn iptables_legacy_tables_are_named_and_the_router_is_open() {
    let mut observed = enforced();
    observed.legacy_tables = Ok(vec!["ip mangle".into(), "ip filter".into()]);
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["legacy_tables"]);
    assert_eq!(report.state, State::Open);
    assert!(check(&report, "legacy_tables")
        .message
        .contains("iptables-legacy tables are loaded (ip mangle, ip filter)"));
    observed.legacy_tables = Err("/proc/net/ip_tables_names cannot be read".into());
    assert_eq!(
        evaluate(&request(), &observed).violations,
        ["legacy_tables"]
    );
}

/// RP: rp_filter on the uplink (the larger of conf.all and its own) with the answers unmarked or
/// src_valid_mark off: a violation that leaves the state as it is.
#[test]
fn the_reverse_path_filter_that_meets_the_gate_is_a_violation_of_availability() {
    let mut observed = enforced();
    for (all, uplink) in [(1, 0), (0, 2), (2, 1)] {
        observed.reverse_path = ReversePathSysctls {
            rp_filter_all: all,
            rp_filter_uplink: uplink,
            src_valid_mark_all: true,
            src_valid_mark_uplink: false,
        };
        let report = evaluate(&request(), &observed);
        assert_eq!(
            report.violations,
            ["reverse_path"],
            "rp_filter {all}/{uplink}"
        );
        assert_eq!(
            report.state,
            State::Enforced,
            "availability changes no state"
        );
        let found = check(&report, "reverse_path");
        assert!(
            found.message.contains(
                "no prerouting rule of table inet deevnet_transit marks what arrives on tr-up (or on every interface)"
            ),
            "{}",
            found.message
        );
        assert!(
            found.fix.contains("`sysctl -w net.ipv4.conf.all.src_valid_mark=1` and a prerouting rule in the table that marks the replies to the transit network, `iifname != \"tr-transit\" ct direction reply ct original ip saddr 198.51.100.0/24 meta mark set meta mark | 0x00400000`"),
            "{}",
            found.fix
        );
    }
    // rp_filter 0 on the uplink and in conf.all: nothing is filtered.
    observed.reverse_path = ReversePathSysctls::default();
    assert!(check(&evaluate(&request(), &observed), "reverse_path").ok);
}

/// RP, must not pass: src_valid_mark on with a table that marks the answers passes; the same
/// table with src_valid_mark off does not.
#[test]
fn src_valid_mark_and_a_marked_uplink_pass_the_reverse_path_check() {
    let mut observed = enforced();
    observed.ruleset = ruleset(&marking_uplink());
    let sysctls = ReversePathSysctls {
        rp_filter_all: 2,
        rp_filter_uplink: 2,
        src_valid_mark_all: false,
        src_valid_mark_uplink: true,
    };
    observed.reverse_path = sysctls;
    assert!(check(&evaluate(&request(), &observed), "reverse_path").ok);
    observed.reverse_path.src_valid_mark_uplink = false;
    let report = evaluate(&request(), &observed);
    assert!(!check(&report, "reverse_path").ok);
    assert!(check(&report, "reverse_path")
        .message
        .contains("net.ipv4.conf.tr-up.src_valid_mark is 0"));
}

/// The recorded ruleset with its prerouting rule repeated for the uplink: `iifname "tr-up" meta
/// mark set meta mark | 0x00400000`.
fn marking_uplink() -> String {
    let mut listing: serde_json::Value = serde_json::from_str(ENFORCED).expect("recorded");
    let objects = listing["nftables"].as_array_mut().expect("objects");
    let mut rule = objects
        .iter()
        .find(|o| o["rule"]["chain"] == "prerouting")
        .expect("the prerouting rule")
        .clone();
    rule["rule"]["handle"] = 999.into();
    rule["rule"]["expr"][0]["match"]["right"] = "tr-up".into();
    objects.push(rule);
    listing.to_string()
}

/// RP: without a rule refusing unmarked packets from the transit interface (a router before the
/// role), or without the table that lets transit traffic through the gate (flushed), no answer
/// meets the gate; the same sysctls with both fail.
#[test]
fn the_reverse_path_is_judged_only_where_transit_traffic_passes_the_gate() {
    let rp_on = ReversePathSysctls {
        rp_filter_all: 2,
        rp_filter_uplink: 2,
        src_valid_mark_all: false,
        src_valid_mark_uplink: false,
    };
    let mut observed = enforced();
    observed.reverse_path = rp_on;
    assert!(!check(&evaluate(&request(), &observed), "reverse_path").ok);
    let mut no_gate = observed.clone();
    no_gate.ipv4_rules.retain(|r| r.action.is_none());
    assert!(check(&evaluate(&request(), &no_gate), "reverse_path").ok);
    let mut other_mark = observed.clone();
    other_mark.ipv4_rules =
        crate::gate::parse(&GATE_4.replace("\"fwmark\":\"0\"", "\"fwmark\":\"0x400000\""))
            .expect("JSON");
    assert!(
        check(&evaluate(&request(), &other_mark), "reverse_path").ok,
        "a rule for marked packets only refuses no unmarked lookup"
    );
    let mut flushed = observed;
    flushed.ruleset = ruleset(FLUSHED);
    let report = evaluate(&request(), &flushed);
    assert!(check(&report, "reverse_path").ok);
    assert_eq!(report.state, State::Closed);
}

/// RP, must not pass: the role's mark of the replies to the transit network (no interface named)
/// with src_valid_mark on in conf.all passes under rp_filter 1 and 2.
#[test]
fn the_roles_mark_of_the_replies_passes_the_reverse_path_check() {
    let mut observed = enforced();
    observed.ruleset = ruleset(REPLIES_MARKED);
    for rp in [1, 2] {
        observed.reverse_path = ReversePathSysctls {
            rp_filter_all: rp,
            rp_filter_uplink: rp,
            src_valid_mark_all: true,
            src_valid_mark_uplink: false,
        };
        let report = evaluate(&request(), &observed);
        assert!(check(&report, "reverse_path").ok, "{:#?}", report.checks);
    }
    observed.reverse_path.src_valid_mark_all = false;
    assert!(!check(&evaluate(&request(), &observed), "reverse_path").ok);
}

/// TR6: a macvlan stacked on the transit interface takes what arrives for it as itself; the veth
/// peer (whose `link` names the transit interface too) is another wire, not a child.
#[test]
fn a_device_stacked_on_the_transit_interface_is_named_and_its_veth_peer_is_not() {
    let links = parse_links(STACKED).expect("recorded");
    let names = interface::names(&links, "tr-transit");
    assert_eq!(interface::stacked_on(&links, &names), ["mv0 (macvlan)"]);
    let mut observed = enforced();
    observed.transit_interface.stacked = interface::stacked_on(&links, &names);
    let report = evaluate(&request(), &observed);
    assert_eq!(report.violations, ["transit_interface"]);
    assert_eq!(report.state, State::Open);
    let peer = links
        .iter()
        .find(|l| l.ifname == "tr-up")
        .expect("the veth peer");
    assert_eq!(
        peer.link.as_deref(),
        Some("tr-transit"),
        "its link names the transit interface"
    );
}
