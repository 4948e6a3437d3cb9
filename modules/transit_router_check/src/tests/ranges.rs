use crate::ranges::{any_overlap, covered, parse_list, Range};

fn cidrs(texts: &[&str]) -> Vec<Range> {
    texts
        .iter()
        .map(|t| Range::parse_cidr(t).expect("cidr"))
        .collect()
}

#[test]
fn overlap_and_cover_of_cidrs() {
    assert!(any_overlap(
        &cidrs(&["10.202.0.0/25"]),
        &cidrs(&["10.202.0.0/24"])
    ));
    assert!(any_overlap(
        &cidrs(&["0.0.0.0/0"]),
        &cidrs(&["192.0.2.0/24"])
    ));
    assert!(!any_overlap(
        &cidrs(&["10.96.100.0/28"]),
        &cidrs(&["10.96.100.16/28"])
    ));
    assert!(covered(
        &cidrs(&["10.0.0.0/9", "10.128.0.0/9"]),
        &cidrs(&["10.0.0.0/8"])
    ));
    assert!(covered(
        &cidrs(&["10.0.0.0/8"]),
        &cidrs(&["10.0.0.0/9", "10.128.0.0/9"])
    ));
    assert!(!covered(&cidrs(&["10.0.0.0/8"]), &cidrs(&["10.0.0.0/9"])));
    assert!(covered(
        &cidrs(&["255.255.255.255"]),
        &cidrs(&["0.0.0.0/0"])
    ));
}

#[test]
fn ranges_print_as_cidr_address_or_span() {
    assert_eq!(cidrs(&["10.0.0.0/8"])[0].to_string(), "10.0.0.0/8");
    assert_eq!(cidrs(&["192.0.2.53"])[0].to_string(), "192.0.2.53");
    assert_eq!(Range { first: 1, last: 2 }.to_string(), "0.0.0.1-0.0.0.2");
}

#[test]
fn bad_cidrs_are_refused_naming_the_option() {
    assert!(parse_list("vpc_ranges", &["10.0.0.0/8".into()]).is_ok());
    let msg = parse_list("vpc_ranges", &["10.0.0/8".into()]).expect_err("refused");
    assert!(
        msg.starts_with("vpc_ranges: '10.0.0/8' is not an IPv4 CIDR"),
        "{msg}"
    );
}
