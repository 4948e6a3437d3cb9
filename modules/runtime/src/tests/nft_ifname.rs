use crate::nft::ifname::*;

/// nft's rule, checked with nft 1.0.6: `"eth*"` is a prefix, `"eth\*"` the name `eth*`, a
/// backslash elsewhere is part of the name, `"x**"` every name starting `x*`.
#[test]
fn a_trailing_star_is_a_prefix_and_an_escaped_one_a_literal() {
    assert!(matches("eth*", "eth0") && matches("eth*", "eth") && matches("eth*", "eth*"));
    assert!(!matches("eth*", "et") && !matches("eth*", "veth0"));
    assert!(matches("eth\\*", "eth*"));
    assert!(!matches("eth\\*", "eth0") && !matches("eth\\*", "eth\\*"));
    assert!(matches("\\*", "*") && !matches("\\*", "a"));
    assert!(matches("e\\th*", "e\\th0") && !matches("e\\th*", "eth0"));
    assert!(matches("e\\th", "e\\th") && !matches("e\\th", "eth"));
    assert!(matches("x**", "x*y") && !matches("x**", "xy"));
    assert!(matches("eth0", "eth0") && !matches("eth0", "eth01"));
    assert_eq!(Pattern::parse("tap*"), Pattern::Prefix("tap".into()));
    assert_eq!(Pattern::parse("tap\\*"), Pattern::Name("tap*".into()));
}

/// In a set nft 1.0.6 prints `"b\*"` as `"b*"`: the reading is certain only where the prefix
/// and the literal agree.
#[test]
fn a_set_element_ending_in_a_star_is_certain_only_where_both_readings_agree() {
    assert_eq!(set_element_matches("b*", "b*"), Some(true));
    assert_eq!(set_element_matches("b*", "c0"), Some(false));
    assert_eq!(set_element_matches("b*", "b0"), None);
    assert_eq!(set_element_matches("b\\*", "b*"), Some(true));
    assert_eq!(set_element_matches("eth0", "eth0"), Some(true));
    assert_eq!(set_element_matches("eth0", "eth1"), Some(false));
}
