use super::*;
use crate::edit::apply;

fn stanza(header: &str, lines: &[&str], mode: Mode) -> Stanza {
    Stanza::present(header, lines, mode)
}

const OTHERS: &str = "! hand-written\nrouter bgp 65020\n bgp router-id 10.0.0.1\nexit\n!\n";

#[test]
fn a_tenant_that_leaves_loses_its_stanza_and_nothing_else_changes() {
    let both = vec![
        stanza(
            "vrf vrf_a",
            &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
            Mode::Exact,
        ),
        stanza(
            "vrf vrf_b",
            &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
            Mode::Exact,
        ),
    ];
    let first = apply(OTHERS, &take_back(both.clone(), &[]));
    let recorded = declared(&both);
    let only_a = vec![both[0].clone()];
    let second = apply(&first.text, &take_back(only_a.clone(), &recorded));
    assert!(!second.text.contains("vrf vrf_b"), "{}", second.text);
    assert!(second.text.contains("vrf vrf_a\n"), "{}", second.text);
    assert!(second.text.starts_with(OTHERS), "{}", second.text);
    // The record then holds only vrf_a, and the next run changes nothing.
    let third = apply(&second.text, &take_back(only_a.clone(), &declared(&only_a)));
    assert_eq!(third.text, second.text);
}

#[test]
fn a_stanza_nobody_recorded_is_never_removed() {
    let text =
        format!("{OTHERS}vrf vrf_hand\n ip route 0.0.0.0/0 10.9.9.9 nexthop-vrf default\nexit\n");
    let recorded = declared(&[stanza(
        "vrf vrf_gone",
        &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
        Mode::Exact,
    )]);
    let edited = apply(&text, &take_back(Vec::new(), &recorded));
    assert_eq!(edited.text, text);
}

#[test]
fn a_merge_stanza_loses_only_the_owners_commands() {
    let text = "vrf vrf_a\n vni 10001\n ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default\n ipv6 route ::/0 2001:db8::1 nexthop-vrf default\nexit\n";
    let recorded = declared(&[stanza(
        "vrf vrf_a",
        &[
            "ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default",
            "ipv6 route ::/0 2001:db8::1 nexthop-vrf default",
        ],
        Mode::Merge,
    )]);
    // The owner drops the v6 route: only that command goes.
    let now = vec![stanza(
        "vrf vrf_a",
        &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
        Mode::Merge,
    )];
    let edited = apply(text, &take_back(now, &recorded));
    assert_eq!(
        edited.text,
        "vrf vrf_a\n vni 10001\n ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default\nexit\n"
    );
    // The owner drops the stanza: the operator's `vni` line stays.
    let edited = apply(text, &take_back(Vec::new(), &recorded));
    assert_eq!(edited.text, "vrf vrf_a\n vni 10001\nexit\n");
}

#[test]
fn a_merge_stanza_left_empty_goes() {
    let text = "vrf vrf_a\n ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default\nexit\n";
    let recorded = declared(&[stanza(
        "vrf vrf_a",
        &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
        Mode::Merge,
    )]);
    let edited = apply(text, &take_back(Vec::new(), &recorded));
    assert_eq!(edited.text, "");
}

#[test]
fn the_record_keeps_other_owners_and_files_and_reads_back() {
    let a = declared(&[stanza(
        "vrf vrf_a",
        &["ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default"],
        Mode::Exact,
    )]);
    let record = Record::parse(None, "r")
        .unwrap()
        .with_entries("/etc/frr/frr.conf.local", "role", a.clone())
        .with_entries("/etc/frr/frr.conf.local", "other", a.clone())
        .with_entries("/srv/x.conf", "role", a.clone());
    let back = Record::parse(Some(&record.render()), "r").unwrap();
    assert_eq!(back, record);
    assert_eq!(
        back.entries("/etc/frr/frr.conf.local", "other"),
        a.as_slice()
    );
    let without = back.with_entries("/etc/frr/frr.conf.local", "role", Vec::new());
    assert_eq!(without.entries("/etc/frr/frr.conf.local", "role"), &[]);
    assert_eq!(
        without.entries("/etc/frr/frr.conf.local", "other"),
        a.as_slice()
    );
    let empty = without
        .with_entries("/etc/frr/frr.conf.local", "other", Vec::new())
        .with_entries("/srv/x.conf", "role", Vec::new());
    assert!(empty.files.is_empty());
}

#[test]
fn a_record_that_is_not_ours_is_refused_naming_the_fix() {
    let err = Record::parse(Some("vrf vrf_a\n"), "/var/lib/x.json").unwrap_err();
    assert!(
        err.contains("owner_record=/var/lib/x.json is not a record this module wrote"),
        "{err}"
    );
    assert!(err.contains("nothing was changed"), "{err}");
    let err = Record::parse(Some(r#"{"version": 9, "files": {}}"#), "r").unwrap_err();
    assert!(err.contains("has version 9"), "{err}");
}

#[test]
fn the_union_holds_every_header_once_with_every_line() {
    let earlier = declared(&[
        stanza("vrf vrf_a", &["l1"], Mode::Merge),
        stanza("vrf vrf_b", &["l1"], Mode::Exact),
    ]);
    let now = declared(&[stanza("vrf vrf_a", &["l2"], Mode::Merge)]);
    let both = union(&earlier, &now);
    assert_eq!(both.len(), 2);
    assert_eq!(both[0].lines, vec!["l2".to_string(), "l1".to_string()]);
    assert_eq!(both[1].header, "vrf vrf_b");
}
