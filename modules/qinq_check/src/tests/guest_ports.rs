//! Guests kept off the uplink: the lab node with `vmbr0` over `bond0` and guest ports on it,
//! each way a port is kept off (VLAN filtering, an nftables rule) and each way it is not.

use super::*;
use crate::guest_ports::{guest_name, GuestName, Ruleset};
use crate::params::GuestPortsPolicy;
use serde_json::json;

const VMBR0: u32 = 20;
const TAP: u32 = 21;
const VETH: u32 = 22;
const FWPR: u32 = 23;
const MGMT: u32 = 24;
const VMBR0_50: u32 = 25;

/// The lab node, plus `vmbr0` (not VLAN-aware) over `bond0` with a VM's tap, a container's
/// veth, a firewalled VM's fwpr port and a plain NIC, and `vmbr0.50` on it.
fn with_guests(node: &mut Node, parent: u32) {
    node.links.push(link(VMBR0, "vmbr0", Some("bridge"), 1500));
    node.links
        .iter_mut()
        .find(|l| l.index == VMBR0)
        .unwrap()
        .bridge = Some(BridgeVlanSettings::default());
    node.links
        .iter_mut()
        .find(|l| l.index == parent)
        .unwrap()
        .controller = Some(VMBR0);
    for (index, name, kind) in [
        (TAP, "tap100i0", Some("tun")),
        (VETH, "veth101i1", Some("veth")),
        (FWPR, "fwpr102p0", Some("veth")),
        (MGMT, "eno3", None),
    ] {
        let mut port = link(index, name, kind, 1500);
        port.controller = Some(VMBR0);
        node.links.push(port);
    }
    let mut vlan50 = link(VMBR0_50, "vmbr0.50", Some("vlan"), 1500);
    vlan50.parent = Some(VMBR0);
    vlan50.vlan = Some(Vlan {
        id: 50,
        protocol: Some(VlanProtocol::Dot1Q),
    });
    node.links.push(vlan50);
}

fn guest_node() -> Node {
    let mut node = Node::healthy();
    with_guests(&mut node, BOND);
    node
}

fn report_with(node: &Node, ruleset: Ruleset, policy: GuestPortsPolicy) -> Report {
    let mut node_observed = node.observed.clone();
    node_observed.ruleset = ruleset;
    let request = Request::from_params(Params {
        guest_ports: policy,
        ..raw()
    })
    .unwrap();
    let stack = node.resolve(&request).unwrap();
    evaluate(&request, &stack, &node_observed)
}

fn ports(report: &Report) -> Vec<(&str, u32)> {
    report
        .guest_ports
        .iter()
        .map(|f| (f.port.as_str(), f.vmid))
        .collect()
}

/// A bridge-family ruleset with one base chain holding `rules` (each a list of expressions).
fn ruleset(hook: &str, rules: Vec<Value>) -> Ruleset {
    let mut items = vec![
        json!({"metainfo": {"json_schema_version": 1}}),
        json!({"table": {"family": "bridge", "name": "t"}}),
        json!({"chain": {"family": "bridge", "table": "t", "name": "c", "type": "filter", "hook": hook, "prio": -300, "policy": "accept"}}),
    ];
    for expr in rules {
        items.push(json!({"rule": {"family": "bridge", "table": "t", "chain": "c", "expr": expr}}));
    }
    read(json!({ "nftables": items }))
}

/// nft's JSON alone, read by the runtime's reader.
fn read(value: Value) -> Ruleset {
    Ruleset::Read(deevnet_runtime::nft::Ruleset::parse(&value.to_string()).unwrap())
}

fn iifname(op: &str, right: Value) -> Value {
    json!({"match": {"op": op, "left": {"meta": {"key": "iifname"}}, "right": right}})
}

fn ether_type(right: Value) -> Value {
    json!({"match": {"op": "==", "left": {"payload": {"protocol": "ether", "field": "type"}}, "right": right}})
}

