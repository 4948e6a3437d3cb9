//! The checks against the node, on the lab node's facts written out by hand (its links and
//! addresses as `ip -d link` / `ip addr` show them).

use super::{params, target};
use crate::params::Request;
use crate::tenant::{resolve, NodeAddress, NodeFacts, Vrf};
use deevnet_runtime::netlink::{Link, Links};
use deevnet_runtime::test_support::links;

/// A link, a port of `controller` when given.
pub(super) fn link(index: u32, name: &str, kind: Option<&str>, controller: Option<u32>) -> Link {
    Link {
        controller,
        ..links::link(index, name, kind)
    }
}

/// The lab node: vmbr0 (management) with vmbr0.50 (transit) and vmbr0.51, vrf_tdemo with its
/// VNet tdemo0, a VM's tap on it, and a second tenant's VNet.
pub(super) fn lab_node() -> NodeFacts {
    let links = Links::new(vec![
        link(1, "lo", None, None),
        link(2, "eth0", None, None),
        link(3, "vmbr0", Some("bridge"), None),
        link(4, "vmbr0.50", Some("vlan"), None),
        link(5, "vmbr0.51", Some("vlan"), None),
        link(6, "vrf_tdemo", Some("vrf"), None),
        link(7, "tdemo0", Some("bridge"), Some(6)),
        link(8, "tap101i0", Some("veth"), Some(7)),
        link(9, "vrf_other", Some("vrf"), None),
        link(10, "other0", Some("bridge"), Some(9)),
        link(11, "mgmt1-port", Some("veth"), Some(3)),
    ]);
    let address = |index, net: &str| NodeAddress {
        index,
        net: net.parse().unwrap(),
    };
    NodeFacts {
        links,
        addresses: vec![
            address(1, "127.0.0.1/8"),
            address(2, "10.0.2.15/24"),
            address(3, "10.20.99.22/24"),
            address(4, "10.20.50.22/24"),
            address(5, "10.20.51.22/24"),
            address(7, "10.20.129.1/24"),
            address(10, "10.20.130.1/24"),
        ],
    }
}

fn resolved(edit: impl FnOnce(&mut crate::params::Params)) -> Result<crate::tenant::Plan, String> {
    let mut p = params(vec![target("203.0.113.8"), target("10.20.99.5")]);
    edit(&mut p);
    resolve(&Request::from_params(p).unwrap(), &lab_node())
}

#[test]
fn the_vnet_gateway_and_captures_come_from_the_vrf() {
    let plan = resolved(|_| {}).unwrap();
    assert_eq!(
        plan.vrf,
        Vrf::Device {
            index: 6,
            name: "vrf_tdemo".into()
        }
    );
    assert_eq!(plan.vnet.name, "tdemo0");
    assert_eq!(plan.gateway.to_string(), "10.20.129.1");
    assert!(plan.gateway_is_node);
    let forbidden: Vec<&str> = plan.forbidden.iter().map(|i| i.name.as_str()).collect();
    // The main table's interfaces with an address, but lo and the expected egress.
    assert_eq!(forbidden, ["eth0", "vmbr0", "vmbr0.51"]);
    assert_eq!(plan.egress.unwrap().name, "vmbr0.50");
}

#[test]
fn the_main_table_is_a_vrf_too() {
    let plan = resolved(|p| {
        p.vrf = "default".into();
        p.address = "10.20.99.250/24".into();
        p.targets = vec![target("203.0.113.8")];
    })
    .unwrap();
    assert_eq!((plan.vrf, plan.vnet.name.as_str()), (Vrf::Main, "vmbr0"));
    let forbidden: Vec<&str> = plan.forbidden.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        forbidden,
        ["eth0", "vmbr0.51"],
        "the VNet itself is the way in"
    );
}

type Edit = dyn FnOnce(&mut crate::params::Params);

#[test]
fn what_the_node_does_not_have_is_refused() {
    let cases: Vec<(Box<Edit>, &str)> = vec![
        (Box::new(|p| p.vrf = "vrf_nope".into()), "vrf: vrf_nope does not exist on this node"),
        (Box::new(|p| p.vrf = "vmbr0".into()), "vrf: vmbr0 is a bridge interface, not a VRF"),
        (Box::new(|p| p.vnet = Some("nope0".into())), "vnet: nope0 does not exist"),
        (Box::new(|p| p.vnet = Some("vmbr0.50".into())), "vnet: vmbr0.50 is not a bridge (vlan)"),
        (Box::new(|p| p.vnet = Some("other0".into())), "vnet: other0 is not in vrf vrf_tdemo"),
        (Box::new(|p| p.address = "10.20.130.250/24".into()), "address: 10.20.130.250 is outside every subnet the VRF vrf_tdemo has connected (tdemo0 10.20.129.0/24)"),
        (Box::new(|p| p.address = "10.20.129.1/24".into()), "address: 10.20.129.1 is configured on this node (tdemo0)"),
        (Box::new(|p| p.address = "10.20.129.250/16".into()), "address: 10.20.129.250/16 does not match tdemo0's subnet 10.20.129.0/24; give 10.20.129.250/24"),
        (Box::new(|p| p.targets = vec![target("10.20.99.22")]), "targets[0].address: 10.20.99.22 is the node's own address (on vmbr0)"),
        (Box::new(|p| p.targets = vec![target("10.20.51.255")]), "targets[0].address: 10.20.51.255 is the broadcast address of 10.20.51.0/24 (on vmbr0.51)"),
        (Box::new(|p| p.targets = vec![target("203.0.113.8"), target("10.20.129.10")]), "targets[1].address: 10.20.129.10 is in the VNet's own subnet 10.20.129.0/24 (tdemo0); a probe to it never leaves the node, so it proves nothing about egress: give a host beyond the node"),
        (Box::new(|p| p.expect_egress_interface = Some("vmbr9".into())), "expect_egress_interface: vmbr9 does not exist"),
        (Box::new(|p| p.forbidden_interfaces = Some(vec!["tdemo0".into()])), "forbidden_interfaces: tdemo0 is the VNet the workload plugs into"),
    ];
    for (edit, expected) in cases {
        let msg = resolved(edit).expect_err(expected);
        assert!(
            msg.starts_with(expected),
            "expected {expected:?}, got {msg:?}"
        );
    }
}

#[test]
fn a_gateway_that_is_not_the_node_is_left_to_the_arp_check() {
    let plan = resolved(|p| p.gateway = Some("10.20.129.254".into())).unwrap();
    assert!(!plan.gateway_is_node);
}
