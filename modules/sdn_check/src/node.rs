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
