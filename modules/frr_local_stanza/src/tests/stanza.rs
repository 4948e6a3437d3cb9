use crate::stanza::*;

fn stanza(header: &str, lines: &[&str]) -> Stanza {
    Stanza {
        header: header.into(),
        lines: lines.iter().map(|l| l.to_string()).collect(),
        children: Vec::new(),
        state: State::Present,
        mode: Mode::Exact,
        withdraw: Vec::new(),
    }
}

const STRICT: Checks = Checks {
    refuse_unrecognised_headers: true,
    asn: Some("45689"),
};

fn refusal(stanzas: &[Stanza]) -> String {
    check(stanzas, STRICT).unwrap_err()
}

#[test]
fn the_three_use_cases_pass_and_are_normalised() {
    let mut bgp = stanza("router  bgp 45689", &[]);
    bgp.children = vec![stanza(
        "address-family ipv4 unicast",
        &["neighbor VTEP  activate"],
    )];
    let checked = check(
        &[
            stanza(
                "vrf vrf_tdemo",
                &["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"],
            ),
            bgp,
            stanza("ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0", &[]),
        ],
        STRICT,
    )
    .unwrap();
    assert_eq!(checked[1].header, "router bgp 45689");
    assert_eq!(checked[1].children[0].lines, ["neighbor VTEP activate"]);
}

#[test]
fn bad_input_is_refused_with_its_location() {
    let cases: Vec<(Vec<Stanza>, &str)> = vec![
        (
            vec![stanza("ip route 0.0.0.0/0 1.1.1.1 vrf v", &[])],
            "stanzas[0].header='ip route 0.0.0.0/0 1.1.1.1 vrf v' is refused (top-level-route)",
        ),
        (
            vec![stanza("ip prefix-list P permit any", &[])],
            "(list-without-seq)",
        ),
        (
            vec![stanza("vrf v", &["ip route 1.0.0.0/8 2.2.2.2 ! why"])],
            "stanzas[0].lines[0]='ip route 1.0.0.0/8 2.2.2.2 ! why' holds `!`",
        ),
        (vec![stanza("vrf v", &["end"])], "stanzas[0].lines[0]='end'"),
        (
            vec![stanza("vrf v", &["exit-vrf"])],
            "terminators are written by the module",
        ),
        (
            vec![stanza("vrf v", &[])],
            "stanzas[0]: `vrf v` has an empty body",
        ),
        (vec![stanza("vrf v", &["a\nb"])], "holds a line break"),
        (
            vec![stanza("vrf v", &["x"]), stanza("vrf  v", &["y"])],
            "stanzas[1].header='vrf  v': stanzas[0] names the same stanza",
        ),
        (
            vec![stanza("router bgp 65000", &["neighbor X peer-group"])],
            "ASN 65000 differs from asn=45689",
        ),
        (
            vec![stanza("vrf v", &["vrf w"])],
            "is a stanza header, not a line of `vrf v`",
        ),
        (
            vec![stanza("router bgp 45689", &["address-family ipv4 unicast"])],
            "give it as an item of stanzas[0].children",
        ),
        (
            vec![stanza("ip prefix-list P seq 5 permit any", &["x"])],
            "one-line stanza",
        ),
    ];
    for (stanzas, expected) in cases {
        let msg = refusal(&stanzas);
        assert!(msg.contains(expected), "{msg}\nexpected: {expected}");
    }
}

#[test]
fn children_only_as_address_families_of_a_bgp_router() {
    let mut vrf = stanza("vrf v", &["x"]);
    vrf.children = vec![stanza("address-family ipv4 unicast", &["y"])];
    assert!(refusal(&[vrf]).starts_with("stanzas[0].children: a vrf stanza has no nested stanzas"));
    let mut bgp = stanza("router bgp 45689", &[]);
    bgp.children = vec![stanza("neighbor X activate", &[])];
    assert!(
        refusal(&[bgp.clone()]).starts_with("stanzas[0].children[0].header='neighbor X activate'")
    );
    bgp.children = vec![stanza("address-family ipv4 unicast", &[])];
    assert!(refusal(&[bgp])
        .contains("stanzas[0].children[0]: `address-family ipv4 unicast` has an empty body"));
}

#[test]
fn lint_warn_lets_unrecognised_headers_through() {
    let lenient = Checks {
        refuse_unrecognised_headers: false,
        asn: None,
    };
    assert!(check(&[stanza("ip nht resolve-via-default", &[])], lenient).is_ok());
    // …but never a `!`, whatever the lint level.
    assert!(check(&[stanza("ip nht ! x", &[])], lenient).is_err());
}

#[test]
fn control_characters_are_refused_with_their_location() {
    let mut bgp = stanza("router bgp 45689", &[]);
    bgp.children = vec![stanza(
        "address-family ipv4 unicast",
        &["neighbor VTEP activate", "import vrf\u{1b}[31m red"],
    )];
    let cases: Vec<(Vec<Stanza>, &str)> = vec![
            (
                vec![stanza("vrf v\0", &["x"])],
                r#"stanzas[0].header="vrf v\0" contains the control character U+0000 (character 6); "#,
            ),
            (
                vec![stanza("vrf v", &["x"]), stanza("vrf w", &["ip route\u{1} 1.0.0.0/8 2.2.2.2"])],
                "stanzas[1].lines[0]=\"ip route\\u{1} 1.0.0.0/8 2.2.2.2\" contains the control character U+0001 (character 9)",
            ),
            (
                vec![bgp],
                "stanzas[0].children[0].lines[1]=\"import vrf\\u{1b}[31m red\" contains the control character U+001B",
            ),
            (
                vec![stanza("vrf v", &["x\u{7f}"])],
                "stanzas[0].lines[0]=\"x\\u{7f}\" contains the control character U+007F",
            ),
            (
                vec![stanza("vrf v", &["x\u{85}y"])],
                "contains the control character U+0085",
            ),
            (
                vec![stanza("ip prefix-list L seq 5 permit any\u{c}", &[])],
                "stanzas[0].header=\"ip prefix-list L seq 5 permit any\\u{c}\" contains the control character U+000C",
            ),
        ];
    for (stanzas, expected) in cases {
        let msg = refusal(&stanzas);
        assert!(msg.contains(expected), "{msg}\nexpected: {expected}");
        assert!(
            msg.ends_with("headers and lines are plain text: remove it"),
            "{msg}"
        );
    }
    // A tab is whitespace to frr-reload: read, and written, as a space.
    let checked = check(
        &[stanza("vrf\tv", &["ip route\t1.0.0.0/8 2.2.2.2"])],
        STRICT,
    )
    .unwrap();
    assert_eq!(checked[0].header, "vrf v");
    assert_eq!(checked[0].lines, ["ip route 1.0.0.0/8 2.2.2.2"]);
}
