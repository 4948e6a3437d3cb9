//! Resolving the stack: a stack that is not there is refused as bad input.

use super::*;

#[test]
fn a_stack_that_is_not_there_is_refused() {
    let node = Node::healthy();
    let resolve = |change: fn(&mut Params)| {
        let mut raw = raw();
        change(&mut raw);
        node.resolve(&Request::from_params(raw).unwrap())
            .unwrap_err()
    };
    assert_eq!(
        resolve(|r| r.bond = "bond0.40".into()),
        "bond: bond0.40 is a vlan device, neither a bond nor a NIC; give the bond (bond0) or the single NIC (eno1) that carries the uplink VLAN device"
    );
    // A NIC (a veth stands for one) is a parent, but this one has no uplink VLAN device.
    assert!(resolve(|r| r.bond = "qinq_a".into())
        .starts_with("uplink_vlan: there is no VLAN device with id 40 on qinq_a"));
    assert!(resolve(|r| r.bond = "bond9".into())
        .starts_with("bond: there is no interface bond9 on this node"));
    assert_eq!(
        resolve(|r| r.uplink_vlan = 41),
        "uplink_vlan: there is no VLAN device with id 41 on bond0 (bond0's VLAN devices: bond0.40 (id 40)); create it (ip link add link bond0 name bond0.41 type vlan id 41) or fix uplink_vlan"
    );
    assert!(resolve(|r| r.bridge = "qvm0".into())
        .starts_with("bridge: qvm0 is a veth device, not a bridge"));
    assert!(resolve(|r| r.trunk_interfaces = vec!["eno9".into()])
        .starts_with("trunk_interfaces: there is no interface eno9"));
    // 9216 is the most the trunk NIC takes.
    assert_eq!(
        resolve(|r| r.zone_mtu = Some(9300)),
        "zone_mtu: 9300 cannot be carried: eno2 (trunk) accepts an MTU of at most 9216, and it needs 9300 (the zone MTU); lower zone_mtu to 9216 or less"
    );
}

#[test]
fn a_max_mtu_of_zero_is_no_limit() {
    let mut node = Node::healthy();
    for link in &mut node.links {
        link.max_mtu = Some(0);
    }
    let mut raw = raw();
    raw.zone_mtu = Some(9000);
    assert!(node.resolve(&Request::from_params(raw).unwrap()).is_ok());
}

#[test]
fn a_vlan_device_named_like_the_uplink_but_elsewhere_is_explained() {
    let mut node = Node::healthy();
    let uplink = node.link_mut("bond0.40");
    uplink.parent = Some(QINQ_A);
    let error = node.resolve(&request()).unwrap_err();
    assert!(
        error.contains(
            "(bond0 has no VLAN device at all; bond0.40 exists but is VLAN 40 on qinq_a)"
        ),
        "{error}"
    );
}
