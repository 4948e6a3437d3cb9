use crate::arp;
use crate::probe::{dns_query_bytes, is_dns_answer};
use std::net::Ipv4Addr;

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

#[test]
fn the_workloads_announcement_asks_for_its_gateway_from_its_own_address() {
    let mac = [2, 0, 0, 0, 0, 1];
    let address = Ipv4Addr::new(10, 20, 129, 250);
    let gateway = Ipv4Addr::new(10, 20, 129, 1);
    let frame = arp::announcement_frame(mac, address, gateway);
    assert_eq!(frame.len(), 28);
    assert_eq!(&frame[6..8], &[0, 1], "a request");
    assert_eq!(&frame[8..14], &mac);
    assert_eq!(&frame[14..18], &address.octets(), "sender: the workload");
    assert_eq!(&frame[24..28], &gateway.octets(), "target: its gateway");
    // Any other prober of the address hears it as the owner speaking.
    assert_eq!(arp::answer_for(&frame, address), Some(mac));
}
