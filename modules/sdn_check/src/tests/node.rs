//! What the kernel side reads from netlink: the catch-all route, a device's controller,
//! link state and addresses.

use crate::node::*;
use crate::observation::{Controller, CATCH_ALL_METRIC};
use deevnet_runtime::netlink::{
    Address, AddressState, Family, Link, Links, OperState, Route, RouteKind,
};
use deevnet_runtime::test_support::links::link;

#[test]
fn only_proxmoxs_unreachable_default_is_the_catch_all() {
    let route = |kind, metric: Option<u32>, destination: &str| {
        let mut route = Route::new(Family::V4, 1001, kind);
        route.metric = metric;
        route.destination = destination.parse().unwrap();
        route
    };
    let catch_all = route(RouteKind::Unreachable, Some(CATCH_ALL_METRIC), "0.0.0.0/0");
    assert!(is_catch_all(&catch_all));
    let mut v6 = Route::new(Family::V6, 1001, RouteKind::Unreachable);
    v6.metric = Some(CATCH_ALL_METRIC);
    assert!(is_catch_all(&v6));
    for other in [
        route(RouteKind::Unreachable, Some(100), "0.0.0.0/0"),
        route(RouteKind::Unreachable, None, "0.0.0.0/0"),
        route(RouteKind::Blackhole, Some(CATCH_ALL_METRIC), "0.0.0.0/0"),
        route(RouteKind::Unicast, Some(CATCH_ALL_METRIC), "0.0.0.0/0"),
        route(RouteKind::Unreachable, Some(CATCH_ALL_METRIC), "10.0.0.0/8"),
    ] {
        assert!(!is_catch_all(&other), "{other:?}");
    }
}

#[test]
fn a_device_takes_its_controller_by_name_and_only_its_own_addresses() {
    let bridge = Link {
        controller: Some(3),
        mtu: Some(1450),
        ..link(5, "tdemo0", Some("bridge"))
    };
    let vrf = Link {
        vrf_table: Some(1001),
        ..link(3, "vrf_tdemo", Some("vrf"))
    };
    let orphan = Link {
        controller: Some(99),
        ..link(6, "vxlan_tdemo0", None)
    };
    let links = Links::new(vec![bridge.clone(), vrf, orphan.clone()]);
    let addresses = addresses_by_link(&[
        Address {
            index: 5,
            address: "10.20.129.1/24".parse().unwrap(),
            state: AddressState::default(),
        },
        Address {
            index: 6,
            address: "10.9.9.9/24".parse().unwrap(),
            state: AddressState::default(),
        },
    ]);
    let device = device(&links, &addresses, &bridge);
    assert_eq!(
        device.controller,
        Some(Controller {
            name: "vrf_tdemo".into(),
            kind: Some("vrf".into())
        })
    );
    assert_eq!(device.addresses, vec!["10.20.129.1/24".parse().unwrap()]);
    assert_eq!(device.mtu, Some(1450));
    let orphan = crate::node::device(&links, &addresses, &orphan);
    assert_eq!(orphan.controller.unwrap().name, "ifindex 99");
}

#[test]
fn a_device_takes_its_link_state_and_its_unusable_addresses() {
    let bridge = Link {
        admin_up: true,
        oper_state: OperState::LowerLayerDown,
        ..link(5, "tdemo0", Some("bridge"))
    };
    let failed = AddressState {
        tentative: false,
        dad_failed: true,
    };
    let addresses = addresses_by_link(&[
        Address {
            index: 5,
            address: "fd20:129::1/64".parse().unwrap(),
            state: failed,
        },
        Address {
            index: 5,
            address: "10.20.129.1/24".parse().unwrap(),
            state: AddressState::default(),
        },
    ]);
    let links = Links::new(vec![bridge.clone()]);
    let device = device(&links, &addresses, &bridge);
    assert!(device.admin_up);
    assert_eq!(device.oper_state, OperState::LowerLayerDown);
    assert_eq!(device.addresses.len(), 2);
    assert_eq!(
        device.unusable_addresses,
        [("fd20:129::1/64".parse().unwrap(), failed)].into()
    );
}
