//! What the kernel has for the devices and VRF tables a node's SDN intent names: pure data,
//! read by [`crate::node::observe`] and compared by [`crate::kernel_drift::kernel_drift`], so
//! tests build it by hand.

use std::collections::{BTreeMap, BTreeSet};

use deevnet_runtime::netlink::{AddressState, OperState, VxlanInfo};
use ipnet::IpNet;

use crate::intent::NodeIntent;

/// The metric of Proxmox's catch-all in a VRF's table: `ip route add vrf vrf_<zone> unreachable
/// default metric 4278198272`, written by the VRF's `post-up` on member nodes and deleted by it
/// on exit nodes (IPv4 only: the generator writes no IPv6 one).
pub const CATCH_ALL_METRIC: u32 = 4278198272;

/// What the kernel has of what the intent names. A device the intent names that is not in
/// `devices` does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelView {
    /// The devices the intent names ([`declared_devices`]) that the kernel has, by name.
    pub devices: BTreeMap<String, Device>,
    /// The tables of the VRF devices the intent names and the kernel has, by VRF name.
    pub vrf_tables: BTreeMap<String, VrfTable>,
}

impl KernelView {
    pub fn device(&self, name: &str) -> Option<&Device> {
        self.devices.get(name)
    }
}

/// One device, as `ip -d address show DEV` and its sysctls describe it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Device {
    pub name: String,
    /// IFLA_INFO_KIND: `vrf`, `vxlan`, `bridge`, …; `None` for physical NICs.
    pub kind: Option<String>,
    /// A VRF's table.
    pub vrf_table: Option<u32>,
    /// The device this one is enslaved to (a bridge port's bridge, a VRF member's VRF).
    pub controller: Option<Controller>,
    /// A VXLAN device's VNI, local address and port.
    pub vxlan: Option<VxlanInfo>,
    pub mtu: Option<u32>,
    /// IFF_UP: `ip link set DEV up`. A device that is down forwards nothing.
    pub admin_up: bool,
    /// IFLA_OPERSTATE, for the record: carrier is not compared (kernel_drift says why).
    pub oper_state: OperState,
    /// Every address on the device, both families, with its prefix length.
    pub addresses: Vec<IpNet>,
    /// The addresses of `addresses` the kernel does not use (tentative, DAD failed), with why;
    /// an address not here is usable.
    pub unusable_addresses: BTreeMap<IpNet, AddressState>,
    /// `net.ipv4.conf.<dev>.forwarding` is 1; `None` when the key does not exist.
    pub forwarding_v4: Option<bool>,
    /// `net.ipv6.conf.<dev>.forwarding` is 1; `None` when the key does not exist (IPv6 off).
    pub forwarding_v6: Option<bool>,
}

impl Device {
    pub fn is_vrf(&self) -> bool {
        self.kind.as_deref() == Some("vrf")
    }
}

/// A device's controller, by name and kind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Controller {
    /// The controller's name (`ifindex N` when it vanished during the dump).
    pub name: String,
    pub kind: Option<String>,
}

/// What a VRF's table holds of Proxmox's catch-all (an `unreachable` IPv4 default with metric
/// [`CATCH_ALL_METRIC`]; the generator adds and deletes no IPv6 one, so none is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VrfTable {
    pub table: u32,
    pub catch_all_v4: bool,
}

/// Every device name the intent names: per zone its VRF, L3VNI VXLAN device and L3VNI bridge,
/// per VNet its bridge and VXLAN device. [`crate::node::observe`] reads exactly these.
pub fn declared_devices(intent: &NodeIntent) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for zone in &intent.zones {
        for name in [&zone.vrf, &zone.l3vni_vxlan, &zone.l3vni_bridge]
            .into_iter()
            .flatten()
        {
            names.insert(name.clone());
        }
        for vnet in &zone.vnets {
            names.insert(vnet.name.clone());
            if let Some(device) = &vnet.vxlan_device {
                names.insert(device.clone());
            }
        }
    }
    names
}