/// The rules the fix text gives, as `nft -j list ruleset` prints them: one per guest name
/// pattern and tag type.
fn guide_rules() -> Vec<Value> {
    let mut rules = Vec::new();
    for pattern in crate::fix::GUEST_NAME_PATTERNS {
        for tag_type in ["8021q", "8021ad"] {
            rules.push(
                json!([iifname("==", json!(pattern)), ether_type(json!(tag_type)), {"drop": null}]),
            );
        }
    }
    rules
}

/// `rules` (each a list of expressions) of a bridge-family chain, as nft lists them.
fn chain_rules(table: &str, chain: &str, rules: Vec<Value>) -> Vec<Value> {
    rules
        .into_iter()
        .enumerate()
        .map(|(i, expr)| json!({"rule": {"family": "bridge", "table": table, "chain": chain, "handle": i + 2, "expr": expr}}))
        .collect()
}

use serde_json::Value;

#[test]
fn proxmox_guest_port_names_give_the_kind_and_the_vm() {
    let full = |n| guest_name(n).map(|g: GuestName| (g.kind, g.vmid, g.nic));
    assert_eq!(full("tap100i0"), Some(("tap", 100, 0)));
    assert_eq!(full("veth101i1"), Some(("veth", 101, 1)));
    assert_eq!(full("fwpr102p3"), Some(("fwpr", 102, 3)));
    assert_eq!(full("fwln102i12"), Some(("fwln", 102, 12)));
    let name = |n| guest_name(n).map(|g: GuestName| (g.kind, g.vmid));
    assert_eq!(name("fwln102o0"), Some(("fwln", 102)));
    for other in [
        "tap",
        "tapi0",
        "tap100",
        "tap100i",
        "tap100x0",
        "vethab12",
        "fwpr102i0",
        "eno1",
        "veth101i0x",
    ] {
        assert_eq!(name(other), None, "{other}");
    }
}

#[test]
fn every_guest_port_on_a_bridge_over_the_bond_is_a_finding_naming_bridge_port_vm_and_fix() {
    let node = guest_node();
    let report = report_with(
        &node,
        Ruleset::NotRead("/usr/sbin/nft is not installed".into()),
        GuestPortsPolicy::Fail,
    );
    assert_eq!(
        ports(&report),
        [("tap100i0", 100), ("veth101i1", 101), ("fwpr102p0", 102)]
    );
    assert_eq!(
        report.failed_names(),
        [
            "guest_port:tap100i0",
            "guest_port:veth101i1",
            "guest_port:fwpr102p0"
        ]
    );
    let tap = check(&report, "guest_port:tap100i0");
    assert_eq!(
        tap.expected,
        "VM 100 (tap port on vmbr0) cannot send 802.1Q/802.1ad frames onto the uplink"
    );
    assert_eq!(
        tap.actual,
        "vmbr0 does not filter VLANs; nftables not read: /usr/sbin/nft is not installed"
    );
    // The host's VLANs on that bridge: the uplink VLAN and vmbr0.50.
    assert!(
        tap.fix.contains("table bridge deevnet_guest_vlan")
            && tap.fix.ends_with("or make vmbr0 VLAN-aware (bridge-vlan-aware yes) with bridge-vids that exclude VLAN 40, 50"),
        "{}",
        tap.fix
    );
    assert!(!tap.fix.contains("ifreload"));

    // The bond in no bridge: nothing to audit.
    let report = report_with(&Node::healthy(), Ruleset::default(), GuestPortsPolicy::Fail);
    assert!(report.guest_ports.is_empty() && report.failed_names().is_empty());
}

#[test]
fn a_single_nic_parent_in_a_bridge_is_audited_too() {
    let mut node = Node::single_nic();
    with_guests(&mut node, ENO1);
    let request = Request::from_params(Params {
        bond: "eno1".into(),
        ..raw()
    })
    .unwrap();
    let stack = node.resolve(&request).unwrap();
    let report = evaluate(&request, &stack, &node.observed);
    assert_eq!(report.guest_ports.len(), 3);
    assert!(report.guest_ports.iter().all(|f| f.bridge == "vmbr0"));
}

