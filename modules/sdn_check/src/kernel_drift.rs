//! The kernel comparison: what Proxmox's SDN declares for the node ([`NodeIntent`]) against
//! what the kernel has ([`KernelView`]), one [`Finding`] per difference. Pure: every
//! comparison, and every fix's wording, lives here.
//!
//! What is compared follows Proxmox's generator (docs/proxmox-sdn.md):
//! - EVPN zones: the VRF device `vrf_<zone>`; the L3VNI VXLAN device `vrfvx_<zone>` (VNI,
//!   local address and its family, port, MTU, port of the L3VNI bridge); the L3VNI bridge
//!   `vrfbr_<zone>` (in the VRF, MTU); the IPv4 catch-all in the VRF's table, present on
//!   member nodes and absent on exit nodes (the VRF's `post-up` adds or deletes it).
//! - EVPN and VXLAN zones: each VNet's VXLAN device `vxlan_<vnet>` (VNI, port, MTU, port of the
//!   VNet bridge; EVPN also its local address: VXLAN zones set none, they list remote peers).
//! - Every zone: each VNet's bridge (exists, MTU); EVPN: enslaved to the zone's VRF. EVPN and
//!   simple zones, where the generator writes them: each subnet's gateway address on the
//!   bridge, and forwarding on for each family with a gateway.
//! - Every device: administratively up (a device that is down forwards nothing). Carrier is
//!   not compared: a VNet bridge of an EVPN or VXLAN zone (and the L3VNI bridge) takes it from
//!   its VXLAN port, whose findings (missing, down, outside the bridge) name the cause; the
//!   kernel sets it a moment after a reload (linkwatch), so the bridge's operstate would add
//!   only a racy duplicate; other bridges have carrier only while a guest's port is up.
//! - Every gateway address: usable. DAD failed (`dadfailed`: another holder on the segment) is
//!   a finding. Tentative alone is not: DAD finishes within seconds on a device that is up with
//!   carrier; it waits forever on one that is down, whose finding lists the addresses that
//!   wait, or without carrier, which the VXLAN port's findings explain (or no guest is there
//!   to use the gateway yet).

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

use deevnet_runtime::netlink::Family;
use ipnet::IpNet;

use crate::finding::Finding;
use crate::intent::{NodeIntent, VnetIntent, ZoneIntent, ZoneType};
use crate::observation::{Device, KernelView, CATCH_ALL_METRIC};

/// The UDP port of a VXLAN device whose zone sets no `vxlan-port`: ifupdown2 asks for IANA's
/// port (the kernel's own default would be 8472).
pub const DEFAULT_VXLAN_PORT: u16 = 4789;

/// The fixes, in words an operator acts on. Every kernel finding takes its fix from here.
pub(crate) mod fix {
    use super::CATCH_ALL_METRIC;

    use crate::finding::reload_advice;
    pub const APPLY: &str = "apply the SDN: `pvesh set /cluster/sdn`";

    /// A device the kernel lacks.
    pub fn create() -> String {
        let reload = reload_advice();
        format!("create it (if /etc/network/interfaces.d/sdn lacks it, {APPLY} first): {reload}")
    }

    /// A device whose name another kind of device holds.
    pub fn replace(name: &str) -> String {
        let reload = reload_advice();
        format!("remove the device that holds the name (`ip link del {name}`), then {reload}")
    }

    /// VXLAN settings the kernel cannot change in place: the device must be made again.
    pub fn recreate() -> String {
        let reload = reload_advice();
        format!("re-create it: {reload}")
    }

    /// A setting a reload sets on the existing device (MTU, controller, address, forwarding).
    pub fn reload(what: &str) -> String {
        let reload = reload_advice();
        format!("{what}: {reload}")
    }

    /// A device that is administratively down.
    pub fn bring_up(name: &str) -> String {
        let reload = reload_advice();
        format!("bring it up: `ip link set {name} up`, or {reload}")
    }

    /// An address whose DAD failed: the kernel keeps it unused until it is added again.
    pub fn duplicate(address: &str, device: &str) -> String {
        let reload = reload_advice();
        format!("remove {address} from the other holder on the segment, then add it again: `ip address del {address} dev {device}` and {reload}")
    }

