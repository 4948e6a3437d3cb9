use crate::nft::*;
use crate::test_support::TestNamespace;
use serde_json::json;
use std::path::Path;

/// Every kind of object nft lists, as nft 1.0.6 prints it.
const LISTED: &str = r#"{"nftables": [
 {"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},
 {"table": {"family": "netdev", "name": "edge", "handle": 1}},
 {"chain": {"family": "netdev", "table": "edge", "name": "in", "handle": 1, "type": "filter", "hook": "ingress", "dev": "eth0", "prio": -500, "policy": "drop"}},
 {"chain": {"family": "netdev", "table": "edge", "name": "in2", "handle": 2, "type": "filter", "hook": "ingress", "dev": ["eth1", "eth2"], "prio": 0}},
 {"table": {"family": "inet", "name": "f", "handle": 2}},
 {"set": {"family": "inet", "table": "f", "name": "private", "type": "ipv4_addr", "handle": 3, "flags": ["interval"], "elem": [{"prefix": {"addr": "10.0.0.0", "len": 8}}, {"range": ["192.0.2.10", "192.0.2.20"]}, "198.51.100.7"]}},
 {"set": {"family": "inet", "table": "f", "name": "mixed", "type": "ipv6_addr", "handle": 4, "elem": ["2001:db8::1"]}},
 {"map": {"family": "inet", "table": "f", "name": "m", "type": "ipv4_addr", "map": "verdict", "handle": 5, "elem": [["10.0.0.1", {"accept": null}]]}},
 {"flowtable": {"family": "inet", "table": "f", "name": "ft", "handle": 6, "hook": "ingress", "prio": 0, "dev": ["eth0", "eth1"]}},
 {"chain": {"family": "inet", "table": "f", "name": "forward", "handle": 7, "type": "filter", "hook": "forward", "prio": 0, "policy": "drop"}},
 {"chain": {"family": "inet", "table": "f", "name": "user", "handle": 8}},
 {"rule": {"family": "inet", "table": "f", "chain": "forward", "handle": 9, "expr": [{"jump": {"target": "user"}}]}},
 {"rule": {"family": "inet", "table": "f", "chain": "user", "handle": 10, "expr": [{"counter": {"packets": 0, "bytes": 0}}, {"accept": null}]}},
 {"counter": {"family": "inet", "table": "f", "name": "named", "handle": 11}}
]}"#;

#[test]
fn every_listed_object_is_typed_and_kept_as_printed() {
    let ruleset = Ruleset::parse(LISTED).unwrap();
    assert_eq!(ruleset.version, "1.0.6");
    let f = Owner {
        family: "inet".into(),
        table: "f".into(),
    };
    let edge = Owner {
        family: "netdev".into(),
        table: "edge".into(),
    };
    assert!(ruleset.has_table(&f) && ruleset.has_table(&edge));
    assert_eq!(ruleset.table(&f).unwrap().flags, TableFlags::Read(vec![]));
    let ingress: Vec<(&str, &BaseChain)> = ruleset
        .base_chains("ingress")
        .map(|(c, b)| (c.name.as_str(), b))
        .collect();
    assert_eq!(
        ingress,
        [
            (
                "in",
                &BaseChain {
                    kind: "filter".into(),
                    hook: "ingress".into(),
                    prio: -500,
                    policy: "drop".into(),
                    devices: vec!["eth0".into()],
                }
            ),
            (
                "in2",
                &BaseChain {
                    kind: "filter".into(),
                    hook: "ingress".into(),
                    prio: 0,
                    policy: "accept".into(),
                    devices: vec!["eth1".into(), "eth2".into()],
                }
            ),
        ]
    );
    let user = ruleset.chain(&f, "user").unwrap();
    assert_eq!(user.base, None);
    assert_eq!(user.path(), "inet f user");
    let rules: Vec<i64> = ruleset.rules_of(user).map(|r| r.handle).collect();
    assert_eq!(rules, [10]);
    assert_eq!(ruleset.rules_of(user).next().unwrap().expr.len(), 2);
    assert_eq!(
        ruleset.set_ranges(&f, "private").unwrap(),
        [
            Range::parse("10.0.0.0/8").unwrap(),
            Range::parse("192.0.2.10-192.0.2.20").unwrap(),
            Range::parse("198.51.100.7").unwrap(),
        ]
    );
    // IPv6 elements, a map and a missing set are no IPv4 ranges.
    assert_eq!(ruleset.set_ranges(&f, "mixed"), None);
    assert_eq!(ruleset.set_ranges(&f, "m"), None);
    assert!(ruleset.set(&f, "m").unwrap().map);
    assert_eq!(ruleset.set_ranges(&f, "absent"), None);
    assert_eq!(
        ruleset.flowtables,
        [Flowtable {
            owner: f.clone(),
            name: "ft".into(),
            hook: "ingress".into(),
            prio: 0,
            devices: vec!["eth0".into(), "eth1".into()],
        }]
    );
    // Every object but metainfo, the named counter too.
    assert_eq!(ruleset.objects.len(), 13);
    assert!(ruleset.objects.last().unwrap().get("counter").is_some());
}

