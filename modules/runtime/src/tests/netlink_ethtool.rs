use crate::netlink::ethtool::*;
use netlink_packet_core::{NLA_F_NESTED, NLM_F_ACK, NLM_F_REQUEST};
use netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};

/// Builds a verbose bit set as the kernel sends it, as attribute `kind`.
fn bitset(kind: u16, names: &[&str], nomask: bool, values: &[bool]) -> Attr {
    let mut bits = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mut bit = vec![
            Attr::U32(1, i as u32),
            Attr::Str(ETHTOOL_A_BITSET_BIT_NAME, name.to_string()),
        ];
        if values.get(i).copied().unwrap_or(false) {
            bit.push(Attr::Flag(ETHTOOL_A_BITSET_BIT_VALUE));
        }
        bits.push(Attr::Nested(ETHTOOL_A_BITSET_BITS_BIT, bit));
    }
    let mut set = Vec::new();
    if nomask {
        set.push(Attr::Flag(ETHTOOL_A_BITSET_NOMASK));
    }
    set.push(Attr::U32(2, 64));
    if !names.is_empty() {
        set.push(Attr::Nested(ETHTOOL_A_BITSET_BITS, bits));
    }
    Attr::Nested(kind, set)
}

#[test]
fn a_veth_reply_reads_as_ethtool_shows_it() {
    let reply = emitted(&[
        request_header("veth0", 0),
        bitset(
            ETHTOOL_A_FEATURES_HW,
            &["tx-vlan-hw-insert", "vlan-challenged", "rx-gro"],
            true,
            &[],
        ),
        bitset(ETHTOOL_A_FEATURES_WANTED, &["rx-gro"], true, &[]),
        bitset(
            ETHTOOL_A_FEATURES_ACTIVE,
            &["tx-vlan-stag-hw-insert", "tx-vlan-hw-insert"],
            true,
            &[],
        ),
        bitset(ETHTOOL_A_FEATURES_NOCHANGE, &["vlan-challenged"], true, &[]),
    ]);
    let features = features_from_reply(&reply).unwrap();
    assert_eq!(
        features.get(TX_VLAN_HW_INSERT),
        Feature {
            active: true,
            changeable: true
        }
    );
    // On and not in the changeable set: fixed.
    assert_eq!(
        features.get(TX_VLAN_STAG_HW_INSERT),
        Feature {
            active: true,
            changeable: false
        }
    );
    // Changeable by the driver, but one the kernel never changes.
    assert!(!features.get("vlan-challenged").changeable);
    assert_eq!(
        features.get("no-such-feature"),
        Feature {
            active: false,
            changeable: false
        }
    );
    assert_eq!(
        features.active(),
        ["tx-vlan-hw-insert", "tx-vlan-stag-hw-insert"]
    );
}

#[test]
fn masked_sets_count_only_the_bits_with_a_value() {
    let reply = emitted(&[bitset(
        ETHTOOL_A_FEATURES_ACTIVE,
        &["a", "b"],
        false,
        &[false, true],
    )]);
    assert_eq!(features_from_reply(&reply).unwrap().active(), ["b"]);
}

#[test]
fn malformed_replies_are_errors() {
    assert!(features_from_reply(&[]).is_err(), "no active set");
    assert!(
        features_from_reply(&[0x08, 0x00, 0x04]).is_err(),
        "truncated"
    );
    let bits = vec![Attr::Nested(
        ETHTOOL_A_BITSET_BITS_BIT,
        vec![Attr::U32(1, 0)],
    )];
    let set = vec![
        Attr::Flag(ETHTOOL_A_BITSET_NOMASK),
        Attr::Nested(ETHTOOL_A_BITSET_BITS, bits),
    ];
    let nameless = emitted(&[Attr::Nested(ETHTOOL_A_FEATURES_ACTIVE, set)]);
    assert!(features_from_reply(&nameless).is_err());
}