#[test]
fn an_nftables_rule_dropping_both_tag_types_from_the_port_keeps_it_off() {
    let node = guest_node();
    for hook in ["prerouting", "forward"] {
        let report = report_with(&node, ruleset(hook, guide_rules()), GuestPortsPolicy::Fail);
        assert_eq!(ports(&report), [], "{hook}");
    }
    // Two rules by number, one per type, for the tap alone; no interface match covers all.
    let report = report_with(
        &node,
        ruleset(
            "prerouting",
            vec![
                json!([iifname("==", json!("tap100i0")), ether_type(json!(33024)), {"counter": null}, {"drop": null}]),
                json!([iifname("==", json!("tap100i0")), ether_type(json!(34984)), {"drop": null}]),
                json!([iifname("!=", json!("tap*")), ether_type(json!({"set": ["8021q", "8021ad"]})), {"drop": null}]),
            ],
        ),
        GuestPortsPolicy::Fail,
    );
    assert_eq!(ports(&report), [], "{:?}", report.guest_ports);
}

#[test]
fn rules_that_do_not_drop_both_types_from_the_port_leave_it_counted() {
    let node = guest_node();
    let cases = [
        // 802.1Q only.
        (
            ruleset(
                "prerouting",
                vec![
                    json!([iifname("==", json!("tap*")), ether_type(json!("8021q")), {"drop": null}]),
                ],
            ),
            "the bridge-family nftables rules drop only 802.1Q frames from it",
        ),
        // Another port's name; a literal star is not a wildcard.
        (
            ruleset(
                "prerouting",
                vec![
                    json!([iifname("==", json!({"set": ["tap9*", "tap100i0\\*"]})), ether_type(json!({"set": ["8021q", "8021ad"]})), {"drop": null}]),
                ],
            ),
            "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it",
        ),
        // An accept before the drop lets the frame through first.
        (
            ruleset(
                "prerouting",
                [
                    vec![json!([iifname("==", json!("tap*")), {"accept": null}])],
                    guide_rules(),
                ]
                .concat(),
            ),
            "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it",
        ),
        // A drop narrowed by a match this does not read drops some frames only.
        (
            ruleset(
                "prerouting",
                vec![
                    json!([iifname("==", json!("tap*")), ether_type(json!({"set": ["8021q", "8021ad"]})), {"match": {"op": "==", "left": {"payload": {"protocol": "ether", "field": "saddr"}}, "right": "02:00:00:00:00:01"}}, {"drop": null}]),
                ],
            ),
            "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it",
        ),
        // The input hook sees only frames for the host, not those forwarded to the bond.
        (
            ruleset("input", guide_rules()),
            "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it",
        ),
    ];
    for (ruleset, why) in cases {
        let report = report_with(&node, ruleset, GuestPortsPolicy::Fail);
        let tap = report.guest_ports.iter().find(|f| f.port == "tap100i0");
        assert_eq!(
            tap.map(|f| f.nftables.as_str()),
            Some(why),
            "{:?}",
            report.guest_ports
        );
    }
}

