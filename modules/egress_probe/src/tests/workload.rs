use crate::arp;
use crate::probe::{dns_query_bytes, echo_answer, echo_request, is_dns_answer, EchoAnswer};
use std::net::Ipv4Addr;

#[test]
fn echo_requests_and_their_answers() {
    let request = echo_request(0x48bc, 7);
    assert_eq!(&request[..2], &[8, 0]);
    assert_eq!(
        crate::sock::internet_checksum(&request),
        0,
        "the checksum covers the message"
    );
    let target = Ipv4Addr::new(203, 0, 113, 8);
    // The echo reply recorded in tests/recorded (sequence 0).
    let reply = hex("45000034f24c00003f01c165cb0071080a1481fa0000a8c848bc0000646565766e65742e6e6574206567726573735f70726f6265");
    assert_eq!(
        echo_answer(&reply, target, 0x48bc, 0),
        Some(EchoAnswer::Reply)
    );
    assert_eq!(echo_answer(&reply, target, 0x48bd, 0), None, "another id");
    assert_eq!(
        echo_answer(&reply, target, 0x48bc, 1),
        None,
        "another sequence"
    );
    // A router's unreachable quoting our request.
    let mut unreachable = hex("45000038000000004001000a0a14320a0a1481fa");
    unreachable.extend_from_slice(&[3, 1, 0, 0, 0, 0, 0, 0]);
    unreachable.extend(hex("450000340000000040010000 0a1481fa cb007108"
        .replace(' ', "")
        .as_str()));
    unreachable.extend_from_slice(&request[..8]);
    assert_eq!(
        echo_answer(&unreachable, target, 0x48bc, 7),
        Some(EchoAnswer::Unreachable(Ipv4Addr::new(10, 20, 50, 10)))
    );
}

#[test]
fn dns_queries_and_answers() {
    let query = dns_query_bytes(0x48bc);
    assert_eq!(query.len(), 17);
    assert!(!is_dns_answer(&query, 0x48bc), "a query is no answer");
    assert!(is_dns_answer(&[0x48, 0xbc, 0x81, 0x80, 0, 0], 0x48bc));
    assert!(!is_dns_answer(&[0x48, 0xbd, 0x81, 0x80, 0, 0], 0x48bc));
}

#[test]
fn arp_probes_and_answers() {
    let mac = [2, 0, 0, 0, 0, 1];
    let address = Ipv4Addr::new(10, 20, 129, 10);
    let probe = arp::probe_frame(mac, address);
    assert_eq!(probe.len(), 28);
    assert_eq!(
        &probe[14..18],
        &[0, 0, 0, 0],
        "RFC 5227: the probe claims no address"
    );
    assert_eq!(
        arp::answer_for(&probe, address),
        None,
        "our own probe answers nothing"
    );
    let mut reply = probe.clone();
    reply[7] = 2;
    reply[8..14].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
    reply[14..18].copy_from_slice(&address.octets());
    assert_eq!(arp::answer_for(&reply, address), Some([2, 0, 0, 0, 0, 9]));
    assert_eq!(
        arp::answer_for(&reply, Ipv4Addr::new(10, 20, 129, 11)),
        None
    );
    assert_eq!(
        arp::parse_mac("02:00:00:00:00:09"),
        Some([2, 0, 0, 0, 0, 9])
    );
    assert_eq!(arp::format_mac([2, 0, 0, 0, 0, 9]), "02:00:00:00:00:09");
    assert_eq!(arp::parse_mac("02:00:00"), None);
}

pub fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}
