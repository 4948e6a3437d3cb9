use crate::grammar::*;

#[test]
fn proxmox_recognises_the_stanzas_of_spec_b3() {
    use ProxmoxHeader::*;
    let cases = [
        ("router bgp 45689", Some(Block(BlockKind::Router))),
        (
            "router bgp 45689 vrf vrf_evpn",
            Some(Block(BlockKind::Router)),
        ),
        ("vrf vrf_tdemo", Some(Block(BlockKind::Vrf))),
        ("interface eth0", Some(Block(BlockKind::Interface))),
        ("route-map LEAK permit 10", Some(RouteMap)),
        ("route-map LEAK permit", None),
        ("ip prefix-list P seq 5 permit 10.0.0.0/8", Some(List)),
        ("ip prefix-list NOSEQ permit 10.0.0.0/8", None),
        ("ipv6 prefix-list P seq 5 permit ::/0", Some(List)),
        ("access-list A seq 5 permit any", Some(List)),
        ("access-list A permit any", None),
        ("bgp community-list standard C seq 5 permit 1:1", Some(List)),
        ("ip route 0.0.0.0/0 10.0.0.1 vrf x", None),
        ("ip nht resolve-via-default", None),
        ("router-id 1.2.3.4", None),
        ("vrf", None),
        (" vrf x", None),
    ];
    for (line, expected) in cases {
        assert_eq!(proxmox_header(line), expected, "{line}");
    }
}

#[test]
fn list_entries_are_identified_by_list_and_sequence() {
    assert_eq!(
        stanza_identity("ip prefix-list L seq 5 deny 0.0.0.0/0"),
        stanza_identity("ip prefix-list L seq 5 permit 10.0.0.0/8")
    );
    assert_ne!(
        stanza_identity("ip prefix-list L seq 5 deny 0.0.0.0/0"),
        stanza_identity("ipv6 prefix-list L seq 5 deny ::/0")
    );
    assert_eq!(
        list_entry("bgp community-list standard C seq 10 permit 1:1"),
        Some(ListEntry {
            list: "bgp community-list standard C".into(),
            seq: 10
        })
    );
    assert_eq!(stanza_identity("vrf vrf_a"), "vrf vrf_a");
    assert_eq!(list_entry("ip prefix-list L permit any"), None);
}

#[test]
fn bgp_instances_are_read_from_headers() {
    assert_eq!(bgp_instance("router bgp 45689"), Some(("45689", None)));
    assert_eq!(
        bgp_instance("router bgp 45689 vrf vrf_evpn"),
        Some(("45689", Some("vrf_evpn")))
    );
    assert_eq!(bgp_instance("router ospf"), None);
}

#[test]
fn keywords_open_contexts_by_prefix() {
    assert!(opening_keyword(TOP_LEVEL, "router bgp 1").is_some());
    assert!(opening_keyword(TOP_LEVEL, "ip route 0.0.0.0/0 1.1.1.1").is_none());
    let bgp = opening_keyword(TOP_LEVEL, "router bgp 1").unwrap();
    assert!(opening_keyword(bgp.children, "address-family ipv4 unicast").is_some());
    assert!(opening_keyword(SR_TE_POLICY, "candidate-path preference 1 explicit x").is_none());
}