#[test]
fn base_chains_come_in_the_kernels_order_per_family() {
    let ruleset = Ruleset::parse(
        r#"{"nftables": [
 {"chain": {"family": "inet", "table": "f", "name": "late", "type": "nat", "hook": "postrouting", "prio": 100}},
 {"chain": {"family": "ip", "table": "n", "name": "early", "type": "nat", "hook": "postrouting", "prio": -100}},
 {"chain": {"family": "ip6", "table": "s", "name": "six", "type": "nat", "hook": "postrouting", "prio": -200}},
 {"chain": {"family": "ip", "table": "n", "name": "same", "type": "filter", "hook": "postrouting", "prio": 100}},
 {"chain": {"family": "ip", "table": "n", "name": "input", "type": "filter", "hook": "input", "prio": -500}}
]}"#,
    )
    .unwrap();
    let names: Vec<String> = ruleset
        .base_chains_by_prio(&["ip", "inet"], "postrouting")
        .iter()
        .map(|(chain, _)| chain.path())
        .collect();
    assert_eq!(names, ["ip n early", "inet f late", "ip n same"]);
    assert_eq!(Owner::new("ip", "n").to_string(), "ip n");
}

#[test]
fn what_is_not_nfts_json_is_an_error_saying_so() {
    assert!(Ruleset::parse("not json")
        .unwrap_err()
        .starts_with("no JSON ruleset: "));
    assert_eq!(
        Ruleset::parse(r#"{"tables": []}"#).unwrap_err(),
        "JSON without the `nftables` list"
    );
    // Objects of no known shape are skipped, not refused.
    let odd = Ruleset::parse(r#"{"nftables": [1, [], {}, {"rule": 7}]}"#).unwrap();
    assert_eq!(odd.rules.len(), 1);
    assert_eq!(odd.rules[0].expr, Vec::<serde_json::Value>::new());
}

#[test]
fn a_base_chains_devices_come_from_the_text_when_the_json_omits_them() {
    let json = r#"{"nftables": [
 {"table": {"family": "netdev", "name": "e"}},
 {"chain": {"family": "netdev", "table": "e", "name": "in", "type": "filter", "hook": "ingress", "prio": 0}},
 {"chain": {"family": "netdev", "table": "e", "name": "printed", "type": "filter", "hook": "ingress", "dev": "eth9", "prio": 0}},
 {"chain": {"family": "netdev", "table": "e", "name": "plain"}}
]}"#;
    let text = "table netdev e {\n\tchain in {\n\t\ttype filter hook ingress devices = { v0, \"v-1\" } priority filter; policy accept;\n\t}\n\tchain printed {\n\t\ttype filter hook ingress device \"v2\" priority filter; policy accept;\n\t}\n\tchain plain {\n\t}\n}\n";
    let ruleset = Ruleset::parse_listings(json, text).unwrap();
    let devices: Vec<Vec<String>> = ruleset
        .chains
        .iter()
        .map(|c| {
            c.base
                .as_ref()
                .map(|b| b.devices.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        devices,
        [
            vec!["v0".to_string(), "v-1".to_string()],
            vec!["eth9".to_string()],
            vec![]
        ]
    );
    assert_eq!(
        text::chain_devices(
            "table netdev e {\n\tchain c {\n\t\ttype filter hook ingress device v3 priority 0;\n"
        ),
        [(
            Owner::new("netdev", "e"),
            "c".to_string(),
            vec!["v3".to_string()]
        )]
    );
}

#[test]
fn a_ruleset_filtered_by_table_and_merged_keeps_each_tables_pieces() {
    let ruleset = Ruleset::parse(LISTED).unwrap();
    let only_f = ruleset.filtered(|owner| owner.table == "f");
    assert_eq!(only_f.tables.len(), 1);
    assert_eq!(only_f.chains.len(), 2);
    assert_eq!(only_f.sets.len(), 3);
    assert_eq!(only_f.flowtables.len(), 1);
    assert_eq!(only_f.rules.len(), 2);
    assert_eq!(only_f.objects.len(), 10);
    let without_f = ruleset.filtered(|owner| owner.table != "f");
    assert_eq!(without_f.objects.len(), 3);
    let whole = without_f.merged(only_f);
    assert_eq!(whole.objects.len(), ruleset.objects.len());
    assert_eq!(whole.rules, ruleset.rules);
}

/// nft 1.0.6 misprints a table's single flag in JSON: the JSON alone never says which flags a
/// table has, only that it has some; the text listing says which.
#[test]
fn table_flags_come_from_the_text_listing_and_a_json_flag_alone_is_unreadable() {
    // Recorded from nft 1.0.6: a dormant table named `owner`, then a table `persist`.
    let json = r#"{"nftables": [{"table": {"family": "bridge", "name": "owner", "handle": 1, "flags": "owner"}}, {"table": {"family": "bridge", "name": "persist", "handle": 2}}]}"#;
    let text = "table bridge owner {\n\tflags dormant\n\n\tchain prerouting {\n\t\ttype filter hook prerouting priority dstnat; policy accept;\n\t}\n}\ntable bridge persist {\n}\n";
    let flags = |ruleset: &Ruleset| -> Vec<Option<String>> {
        ruleset
            .tables
            .iter()
            .map(|t| t.flags.not_in_force())
            .collect()
    };
    let alone = Ruleset::parse(json).unwrap();
    let why = flags(&alone)[0].clone().unwrap();
    assert!(
        why.starts_with("has flags \"owner\" as nft -j prints them (nft 1.0.6 misprints a single flag; read with nft -t list ruleset), so it may be dormant"),
        "{why}"
    );
    assert_eq!(flags(&alone)[1], None);
    let read = Ruleset::parse_listings(json, text).unwrap();
    assert_eq!(
        read.tables[0].flags,
        TableFlags::Read(vec!["dormant".into()])
    );
    assert_eq!(
        flags(&read),
        [
            Some("is dormant (flags dormant), so its chains see no packet".into()),
            None
        ]
    );
    // A table the text does not show, a flag nft does not know, several flags.
    let unlisted = Ruleset::parse_listings(json, "table bridge persist {\n}\n").unwrap();
    assert!(flags(&unlisted)[0]
        .clone()
        .unwrap()
        .contains("nft's text listing does not show the table"));
    let text = "table bridge owner {\n\tflags owner,persist\n\tchain c {\n\t\tflags offload\n\t}\n}\ntable bridge persist {\n\tflags future\n}\n";
    let read = Ruleset::parse_listings(json, text).unwrap();
    assert_eq!(
        read.tables[0].flags,
        TableFlags::Read(vec!["owner".into(), "persist".into()])
    );
    assert_eq!(
        flags(&read),
        [
            None,
            Some("has flag future, which this reader does not know, so it may be dormant".into())
        ]
    );
    assert!(!read.tables[0].flags.is_empty());
    // Flags after a header the reader cannot read belong to no table, not to the one before.
    assert_eq!(
        flags::in_text("table bridge a {\n}\ntable broken\n\tflags dormant\n"),
        [(Owner::new("bridge", "a"), vec![])]
    );
    assert!(TableFlags::from_json(None).is_empty());
    assert!(TableFlags::from_json(Some(&json!(["dormant", "owner"])))
        .not_in_force()
        .is_some());
}

/// The real nft 1.0.6 misprints a dormant table's one flag in JSON and omits a netdev chain's
/// devices; [`read_ruleset`] reads both from the text listing, in a namespace of the test's own.
#[test]
fn read_ruleset_sees_a_dormant_table_through_nfts_misprint() {
    let namespace = TestNamespace::new("nftread");
    let loaded = namespace
        .command(NFT)
        .args([
            "add table bridge sleeper { flags dormant; }; add table bridge awake; add chain bridge awake c { type filter hook prerouting priority 0; }",
        ])
        .status()
        .unwrap();
    assert!(loaded.success());
    namespace.ip("link add v0 type veth peer name v1");
    let hooked = namespace
        .command(NFT)
        .args([
            "add table netdev edge; add chain netdev edge one { type filter hook ingress device v0 priority 0; }; add chain netdev edge two { type filter hook ingress devices = { v0, v1 } priority 0; }",
        ])
        .status()
        .unwrap();
    assert!(hooked.success());
    let ruleset = namespace.enter(|| read_ruleset(Path::new(NFT))).unwrap();
    // nft 1.0.6's JSON omits a netdev chain's devices: the text listing gives them.
    let devices: Vec<(&str, &[String])> = ruleset
        .base_chains("ingress")
        .map(|(c, b)| (c.name.as_str(), b.devices.as_slice()))
        .collect();
    assert_eq!(
        devices,
        [
            ("one", &["v0".to_string()][..]),
            ("two", &["v0".to_string(), "v1".to_string()][..])
        ]
    );
    assert!(ruleset.version.starts_with("1."), "{}", ruleset.version);
    let state: Vec<(String, Option<String>)> = ruleset
        .tables
        .iter()
        .map(|t| (t.owner.table.clone(), t.flags.not_in_force()))
        .collect();
    assert_eq!(
        state,
        [
            (
                "sleeper".into(),
                Some("is dormant (flags dormant), so its chains see no packet".into())
            ),
            ("awake".into(), None),
            ("edge".into(), None)
        ]
    );
    assert_eq!(ruleset.base_chains("prerouting").count(), 1);
}

#[test]
fn nft_is_run_only_when_roots_and_each_refusal_names_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nft");
    assert_eq!(
        run(&missing, &["list", "ruleset"]).unwrap_err(),
        format!(
            "{} is not installed (apt-get install nftables)",
            missing.display()
        )
    );
    let failed = run(Path::new("/bin/false"), &["-j", "list", "ruleset"]).unwrap_err();
    assert!(
        failed.starts_with("/bin/false -j list ruleset failed (exit status: 1)"),
        "{failed}"
    );
    let not_json = read_ruleset(Path::new("/bin/echo")).unwrap_err();
    assert!(
        not_json.starts_with("/bin/echo -j list ruleset printed no JSON ruleset"),
        "{not_json}"
    );
}