    fn ip(vrf: &str, verb: &str) -> String {
        format!("`ip route {verb} vrf {vrf} unreachable default metric {CATCH_ALL_METRIC}`")
    }

    pub fn add_catch_all(vrf: &str) -> String {
        let reload = reload_advice();
        format!(
            "add it (the VRF's post-up runs {} on member nodes): {reload}",
            ip(vrf, "add")
        )
    }

    pub fn remove_catch_all(vrf: &str) -> String {
        let reload = reload_advice();
        format!(
            "remove it: {} (what the VRF's post-up does on exit nodes), or {reload}",
            ip(vrf, "del")
        )
    }
}

/// Every difference between what the intent declares and what the kernel has.
pub fn kernel_drift(intent: &NodeIntent, kernel: &KernelView) -> Vec<Finding> {
    let mut check = Check {
        kernel,
        findings: Vec::new(),
    };
    for zone in &intent.zones {
        check.zone(zone);
    }
    check.findings
}

struct Check<'a> {
    kernel: &'a KernelView,
    findings: Vec<Finding>,
}

impl<'a> Check<'a> {
    fn push(&mut self, object: &str, declared: String, found: String, fix: String) {
        self.findings.push(Finding {
            object: object.to_string(),
            declared,
            found,
            fix,
            awaits_reload: false,
        });
    }

    fn zone(&mut self, zone: &ZoneIntent) {
        // The generator makes a zone's devices per VNet: a zone without one has none to compare.
        if !zone.generated {
            return;
        }
        let vrf = match zone.zone_type {
            ZoneType::Evpn => self.evpn_layer3(zone),
            _ => None,
        };
        for vnet in &zone.vnets {
            self.vnet(zone, vnet, vrf);
        }
    }

