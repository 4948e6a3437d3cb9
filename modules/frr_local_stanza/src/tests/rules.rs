use crate::rules::*;

#[test]
fn rule_names_are_unique_and_cite_the_spec() {
    let mut names: Vec<&str> = ALL.iter().map(|r| r.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ALL.len());
    assert!(ALL
        .iter()
        .all(|r| !r.spec.is_empty() && !r.summary.is_empty()));
}

#[test]
fn a_top_level_vrf_route_is_rewritten_as_a_vrf_block() {
    let (rule, msg) =
        not_a_stanza("ip route 0.0.0.0/0 10.20.50.1 vrf vrf_tdemo nexthop-vrf default");
    assert_eq!(rule.name, "top-level-route");
    assert!(
        msg.contains(
            "`vrf vrf_tdemo` / ` ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default` / `exit`"
        ),
        "{msg}"
    );
}

#[test]
fn a_list_entry_without_seq_gets_a_numbered_example() {
    let (rule, msg) = not_a_stanza("ip prefix-list NOSEQ permit 10.0.0.0/8");
    assert_eq!(rule.name, "list-without-seq");
    assert!(
        msg.contains("`ip prefix-list NOSEQ seq 5 permit 10.0.0.0/8`"),
        "{msg}"
    );
    let (rule, _) = not_a_stanza("key chain K");
    assert_eq!(rule.name, "unrecognised-stanza");
    let (rule, _) = not_a_stanza("ip nht resolve-via-default");
    assert_eq!(rule.name, "top-level-line");
}
