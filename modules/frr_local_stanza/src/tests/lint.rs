use crate::lint::*;
use crate::rules;

fn rules_at(source: &str) -> Vec<(usize, &'static str)> {
    lint(source, &LintOptions::default())
        .into_iter()
        .map(|f| (f.line, f.rule))
        .collect()
}

#[test]
fn the_portable_profile_is_clean() {
    let source = "vrf vrf_tdemo\n ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default\nexit\n!\nrouter bgp 45689\n neighbor X peer-group\n address-family ipv4 unicast\n  neighbor X activate\n exit-address-family\nexit\n";
    assert_eq!(rules_at(source), []);
}

#[test]
fn each_rule_fires_on_its_construct() {
    let cases: &[(&str, &[(usize, &str)])] = &[
            ("vrf a\n ip route 1.0.0.0/8 2.2.2.2 ! x\n ip route 3.0.0.0/8 2.2.2.2\nexit\n", &[(2, "bang-in-command")]),
            ("! see address-family ipv4 unicast\n", &[(1, "comment-address-family")]),
            ("vrf a\n ip route 1.0.0.0/8 2.2.2.2\nend\n", &[(1, "unterminated-block"), (3, "end-statement")]),
            ("ip nht resolve-via-default\n", &[(1, "top-level-line")]),
            ("ip route 0.0.0.0/0 1.1.1.1 vrf a\n", &[(1, "top-level-route")]),
            ("access-list A permit any\n", &[(1, "list-without-seq")]),
            ("key chain K\n key 1\n  key-string s\n exit\nexit\n", &[(1, "unrecognised-stanza")]),
            ("vrf a\n ip route 1.0.0.0/8 2.2.2.2\n exit\n", &[(1, "unterminated-block"), (3, "indented-terminator")]),
            ("vrf a\n ip route 1.0.0.0/8 2.2.2.2\nexit-vrf\n", &[(3, "exit-vrf")]),
            (" address-family ipv4 unicast\n", &[(1, "address-family-outside-router")]),
            ("router bgp 1\n address-family ipv4 unicast\n  neighbor X activate\n exit-address-family\n neighbor X peer-group\nexit\n", &[(5, "router-line-after-address-family")]),
            ("router bgp 1\n address-family ipv4 unicast\n  neighbor X activate\nexit\n", &[(2, "address-family-unterminated")]),
            ("vrf a\nexit\n", &[(1, "empty-stanza")]),
            ("router bgp 1\n neighbor X peer-group\nexit\nrouter bgp 2\n neighbor Y peer-group\nexit\n", &[(4, "bgp-asn-conflict")]),
            ("router bgp  1\n neighbor X peer-group\nexit\n", &[(1, "header-spacing")]),
            ("route-map MAP_VTEP_IN deny 100\nexit\n", &[(1, "route-map-generated-name")]),
            ("route-map R permit 20\nexit\nroute-map R permit 10\nexit\n", &[(1, "route-map-order"), (3, "route-map-order")]),
            ("route-map R permit 10\nexit\n", &[(1, "route-map-renumbered")]),
            ("vrf a\n ip route 1.0.0.0/8 2.2.2.2\nexit\n vrf b\n", &[(4, "indented-header")]),
        ];
    let mut fired = std::collections::BTreeSet::new();
    for (source, expected) in cases {
        let found = rules_at(source);
        assert_eq!(&found, expected, "{source}");
        fired.extend(found.iter().map(|(_, rule)| *rule));
    }
    let with_asn = lint(
        "router bgp 65000 vrf v\n neighbor X peer-group\nexit\n",
        &LintOptions {
            asn: Some("45689".into()),
        },
    );
    assert_eq!(with_asn[0].rule, "bgp-asn-mismatch");
    assert!(with_asn[0].msg.contains("write `router bgp 45689 vrf v`"));
    fired.insert(with_asn[0].rule);
    let never: Vec<&str> = rules::ALL
        .iter()
        .map(|r| r.name)
        .filter(|name| !fired.contains(name))
        .collect();
    assert!(never.is_empty(), "rules no case exercises: {never:?}");
}

#[test]
fn lines_after_a_closed_vrf_differ_by_generation() {
    let findings = lint(
        "vrf a\n ip route 1.0.0.0/8 2.2.2.2\nexit\nip nht resolve-via-default\n",
        &LintOptions::default(),
    );
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].line, 4);
    assert_eq!(findings[0].generations, BOTH);
    assert!(findings[0].msg.contains("drops it"), "{}", findings[0].msg);
    assert!(
        findings[0].msg.contains("1.2.x does not close a vrf block"),
        "{}",
        findings[0].msg
    );
}

#[test]
fn the_body_of_an_unrecognised_stanza_is_reported_once() {
    let findings = lint(
        "bfd\n peer 10.0.0.1\n exit\n!\nip nht resolve-via-default\n",
        &LintOptions::default(),
    );
    let lines: Vec<usize> = findings.iter().map(|f| f.line).collect();
    assert_eq!(lines, [1, 5]);
}
