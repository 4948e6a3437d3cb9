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

#[test]
fn union_intersection_and_difference_hold_at_the_ends_of_the_address_space() {
    use crate::ranges::{intersect, subtract, union, ALL};
    let all = [ALL];
    assert_eq!(
        union(&cidrs(&["10.0.0.0/9", "10.128.0.0/9", "192.0.2.0/24"])),
        cidrs(&["10.0.0.0/8", "192.0.2.0/24"])
    );
    assert_eq!(subtract(&all, &all), Vec::<Range>::new());
    assert_eq!(
        subtract(&all, &cidrs(&["0.0.0.0/1"])),
        cidrs(&["128.0.0.0/1"])
    );
    assert_eq!(
        subtract(
            &cidrs(&["10.0.0.0/8"]),
            &cidrs(&["10.0.0.0/9", "10.255.255.255"])
        ),
        vec![Range {
            first: 0x0a80_0000,
            last: 0x0aff_fffe
        }]
    );
    assert_eq!(
        intersect(
            &cidrs(&["10.0.0.0/8", "172.16.0.0/12"]),
            &cidrs(&["10.202.0.0/24", "172.0.0.0/8"])
        ),
        cidrs(&["10.202.0.0/24", "172.16.0.0/12"])
    );
    assert_eq!(
        intersect(&all, &cidrs(&["255.255.255.255"])),
        cidrs(&["255.255.255.255"])
    );
}