    /// The VRF, the L3VNI's VXLAN device and bridge, the catch-all. Returns the VRF's name
    /// when the kernel has it as a VRF (the VNet bridges' membership is compared with it).
    fn evpn_layer3<'z>(&mut self, zone: &'z ZoneIntent) -> Option<&'z str> {
        let vrf_name = zone.vrf.as_deref()?;
        let vrf_ok = self
            .device(vrf_name, "vrf", &format!("the VRF of zone {}", zone.name))
            .is_some();
        let vrf = vrf_ok.then_some(vrf_name);
        if let (Some(bridge), Some(vxlan)) = (&zone.l3vni_bridge, &zone.l3vni_vxlan) {
            if let Some(device) = self.device(
                vxlan,
                "vxlan",
                &format!("the L3VNI VXLAN device of zone {}", zone.name),
            ) {
                self.vxlan(zone, device, zone.l3vni, zone.mtu, bridge);
            }
            if let Some(device) = self.device(
                bridge,
                "bridge",
                &format!("the L3VNI bridge of zone {}", zone.name),
            ) {
                self.mtu(device, zone.mtu);
                if let Some(vrf) = vrf {
                    self.in_vrf(device, vrf);
                }
            }
        }
        if vrf_ok {
            self.catch_all(zone, vrf_name);
        }
        vrf
    }

    fn vnet(&mut self, zone: &ZoneIntent, vnet: &VnetIntent, vrf: Option<&str>) {
        let mtu = vnet.mtu.or(zone.mtu);
        if let Some(vxlan) = &vnet.vxlan_device {
            if let Some(device) = self.device(
                vxlan,
                "vxlan",
                &format!("the VXLAN device of VNet {}", vnet.name),
            ) {
                self.vxlan(zone, device, vnet.vni, mtu, &vnet.name);
            }
        }
        let Some(bridge) = self.device(
            &vnet.name,
            "bridge",
            &format!("the bridge of VNet {} (zone {})", vnet.name, zone.name),
        ) else {
            return;
        };
        self.mtu(bridge, mtu);
        // A VRF the kernel lacks is one finding already: its members are not compared.
        if let Some(vrf) = vrf {
            self.in_vrf(bridge, vrf);
        }
        if matches!(zone.zone_type, ZoneType::Evpn | ZoneType::Simple) {
            self.gateways(bridge, vnet);
        }
    }

    /// The device, when the kernel has it with the declared kind; a finding otherwise.
    fn device(&mut self, name: &str, kind: &str, role: &str) -> Option<&'a Device> {
        let kernel = self.kernel;
        match kernel.device(name) {
            None => {
                self.push(
                    name,
                    format!("a {kind} device: {role}"),
                    "no such device".into(),
                    fix::create(),
                );
                None
            }
            Some(device) if device.kind.as_deref() != Some(kind) => {
                self.push(
                    name,
                    format!("a {kind} device: {role}"),
                    format!("a device of kind {}", kind_name(device)),
                    fix::replace(name),
                );
                None
            }
            Some(device) => {
                self.admin_up(device);
                Some(device)
            }
        }
    }

    /// A device that is down forwards nothing, whatever its settings.
    fn admin_up(&mut self, device: &Device) {
        if !device.admin_up {
            self.push(
                &device.name,
                "administratively up".into(),
                format!("administratively down{}", waiting_text(device)),
                fix::bring_up(&device.name),
            );
        }
    }

    fn vxlan(
        &mut self,
        zone: &ZoneIntent,
        device: &Device,
        vni: Option<u32>,
        mtu: Option<u32>,
        bridge: &str,
    ) {
        let info = device.vxlan.unwrap_or_default();
        if let Some(vni) = vni {
            let declared = format!("VNI {vni}");
            self.recreate_unless(
                device,
                info.vni == Some(vni),
                declared,
                labelled("VNI", info.vni),
            );
        }
        // VXLAN zones list remote peers and leave the local address unset.
        if let (ZoneType::Evpn, Some(vtep)) = (zone.zone_type, zone.vtep) {
            let (declared, found) = (local_text(Some(vtep)), local_text(info.local));
            self.recreate_unless(device, info.local == Some(vtep), declared, found);
        }
        let declared = match zone.vxlan_port {
            Some(port) => format!("port {port}"),
            None => format!("port {DEFAULT_VXLAN_PORT} (the default: the zone sets no vxlan-port)"),
        };
        let port = zone.vxlan_port.unwrap_or(DEFAULT_VXLAN_PORT);
        self.recreate_unless(
            device,
            info.port == Some(port),
            declared,
            labelled("port", info.port),
        );
        self.mtu(device, mtu);
        self.port_of(device, bridge);
    }

    /// VXLAN settings the kernel cannot change in place.
    fn recreate_unless(&mut self, device: &Device, agrees: bool, declared: String, found: String) {
        if !agrees {
            self.push(&device.name, declared, found, fix::recreate());
        }
    }

    fn mtu(&mut self, device: &Device, mtu: Option<u32>) {
        let Some(mtu) = mtu else { return };
        if device.mtu != Some(mtu) {
            self.push(
                &device.name,
                format!("MTU {mtu}"),
                labelled("MTU", device.mtu),
                fix::reload("set it"),
            );
        }
    }

    fn port_of(&mut self, device: &Device, bridge: &str) {
        self.controller_is(device, bridge, format!("a port of bridge {bridge}"));
    }

    fn in_vrf(&mut self, device: &Device, vrf: &str) {
        self.controller_is(device, vrf, format!("in VRF {vrf}"));
    }

    fn controller_is(&mut self, device: &Device, controller: &str, declared: String) {
        if device.controller.as_ref().map(|c| c.name.as_str()) != Some(controller) {
            self.push(
                &device.name,
                declared,
                controller_text(device),
                fix::reload("enslave it"),
            );
        }
    }

    /// Each subnet's gateway on the bridge, with the subnet's prefix length, and forwarding on
    /// for each family that has one.
    fn gateways(&mut self, bridge: &Device, vnet: &VnetIntent) {
        // Looked up per subnet: a VNet of thousands of subnets would otherwise scan the
        // bridge's thousands of addresses for each.
        let on_bridge: HashSet<&IpNet> = bridge.addresses.iter().collect();
        let by_address: HashMap<IpAddr, &IpNet> = bridge
            .addresses
            .iter()
            .rev() // the first of several with one address wins, as a scan found it
            .map(|a| (a.addr(), a))
            .collect();
        let mut families = Vec::new();
        for subnet in &vnet.subnets {
            let Some(gateway) = subnet.gateway else {
                continue;
            };
            let family = Family::of(&gateway);
            if !families.contains(&family) {
                families.push(family);
            }
            let Ok(declared) = IpNet::new(gateway, subnet.cidr.prefix_len()) else {
                continue;
            };
            if on_bridge.contains(&declared) {
                if bridge
                    .unusable_addresses
                    .get(&declared)
                    .is_some_and(|state| state.dad_failed)
                {
                    self.push(
                        &bridge.name,
                        format!("gateway address {declared} (subnet {})", subnet.cidr),
                        format!("address {declared}, DAD failed (`dadfailed`): another holder on the segment has it; the kernel does not use it"),
                        fix::duplicate(&declared.to_string(), &bridge.name),
                    );
                }
                continue;
            }
            let found = match by_address.get(&gateway) {
                Some(other) => format!("address {other}"),
                None => addresses_text(bridge, family),
            };
            self.push(
                &bridge.name,
                format!("gateway address {declared} (subnet {})", subnet.cidr),
                found,
                fix::reload("add it"),
            );
        }
        for family in families {
            let (found, key) = match family {
                Family::V4 => (bridge.forwarding_v4, "net.ipv4.conf"),
                Family::V6 => (bridge.forwarding_v6, "net.ipv6.conf"),
            };
            if found == Some(true) {
                continue;
            }
            let key = format!("{key}.{}.forwarding", bridge.name.replace('.', "/"));
            self.push(
                &bridge.name,
                format!("{} forwarding on ({key} = 1)", family.name()),
                match found {
                    Some(_) => format!("{key} = 0"),
                    None => format!("no {key} (is {} off?)", family.name()),
                },
                fix::reload("turn it on"),
            );
        }
    }

    /// Proxmox's IPv4 catch-all: present on member nodes, absent on exit nodes.
    fn catch_all(&mut self, zone: &ZoneIntent, vrf: &str) {
        let Some(table) = self.kernel.vrf_tables.get(vrf) else {
            return;
        };
        let route = format!(
            "unreachable default metric {CATCH_ALL_METRIC} in table {}",
            table.table
        );
        match (zone.exit_node, table.catch_all_v4) {
            (false, false) => self.push(
                vrf,
                format!("the IPv4 catch-all ({route}): this node is a member of zone {}, not an exit node", zone.name),
                "no catch-all: lookups fall through to the main table".into(),
                fix::add_catch_all(vrf),
            ),
            (true, true) => self.push(
                vrf,
                format!("no IPv4 catch-all: this node is an exit node of zone {}", zone.name),
                format!("the catch-all ({route})"),
                fix::remove_catch_all(vrf),
            ),
            _ => {}
        }
    }
}