#[test]
fn vlan_filtering_that_keeps_the_port_off_the_host_vlans_keeps_it_off() {
    let mut node = guest_node();
    node.link_mut("vmbr0").bridge = Some(BridgeVlanSettings {
        vlan_filtering: Some(true),
        vlan_protocol: Some(VlanProtocol::Dot1Q),
        default_pvid: Some(1),
    });
    let port = |index, name: &str, vlans| PortVlans {
        index,
        name: name.into(),
        controller: Some(VMBR0),
        vlans,
    };
    node.observed.port_vlans.extend([
        // A VM on VLAN 10 only: kept off.
        port(TAP, "tap100i0", vec![entry(10, 10, true, true)]),
        // Proxmox's default trunk for an untagged NIC on a VLAN-aware bridge: reaches 40 and 50.
        port(
            VETH,
            "veth101i1",
            vec![entry(1, 1, true, true), entry(2, 4094, false, false)],
        ),
        // VLAN 50 only, the host's transit: counted.
        port(FWPR, "fwpr102p0", vec![entry(50, 50, true, true)]),
    ]);
    let report = report_with(&node, Ruleset::default(), GuestPortsPolicy::Fail);
    let found: Vec<(&str, &str)> = report
        .guest_ports
        .iter()
        .map(|f| (f.port.as_str(), f.vlans.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("veth101i1", "it carries host VLAN 40, 50"),
            ("fwpr102p0", "it carries host VLAN 50")
        ]
    );
    // Filtering of the other tag protocol does not see the uplink's tags at all.
    node.link_mut("vmbr0")
        .bridge
        .as_mut()
        .unwrap()
        .vlan_protocol = Some(VlanProtocol::Dot1Ad);
    let report = report_with(&node, Ruleset::default(), GuestPortsPolicy::Fail);
    assert_eq!(report.guest_ports.len(), 3);
    assert_eq!(
        report.guest_ports[0].vlans,
        "vmbr0 filters 802.1ad tags, the uplink's are 802.1Q"
    );
}

#[test]
fn warn_reports_without_failing_and_ignore_does_not_look() {
    let node = guest_node();
    let report = report_with(&node, Ruleset::default(), GuestPortsPolicy::Warn);
    assert_eq!(report.guest_ports.len(), 3);
    assert!(report.failed_names().is_empty());
    assert!(report.guest_ports[0]
        .line()
        .starts_with("guest port tap100i0 (VM 100) on vmbr0 can send 802.1Q/802.1ad frames onto the uplink (vmbr0 does not filter VLANs; nftables not read: not asked for); drop guests'"));
    let report = report_with(&node, Ruleset::default(), GuestPortsPolicy::Ignore);
    assert!(report.guest_ports.is_empty() && report.failed_names().is_empty());
}

#[test]
fn the_guard_is_recognised_by_what_it_drops_and_predicted_in_check_mode() {
    use crate::guest_ports::GUARD_TABLE;
    let guard = |extra: Vec<Value>| {
        let mut items = vec![
            json!({"table": {"family": "bridge", "name": GUARD_TABLE}}),
            json!({"chain": {"family": "bridge", "table": GUARD_TABLE, "name": "prerouting", "type": "filter", "hook": "prerouting", "prio": -300, "policy": "accept"}}),
        ];
        items.extend(chain_rules(GUARD_TABLE, "prerouting", guide_rules()));
        items.extend(extra);
        read(json!({ "nftables": items }))
    };
    assert!(guard(vec![]).guard_installed());
    // A further rule in the table, the table without one of its rules, or without any, is not
    // the guard.
    assert!(!guard(vec![json!({"rule": {"family": "bridge", "table": GUARD_TABLE, "chain": "prerouting", "expr": [{"accept": null}]}})]).guard_installed());
    for gone in 0..guide_rules().len() {
        let mut rules = guide_rules();
        rules.remove(gone);
        let mut items = vec![
            json!({"table": {"family": "bridge", "name": GUARD_TABLE}}),
            json!({"chain": {"family": "bridge", "table": GUARD_TABLE, "name": "prerouting", "type": "filter", "hook": "prerouting", "prio": -300, "policy": "accept"}}),
        ];
        items.extend(chain_rules(GUARD_TABLE, "prerouting", rules));
        assert!(
            !read(json!({ "nftables": items })).guard_installed(),
            "without rule {gone}"
        );
    }
    assert!(!read(json!({"nftables": [
        {"table": {"family": "bridge", "name": GUARD_TABLE}}
    ]}))
    .guard_installed());
    // The same rule in another table is someone else's: it protects, but it is not the guard.
    assert!(!ruleset("prerouting", guide_rules()).guard_installed());
    assert!(!Ruleset::default().guard_installed());

    // Check mode: the guard replaces a table of its name and leaves the others.
    let predicted = ruleset("input", vec![json!([{"accept": null}])]).with_guard();
    assert!(predicted.guard_installed());
    let Ruleset::Read(value) = &predicted else {
        unreachable!()
    };
    let other = deevnet_runtime::nft::Owner {
        family: "bridge".into(),
        table: "t".into(),
    };
    assert!(value.has_table(&other), "{value:?}");
    assert_eq!(value.rules.len(), 1 + guide_rules().len(), "{value:?}");
    assert!(guard(vec![json!({"rule": {"family": "bridge", "table": GUARD_TABLE, "chain": "prerouting", "expr": [{"accept": null}]}})]).with_guard().guard_installed());
    // And the audit then sees the guest ports kept off.
    let node = guest_node();
    let report = report_with(
        &node,
        Ruleset::default().with_guard(),
        GuestPortsPolicy::Fail,
    );
    assert!(report.guest_ports.is_empty(), "{:?}", report.guest_ports);
    assert!(report.guest_vlan_guard.present);
}

