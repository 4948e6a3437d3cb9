//! Bad options: refused before anything is read or changed.

use super::*;

/// A change to the options, and the start of the message it must give.
type BadCase = (fn(&mut Params), &'static str);

#[test]
fn bad_options_name_the_option_the_value_and_the_fix() {
    let cases: Vec<BadCase> = vec![
        (
            |r| r.uplink_vlan = 4095,
            "uplink_vlan: VLAN 4095 is outside 1-4094",
        ),
        (
            |r| r.uplink_vlan = 0,
            "uplink_vlan: VLAN 0 is outside 1-4094",
        ),
        (
            |r| r.vlans = vec!["199-5000".into()],
            "vlans: VLAN 5000 in '199-5000' is outside 1-4094",
        ),
        (
            |r| r.vlans = vec!["299-199".into()],
            "vlans: the range '299-199' is written backwards; write it lowest first, as 199-299",
        ),
        (
            |r| r.vlans = vec!["40".into()],
            "vlans: 40 is the outer VLAN (uplink_vlan=40) itself",
        ),
        (
            |r| r.bond = "bond0/../x".into(),
            "bond: 'bond0/../x' is not a valid interface name",
        ),
        (
            |r| r.bridge = "a_name_far_too_long".into(),
            "bridge: 'a_name_far_too_long' is not a valid interface name",
        ),
        (
            |r| r.trunk_interfaces = vec!["eth0:1".into()],
            "trunk_interfaces: 'eth0:1' is not a valid interface name",
        ),
        (
            |r| r.zone_mtu = Some(67),
            "zone_mtu: 67 is outside 68-65531",
        ),
        (
            |r| r.zone_mtu = Some(70000),
            "zone_mtu: 70000 is outside 68-65531",
        ),
        (
            |r| r.peers = vec![("02:00:00:00:02".into(), 201)],
            "peers[0].mac: '02:00:00:00:02' is not a MAC address",
        ),
        (
            |r| r.peers = vec![(PEER_MAC.into(), 5000)],
            "peers[0].vlan: VLAN 5000 is outside 1-4094",
        ),
    ];
    for (change, expected) in cases {
        let mut raw = raw();
        change(&mut raw);
        let error = Request::from_params(raw).unwrap_err();
        assert!(error.starts_with(expected), "{expected}\n  got: {error}");
    }
    assert_eq!(
        request().peers,
        [Peer {
            mac: PEER_MAC.into(),
            vlan: 201
        }]
    );
    let mut dashes = raw();
    dashes.peers = vec![("02-00-00-00-02-0A".into(), 201)];
    assert_eq!(
        Request::from_params(dashes).unwrap().peers[0].mac,
        "02:00:00:00:02:0a"
    );
}