/// `VNI 11000`, or `no VNI` when the kernel reported none.
fn labelled(label: &str, value: Option<impl std::fmt::Display>) -> String {
    match value {
        Some(value) => format!("{label} {value}"),
        None => format!("no {label}"),
    }
}

/// `; DAD cannot finish, so fd20:129::1/64 stay tentative (unusable)`, for a device that is
/// down, where DAD cannot finish; empty when none waits.
fn waiting_text(device: &Device) -> String {
    let waiting: Vec<String> = device
        .unusable_addresses
        .iter()
        .filter(|(_, state)| state.tentative && !state.dad_failed)
        .map(|(address, _)| address.to_string())
        .collect();
    if waiting.is_empty() {
        String::new()
    } else {
        format!(
            "; DAD cannot finish, so {} stay tentative (unusable)",
            waiting.join(", ")
        )
    }
}

fn kind_name(device: &Device) -> String {
    device
        .kind
        .clone()
        .unwrap_or_else(|| "none (a physical interface?)".into())
}

fn local_text(local: Option<IpAddr>) -> String {
    match local {
        Some(address) => format!("local {address} ({})", Family::of(&address).name()),
        None => "no local address".into(),
    }
}

fn controller_text(device: &Device) -> String {
    match &device.controller {
        None => "enslaved to nothing".into(),
        Some(controller) => format!(
            "enslaved to {} ({})",
            controller.name,
            controller.kind.as_deref().unwrap_or("kind unknown")
        ),
    }
}

fn addresses_text(device: &Device, family: Family) -> String {
    let same: Vec<String> = device
        .addresses
        .iter()
        .filter(|a| Family::of(&a.addr()) == family)
        .map(|a| a.to_string())
        .collect();
    if same.is_empty() {
        format!("no {} address", family.name())
    } else {
        format!("not on the bridge (it has {})", same.join(", "))
    }
}
