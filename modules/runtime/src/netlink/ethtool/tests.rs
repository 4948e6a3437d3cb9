use super::*;

/// Builds a verbose bit set as the kernel sends it.
fn bitset(names: &[&str], nomask: bool, values: &[bool]) -> Attributes {
    let mut bits = Attributes::default();
    for (i, name) in names.iter().enumerate() {
        let mut bit = Attributes::default();
        bit.put(1, &(i as u32).to_ne_bytes())
            .put_str(ETHTOOL_A_BITSET_BIT_NAME, name);
        if values.get(i).copied().unwrap_or(false) {
            bit.put(ETHTOOL_A_BITSET_BIT_VALUE, &[]);
        }
        bits.nest(ETHTOOL_A_BITSET_BITS_BIT, &bit);
    }
    let mut set = Attributes::default();
    if nomask {
        set.put(ETHTOOL_A_BITSET_NOMASK, &[]);
    }
    set.put(2, &64u32.to_ne_bytes());
    if !names.is_empty() {
        set.nest(ETHTOOL_A_BITSET_BITS, &bits);
    }
    set
}

#[test]
fn a_veth_reply_reads_as_ethtool_shows_it() {
    let mut reply = Attributes::default();
    reply
        .nest(ETHTOOL_A_FEATURES_HEADER, &request_header("veth0", 0))
        .nest(
            ETHTOOL_A_FEATURES_HW,
            &bitset(
                &["tx-vlan-hw-insert", "vlan-challenged", "rx-gro"],
                true,
                &[],
            ),
        )
        .nest(ETHTOOL_A_FEATURES_WANTED, &bitset(&["rx-gro"], true, &[]))
        .nest(
            ETHTOOL_A_FEATURES_ACTIVE,
            &bitset(&["tx-vlan-stag-hw-insert", "tx-vlan-hw-insert"], true, &[]),
        )
        .nest(
            ETHTOOL_A_FEATURES_NOCHANGE,
            &bitset(&["vlan-challenged"], true, &[]),
        );
    let features = features_from_reply(&reply.0).unwrap();
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
    let mut reply = Attributes::default();
    reply.nest(
        ETHTOOL_A_FEATURES_ACTIVE,
        &bitset(&["a", "b"], false, &[false, true]),
    );
    assert_eq!(features_from_reply(&reply.0).unwrap().active(), ["b"]);
}

#[test]
fn malformed_replies_are_errors() {
    assert!(features_from_reply(&[]).is_err(), "no active set");
    assert!(
        features_from_reply(&[0x08, 0x00, 0x04]).is_err(),
        "truncated"
    );
    let mut nameless = Attributes::default();
    let mut bits = Attributes::default();
    bits.nest(
        ETHTOOL_A_BITSET_BITS_BIT,
        Attributes::default().put(1, &[0; 4]),
    );
    let mut set = Attributes::default();
    set.put(ETHTOOL_A_BITSET_NOMASK, &[])
        .nest(ETHTOOL_A_BITSET_BITS, &bits);
    nameless.nest(ETHTOOL_A_FEATURES_ACTIVE, &set);
    assert!(features_from_reply(&nameless.0).is_err());
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