#[test]
fn the_set_request_names_one_bit_in_a_masked_set() {
    let off = features_set_request("qinq_b", TX_VLAN_HW_INSERT, false);
    let on = features_set_request("qinq_b", TX_VLAN_HW_INSERT, true);
    // header{name "qinq_b", flags OMIT_REPLY}, wanted{bits{bit{name}}}: no NOMASK, so the
    // listed bit is the mask, and VALUE is present only to switch it on.
    let top = nlas(&off).unwrap();
    assert_eq!(top.len(), 2);
    assert_eq!(top[0].kind(), ETHTOOL_A_FEATURES_HEADER);
    let nested = |bytes: &[u8]| u16::from_ne_bytes([bytes[2], bytes[3]]) & NLA_F_NESTED != 0;
    assert!(nested(&off), "the header is a nested attribute");
    let header = nlas(top[0].value()).unwrap();
    assert_eq!(c_string(header[0].value()).unwrap(), "qinq_b");
    assert_eq!(header[1].value(), ETHTOOL_FLAG_OMIT_REPLY.to_ne_bytes());
    assert_eq!(top[1].kind(), ETHTOOL_A_FEATURES_WANTED);
    let masked = |request: &[u8]| {
        let top = nlas(request).unwrap();
        let wanted = top[1].value().to_vec();
        (bits_set(&wanted).unwrap(), nlas(&wanted).unwrap().len())
    };
    assert_eq!(masked(&off), (vec![], 1));
    assert_eq!(masked(&on), (vec![TX_VLAN_HW_INSERT.to_string()], 1));
    assert_eq!(on.len(), off.len() + 4);
}

/// The requests go out byte for byte as the hand-framed ones did (little-endian host): the
/// framing moved to netlink-packet-core and netlink-packet-generic, the bytes did not change,
/// except the controller's version, which netlink-packet-generic sets to 2 (the kernel does not
/// read it).
#[cfg(target_endian = "little")]
#[test]
fn requests_are_framed_as_before() {
    let set = EthtoolRequest {
        command: ETHTOOL_MSG_FEATURES_SET,
        attributes: features_set_attributes("qinq_b", TX_VLAN_HW_INSERT, false),
    };
    #[rustfmt::skip]
    let expected_set = [
        0x50, 0x00, 0x00, 0x00, 0x15, 0x00, 0x05, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x0c, 0x01, 0x00, 0x00, 0x18, 0x00, 0x01, 0x80, 0x0b, 0x00, 0x02, 0x00, 0x71, 0x69, 0x6e, 0x71,
        0x5f, 0x62, 0x00, 0x00, 0x08, 0x00, 0x03, 0x00, 0x02, 0x00, 0x00, 0x00, 0x24, 0x00, 0x03, 0x80,
        0x20, 0x00, 0x03, 0x80, 0x1c, 0x00, 0x01, 0x80, 0x16, 0x00, 0x02, 0x00, 0x74, 0x78, 0x2d, 0x76,
        0x6c, 0x61, 0x6e, 0x2d, 0x68, 0x77, 0x2d, 0x69, 0x6e, 0x73, 0x65, 0x72, 0x74, 0x00, 0x00, 0x00,
    ];
    assert_eq!(frame(0x15, 7, set, NLM_F_REQUEST | NLM_F_ACK), expected_set);

    let get = EthtoolRequest {
        command: ETHTOOL_MSG_FEATURES_GET,
        attributes: vec![request_header("veth0", 0)],
    };
    #[rustfmt::skip]
    let expected_get = [
        0x24, 0x00, 0x00, 0x00, 0x15, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x0b, 0x01, 0x00, 0x00, 0x10, 0x00, 0x01, 0x80, 0x0a, 0x00, 0x02, 0x00, 0x76, 0x65, 0x74, 0x68,
        0x30, 0x00, 0x00, 0x00,
    ];
    assert_eq!(frame(0x15, 3, get, NLM_F_REQUEST), expected_get);

    let lookup = GenlCtrl {
        cmd: GenlCtrlCmd::GetFamily,
        nlas: vec![GenlCtrlAttrs::FamilyName("ethtool".into())],
    };
    // The controller's static id (0x10) wins over the (unresolved) family passed in.
    #[rustfmt::skip]
    let expected_lookup = [
        0x20, 0x00, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 0x02, 0x00, 0x00, 0x0c, 0x00, 0x02, 0x00, 0x65, 0x74, 0x68, 0x74, 0x6f, 0x6f, 0x6c, 0x00,
    ];
    assert_eq!(frame(0, 1, lookup, NLM_F_REQUEST), expected_lookup);
}
