//! Reads what the kernel has of what the intent names: one link dump, one address dump, the
//! IPv4 routes of the named VRFs' tables, and the named bridges' forwarding sysctls (of the calling
//! thread's network namespace, as the netlink socket is).

use std::collections::HashMap;

use deevnet_runtime::netlink::{Address, Family, Link, Links, Netlink, Route, RouteKind};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;

use crate::intent::NodeIntent;
use crate::observation::{
    declared_devices, Controller, Device, KernelView, VrfTable, CATCH_ALL_METRIC,
};

/// What the kernel has of the devices and VRF tables `intent` names.
pub fn observe(netlink: &Netlink, intent: &NodeIntent) -> Result<KernelView, Failure> {
    let links = netlink.links()?;
    let addresses = addresses_by_link(&netlink.addresses()?);
    let mut view = KernelView::default();
    for name in declared_devices(intent) {
        // Only names the kernel listed reach the sysctl paths: a kernel interface name holds
        // no `/` and is never `.` or `..`, so an odd name from the configuration reads nothing
        // outside net.ipv{4,6}.conf.
        let Some(link) = links.by_name(&name) else {
            continue;
        };
        let mut device = device(&links, &addresses, link);
        device.forwarding_v4 = forwarding(SysctlKey::ipv4_conf(&name, "forwarding"))?;
        device.forwarding_v6 = forwarding(SysctlKey::ipv6_conf(&name, "forwarding"))?;
        view.devices.insert(name, device);
    }
    for vrf in intent.zones.iter().filter_map(|zone| zone.vrf.as_deref()) {
        let Some(table) = view
            .device(vrf)
            .filter(|d| d.is_vrf())
            .and_then(|d| d.vrf_table)
        else {
            continue;
        };
        let v4 = netlink.routes(Family::V4, table)?;
        view.vrf_tables.insert(
            vrf.to_string(),
            VrfTable {
                table,
                catch_all_v4: v4.iter().any(is_catch_all),
            },
        );
    }
    Ok(view)
}

/// The address dump grouped by ifindex, so that each device takes its own in one lookup
/// rather than a scan of every address of the namespace (thousands of VNets hold thousands).
pub fn addresses_by_link(addresses: &[Address]) -> HashMap<u32, Vec<Address>> {
    let mut by_link: HashMap<u32, Vec<Address>> = HashMap::new();
    for address in addresses {
        by_link.entry(address.index).or_default().push(*address);
    }
    by_link
}

/// One device out of the dumps (the addresses as [`addresses_by_link`] groups them).
pub fn device(links: &Links, addresses: &HashMap<u32, Vec<Address>>, link: &Link) -> Device {
    let own = addresses.get(&link.index).map(Vec::as_slice).unwrap_or(&[]);
    Device {
        name: link.name.clone(),
        kind: link.kind.clone(),
        vrf_table: link.vrf_table,
        controller: link.controller.map(|index| Controller {
            name: links.name_of(index),
            kind: links.by_index(index).and_then(|c| c.kind.clone()),
        }),
        vxlan: link.vxlan,
        mtu: link.mtu,
        admin_up: link.admin_up,
        oper_state: link.oper_state,
        addresses: own.iter().map(|a| a.address).collect(),
        unusable_addresses: own
            .iter()
            .filter(|a| !a.state.usable())
            .map(|a| (a.address, a.state))
            .collect(),
        forwarding_v4: None,
        forwarding_v6: None,
    }
}

/// Proxmox's catch-all: `unreachable default metric 4278198272`.
pub fn is_catch_all(route: &Route) -> bool {
    route.kind == RouteKind::Unreachable
        && route.is_default()
        && route.metric == Some(CATCH_ALL_METRIC)
}

fn forwarding(key: SysctlKey) -> Result<Option<bool>, Failure> {
    Ok(key.read()?.map(|value| value == "1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use deevnet_runtime::netlink::{Address, AddressState, OperState};

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
            index: 5,
            name: "tdemo0".into(),
            kind: Some("bridge".into()),
            controller: Some(3),
            mtu: Some(1450),
            ..Link::default()
        };
        let vrf = Link {
            index: 3,
            name: "vrf_tdemo".into(),
            kind: Some("vrf".into()),
            vrf_table: Some(1001),
            ..Link::default()
        };
        let orphan = Link {
            index: 6,
            name: "vxlan_tdemo0".into(),
            controller: Some(99),
            ..Link::default()
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
        let orphan = super::device(&links, &addresses, &orphan);
        assert_eq!(orphan.controller.unwrap().name, "ifindex 99");
    }

    #[test]
    fn a_device_takes_its_link_state_and_its_unusable_addresses() {
        let bridge = Link {
            index: 5,
            name: "tdemo0".into(),
            kind: Some("bridge".into()),
            admin_up: true,
            oper_state: OperState::LowerLayerDown,
            ..Link::default()
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
}