/// nft 1.0.6's two listings of `state` (tests/data/nft-1.0.6), as `read_ruleset` reads them.
fn recorded_nft(state: &str) -> Ruleset {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nft-1.0.6");
    let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{state}.{ext}"))).unwrap();
    Ruleset::Read(
        deevnet_runtime::nft::Ruleset::parse_listings(&read("json"), &read("txt")).unwrap(),
    )
}

/// QC1: a guard table set dormant (`flags dormant`) drops nothing, so it is not installed, no
/// guest port counts as kept off by it, and both say why and the fix. Recorded from nft 1.0.6.
#[test]
fn a_dormant_guard_is_not_installed_and_keeps_no_guest_port_off() {
    use crate::guest_ports::GUARD_TABLE;
    let node = guest_node();
    let active = recorded_nft("guard");
    assert_eq!(active.guard_state(), Ok(()));
    let report = report_with(&node, active, GuestPortsPolicy::Fail);
    assert!(report.guest_ports.is_empty(), "{:?}", report.guest_ports);
    assert_eq!(report.guest_vlan_guard.not_in_force, None);

    let dormant = recorded_nft("guard-dormant");
    assert!(!dormant.guard_installed());
    let why = dormant.guard_state().unwrap_err();
    assert!(
        why.starts_with(&format!(
            "table bridge {GUARD_TABLE} is dormant (flags dormant), so its chains see no packet; set guest_vlan_guard=true, which remakes the table, or run: nft 'add table bridge {GUARD_TABLE}; delete table bridge {GUARD_TABLE}; "
        )),
        "{why}"
    );
    let report = report_with(&node, dormant, GuestPortsPolicy::Fail);
    assert!(!report.guest_vlan_guard.present);
    assert_eq!(report.guest_vlan_guard.not_in_force, Some(why));
    assert_eq!(
        ports(&report),
        [("tap100i0", 100), ("veth101i1", 101), ("fwpr102p0", 102)]
    );
    for finding in &report.guest_ports {
        assert_eq!(
            finding.nftables,
            format!("no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it (table bridge {GUARD_TABLE} is dormant (flags dormant), so its chains see no packet; load it without `flags dormant`, or for the guard set guest_vlan_guard=true)")
        );
    }
}

/// QC1: nft 1.0.6's JSON alone misprints a table's one flag (a freed string): the guard's
/// `"flags": "deevnet_guest_vlan"` is read as flags that may be dormant, never as in force; so
/// is a dormant table the JSON shows as `"flags": "owner"`, which the text listing says is
/// dormant (the runtime's policy, `deevnet_runtime::nft::flags`).
#[test]
fn nft_1_0_6s_misprinted_table_flag_is_not_trusted() {
    let json_only = |state: &str| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nft-1.0.6");
        let text = std::fs::read_to_string(dir.join(format!("{state}.json"))).unwrap();
        read(serde_json::from_str(&text).unwrap())
    };
    let why = json_only("guard-dormant").guard_state().unwrap_err();
    assert!(
        why.contains("has flags \"deevnet_guest_vlan\" as nft -j prints them (nft 1.0.6 misprints a single flag; read with nft -t list ruleset), so it may be dormant"),
        "{why}"
    );
    let why = json_only("dormant-rule-flag-misprinted")
        .drops_vlan_frames_from("tap100i0", "vmbr0")
        .unwrap_err();
    assert!(
        why.contains("table bridge owner has flags \"owner\""),
        "{why}"
    );
    let why = recorded_nft("dormant-rule-flag-misprinted")
        .drops_vlan_frames_from("tap100i0", "vmbr0")
        .unwrap_err();
    assert!(
        why.contains("table bridge owner is dormant (flags dormant)"),
        "{why}"
    );
}

