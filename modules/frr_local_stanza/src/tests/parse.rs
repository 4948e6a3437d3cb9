use crate::parse::*;

fn covered_lines(file: &ConfigFile) -> Vec<usize> {
    let mut covered = Vec::new();
    for item in &file.items {
        match item {
            Item::Loose(i) => covered.push(*i),
            Item::Stanza(c) => covered.extend(c.header_index..=c.last_index),
        }
    }
    covered
}

#[test]
fn the_portable_vector_parses_into_the_contexts_frr_reload_sees() {
    let source = include_str!("../../tests/data/pve-merge/frr.conf.local.portable");
    let file = parse(source);
    let headers: Vec<&str> = file.stanzas().map(|c| c.header.as_str()).collect();
    assert_eq!(
        headers,
        [
            "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0",
            "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31",
            "vrf vrf_tdemo",
            "router bgp 45689",
            "router bgp 45689 vrf vrf_evpn",
        ]
    );
    let vrf = file.stanzas().nth(2).unwrap();
    assert_eq!(
        vrf.commands().collect::<Vec<_>>(),
        ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]
    );
    assert_eq!(vrf.terminator, Some(6));
    let bgp = file.stanzas().nth(3).unwrap();
    assert_eq!(bgp.children.len(), 1);
    assert_eq!(bgp.children[0].header, "address-family ipv4 unicast");
    assert_eq!(
        bgp.children[0].commands().collect::<Vec<_>>(),
        ["neighbor VTEP activate"]
    );
    assert_eq!(bgp.terminator, Some(12));
    assert_eq!(
        covered_lines(&file),
        (0..file.lines.len()).collect::<Vec<_>>()
    );
}

#[test]
fn an_unterminated_block_is_closed_by_the_next_header_of_an_outer_level() {
    let file = parse("vrf a\n ip route 1.0.0.0/8 2.2.2.2\n!\nvrf b\n ip route 3.0.0.0/8 4.4.4.4\n");
    let stanzas: Vec<&Context> = file.stanzas().collect();
    assert_eq!(stanzas.len(), 2);
    assert_eq!(
        stanzas[0].last_index, 1,
        "the comment before vrf b is loose"
    );
    assert_eq!(stanzas[1].terminator, None);
    assert_eq!(file.items[1], Item::Loose(2));
}

#[test]
fn line_endings_and_a_missing_last_newline_are_kept() {
    let source = "vrf a\r\n ip route 1.0.0.0/8 2.2.2.2\r\nexit";
    let file = parse(source);
    assert_eq!(file.text_of(0, 2), source);
}

#[test]
fn stray_exit_and_end_at_top_level_are_loose_lines() {
    let file = parse("exit\nend\nip nht resolve-via-default\n");
    assert_eq!(file.items[0], Item::Loose(0));
    assert_eq!(file.items[1], Item::Loose(1));
    assert!(matches!(&file.items[2], Item::Stanza(c) if !c.is_block));
}
