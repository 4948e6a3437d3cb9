use crate::nft::ranges::*;
use crate::nft::value_range;
use serde_json::json;
use std::net::Ipv4Addr;

fn r(text: &str) -> Range {
    Range::parse(text).unwrap_or_else(|| panic!("{text}"))
}

#[test]
fn prefixes_addresses_and_nfts_a_b_ranges_parse_and_print_back() {
    assert_eq!(
        r("10.0.0.0/8"),
        Range {
            first: 0x0a00_0000,
            last: 0x0aff_ffff
        }
    );
    // Host bits are ignored, as the kernel does.
    assert_eq!(r("10.1.2.3/8"), r("10.0.0.0/8"));
    assert_eq!(r("0.0.0.0/0").last, u32::MAX);
    assert_eq!(r("192.0.2.1"), r("192.0.2.1/32"));
    assert_eq!(
        r("192.0.2.10-192.0.2.20"),
        Range {
            first: 0xc000_020a,
            last: 0xc000_0214
        }
    );
    assert_eq!(r("192.0.2.0 - 192.0.2.255"), r("192.0.2.0/24"));
    for bad in [
        "10.0.0.0/33",
        "10.0.0",
        "192.0.2.20-192.0.2.10",
        "a-b",
        "",
        "::1",
    ] {
        assert_eq!(Range::parse(bad), None, "{bad}");
    }
    assert_eq!(Range::parse_cidr("192.0.2.1-192.0.2.2"), None);
    for shown in [
        "10.0.0.0/8",
        "192.0.2.1",
        "192.0.2.10-192.0.2.20",
        "0.0.0.0/0",
        "192.0.2.0-192.0.2.2",
    ] {
        assert_eq!(r(shown).to_string(), shown);
    }
    assert_eq!(r("192.0.2.0-192.0.2.255").to_string(), "192.0.2.0/24");
    assert_eq!(
        Range::prefix(Ipv4Addr::new(10, 9, 9, 9), 16),
        Some(r("10.9.0.0/16"))
    );
    assert_eq!(Range::prefix(Ipv4Addr::new(10, 9, 9, 9), 33), None);
}

#[test]
fn overlap_within_and_union_cover() {
    assert!(r("10.0.0.0/8").overlaps(&r("10.255.255.255-11.0.0.5")));
    assert!(!r("10.0.0.0/8").overlaps(&r("11.0.0.0-11.0.0.5")));
    assert!(r("10.1.0.0/16").within(&r("10.0.0.0/8")));
    assert!(!r("10.0.0.0/8").within(&r("10.1.0.0/16")));
    assert!(any_overlap(
        &[r("192.0.2.1")],
        &[r("10.0.0.0/8"), r("192.0.2.0/24")]
    ));
    assert!(!any_overlap(&[r("192.0.2.1")], &[r("10.0.0.0/8")]));
    // Two halves and an a-b range cover the whole; a gap of one address does not.
    let halves = [r("10.128.0.0/9"), r("10.0.0.0-10.127.255.255")];
    assert!(covered(&[r("10.0.0.0/8")], &halves));
    assert!(covered(&[r("10.0.0.0/8"), r("10.5.0.0/16")], &halves));
    assert!(!covered(
        &[r("10.0.0.0/8")],
        &[r("10.128.0.0/9"), r("10.0.0.0-10.127.255.254")]
    ));
    assert!(covered(
        &[r("0.0.0.0/0")],
        &[r("0.0.0.0/1"), r("128.0.0.0-255.255.255.255")]
    ));
    assert!(covered(&[], &[]));
    assert!(!covered(&[r("10.0.0.1")], &[]));
}

#[test]
fn nfts_json_values_read_as_ranges() {
    assert_eq!(value_range(&json!("10.0.0.0/8")), Some(r("10.0.0.0/8")));
    assert_eq!(
        value_range(&json!({"prefix": {"addr": "172.16.0.0", "len": 12}})),
        Some(r("172.16.0.0/12"))
    );
    assert_eq!(
        value_range(&json!({"range": ["192.0.2.10", "192.0.2.20"]})),
        Some(r("192.0.2.10-192.0.2.20"))
    );
    assert_eq!(
        value_range(&json!({"elem": {"val": "192.0.2.1", "comment": "x"}})),
        Some(r("192.0.2.1"))
    );
    for odd in [
        json!({"prefix": {"addr": "10.0.0.0", "len": 300}}),
        json!({"range": ["192.0.2.20", "192.0.2.10"]}),
        json!({"range": ["192.0.2.20"]}),
        json!("2001:db8::/32"),
        json!(7),
    ] {
        assert_eq!(value_range(&odd), None, "{odd}");
    }
}

#[test]
fn an_option_list_names_the_option_and_the_fix() {
    assert_eq!(
        parse_list("vpc_ranges", &["10.0.0.0/8".into(), " 192.0.2.1 ".into()]),
        Ok(vec![r("10.0.0.0/8"), r("192.0.2.1")])
    );
    assert_eq!(
        parse_list("vpc_ranges", &[]),
        Err(
            "vpc_ranges: the list is empty; give at least one IPv4 CIDR, e.g. 10.202.0.0/16".into()
        )
    );
    assert_eq!(
        parse_list("vpc_ranges", &["10.0.0.0/99".into()]),
        Err("vpc_ranges: '10.0.0.0/99' is not an IPv4 CIDR or address; write it as 10.202.0.0/16 or 192.0.2.53".into())
    );
}

#[test]
fn union_intersection_and_difference_hold_at_the_ends_of_the_address_space() {
    let cidrs = |texts: &[&str]| texts.iter().map(|t| r(t)).collect::<Vec<_>>();
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