/// A table's flags as nft's text listing prints them: none, or owner and persist, leave its
/// drop in force; dormant, a flag nft does not know, or a table the text does not show do not.
#[test]
fn only_a_table_in_force_keeps_a_port_off() {
    let mut items = vec![
        json!({"table": {"family": "bridge", "name": "t"}}),
        json!({"chain": {"family": "bridge", "table": "t", "name": "c", "type": "filter", "hook": "prerouting", "prio": -300, "policy": "accept"}}),
    ];
    items.extend(chain_rules("t", "c", guide_rules()));
    let json = json!({ "nftables": items }).to_string();
    let with_text = |text: &str| {
        Ruleset::Read(deevnet_runtime::nft::Ruleset::parse_listings(&json, text).unwrap())
            .drops_vlan_frames_from("tap100i0", "vmbr0")
    };
    for in_force in ["", "\tflags owner\n", "\tflags owner,persist\n"] {
        assert_eq!(
            with_text(&format!("table bridge t {{\n{in_force}}}\n")),
            Ok(()),
            "{in_force}"
        );
    }
    for (text, why) in [
        ("table bridge t {\n\tflags dormant,owner\n}\n", "is dormant"),
        ("table bridge t {\n\tflags later\n}\n", "has flag later"),
        ("table bridge other {\n}\n", "does not show the table"),
    ] {
        let err = with_text(text).unwrap_err();
        assert!(err.contains(why), "{text}: {err}");
    }
}

/// The `iifname` sets of `state`'s recorded JSON (tests/data/nft-1.0.6), each sorted.
fn recorded_iifname_sets(state: &str) -> Vec<Vec<String>> {
    let Ruleset::Read(read) = recorded_nft(state) else {
        unreachable!("recorded_nft reads")
    };
    let mut sets = Vec::new();
    for rule in &read.rules {
        for expr in &rule.expr {
            if expr.pointer("/match/left/meta/key") == Some(&json!("iifname")) {
                if let Some(set) = expr.pointer("/match/right/set").and_then(Value::as_array) {
                    let mut names: Vec<String> = set
                        .iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect();
                    names.sort();
                    sets.push(names);
                }
            }
        }
    }
    sets
}

/// QG1: nft 1.0.6 lists a set of literal names (`iifname { "tap\*", ... }`, which matches no
/// guest) exactly as the set of wildcards (`"tap*"`), so neither keeps a guest port off, and a
/// guard's table of that shape is not the guard. Recorded from nft 1.0.6 (record.sh).
#[test]
fn qg1_a_set_of_names_ending_in_a_star_keeps_no_guest_port_off() {
    let literals = recorded_iifname_sets("set-guard-literals");
    assert_eq!(
        literals,
        [vec!["fwln*", "fwpr*", "tap*", "veth*"]],
        "nft no longer prints the literal star as a wildcard: the fixture needs a new look"
    );
    assert_eq!(recorded_iifname_sets("set-guard-wildcards"), literals);
    let node = guest_node();
    for state in ["set-guard-literals", "set-guard-wildcards"] {
        let ruleset = recorded_nft(state);
        let why = ruleset.guard_state().unwrap_err();
        assert!(
            why.contains("is not the guard's rule alone"),
            "{state}: {why}"
        );
        assert_eq!(
            ruleset.drops_vlan_frames_from("tap100i0", "vmbr0"),
            Err("no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it".into()),
            "{state}"
        );
        let report = report_with(&node, ruleset, GuestPortsPolicy::Fail);
        assert!(!report.guest_vlan_guard.present, "{state}");
        assert_eq!(
            ports(&report),
            [("tap100i0", 100), ("veth101i1", 101), ("fwpr102p0", 102)],
            "{state}"
        );
    }
}

/// QG1, must not pass: the guard as the fix writes it, recorded from nft 1.0.6, is the guard,
/// keeps every guest kind off, and is what check mode predicts rule for rule.
#[test]
fn qg1_the_recommended_guard_as_nft_lists_it_is_installed_and_keeps_every_guest_off() {
    let recorded = recorded_nft("guard");
    assert_eq!(recorded.guard_state(), Ok(()));
    assert!(
        recorded_iifname_sets("guard").is_empty(),
        "the guard holds no name set"
    );
    for port in [
        "tap100i0",
        "veth101i1",
        "fwpr102p0",
        "fwln103i0",
        "fwln103o0",
    ] {
        assert_eq!(
            recorded.drops_vlan_frames_from(port, "vmbr0"),
            Ok(()),
            "{port}"
        );
    }
    assert!(recorded.drops_vlan_frames_from("eno1", "vmbr0").is_err());
    let report = report_with(&guest_node(), recorded.clone(), GuestPortsPolicy::Fail);
    assert!(report.guest_ports.is_empty(), "{:?}", report.guest_ports);
    assert!(report.guest_vlan_guard.present);
    let exprs = |ruleset: &Ruleset| match ruleset {
        Ruleset::Read(read) => read
            .rules
            .iter()
            .map(|r| r.expr.clone())
            .collect::<Vec<_>>(),
        Ruleset::NotRead(why) => panic!("{why}"),
    };
    assert_eq!(exprs(&Ruleset::default().with_guard()), exprs(&recorded));
    assert_eq!(
        exprs(&recorded),
        guide_rules()
            .into_iter()
            .map(|r| r.as_array().unwrap().clone())
            .collect::<Vec<_>>()
    );
}

/// QG1: a name match the audit cannot settle never guards a port, and a verdict other than
/// drop behind one may pass its frames; names that settle it still count.
#[test]
fn qg1_a_name_match_that_cannot_be_settled_never_keeps_a_port_off() {
    let both = || ether_type(json!({"set": ["8021q", "8021ad"]}));
    let tap = |rules: Vec<Value>| {
        ruleset("prerouting", rules).drops_vlan_frames_from("tap100i0", "vmbr0")
    };
    let none =
        Err("no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it".to_string());
    // `"tap*"` in a set may be the name `tap*`; `tap1*` likewise; `@allowed` is not read.
    for right in [json!({"set": ["tap*"]}), json!({"set": ["eth0", "tap1*"]})] {
        assert_eq!(
            tap(vec![
                json!([iifname("==", right.clone()), both(), {"drop": null}])
            ]),
            none,
            "{right}"
        );
    }
    assert_eq!(
        tap(vec![
            json!([iifname("!=", json!("@allowed")), both(), {"drop": null}])
        ]),
        none
    );
    assert_eq!(
        tap(vec![
            json!([iifname("==", json!("@guests")), both(), {"drop": null}])
        ]),
        none
    );
    // An accept for every name but a set element that may be literal may accept the port.
    let accept_others = json!([iifname("!=", json!({"set": ["tap*"]})), {"accept": null}]);
    assert_eq!(tap([vec![accept_others], guide_rules()].concat()), none);
    // Must not pass: names that settle the match count, in a set or alone.
    assert_eq!(
        tap(vec![
            json!([iifname("==", json!({"set": ["eth0", "tap100i0"]})), both(), {"drop": null}])
        ]),
        Ok(())
    );
    assert_eq!(
        tap(vec![
            json!([iifname("==", json!({"set": ["eth*"]})), {"accept": null}]),
            json!([iifname("==", json!("tap*")), both(), {"drop": null}])
        ]),
        Ok(())
    );
    assert_eq!(tap(guide_rules()), Ok(()));
}
