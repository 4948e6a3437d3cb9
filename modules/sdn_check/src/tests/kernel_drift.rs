//! The kernel comparison on constructed intents and views: nothing when all agrees (IPv4 and
//! IPv6 underlays, member and exit nodes), exactly one finding per difference otherwise.

use crate::finding::{reload_advice, Finding};
use crate::intent::{NodeIntent, SubnetIntent, Tenant, VnetIntent, ZoneIntent, ZoneType};
use crate::kernel_drift::*;
use crate::observation::{Controller, Device, KernelView, VrfTable};
use deevnet_runtime::netlink::{AddressState, OperState, VxlanInfo};
use ipnet::IpNet;
use std::net::IpAddr;

const VTEP_V4: &str = "10.20.51.22";
const VTEP_V6: &str = "2001:db8:51::22";

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn net(text: &str) -> IpNet {
    text.parse().unwrap()
}

fn subnet(cidr: &str, gateway: &str) -> SubnetIntent {
    SubnetIntent {
        cidr: net(cidr),
        gateway: Some(ip(gateway)),
        snat: false,
    }
}

fn zone(name: &str, zone_type: ZoneType) -> ZoneIntent {
    ZoneIntent {
        name: name.into(),
        zone_type,
        vrf: None,
        l3vni: None,
        l3vni_vxlan: None,
        l3vni_bridge: None,
        exit_node: false,
        primary_exit_node: None,
        local_routing: false,
        vtep: None,
        vxlan_port: None,
        mtu: None,
        generated: true,
        vnets: Vec::new(),
    }
}

fn vnet(name: &str, vni: Option<u32>, subnets: Vec<SubnetIntent>) -> VnetIntent {
    VnetIntent {
        name: name.into(),
        vni,
        vlan: None,
        vlan_aware: false,
        vxlan_device: vni.map(|_| format!("vxlan_{name}")),
        mtu: None,
        subnets,
    }
}

/// hv02: EVPN zone tdemo (a member, VTEP `vtep`, MTU 1450) with VNet tdemo0 (an IPv4 and an
/// IPv6 subnet); simple zone tsimple with VNet simple0; VXLAN zone tvx (port 4790) with VNet
/// vx0; VLAN zone tvlan with VNet vlan0.
fn intent(vtep: &str) -> NodeIntent {
    let mut evpn = zone("tdemo", ZoneType::Evpn);
    evpn.vrf = Some("vrf_tdemo".into());
    evpn.l3vni = Some(10000);
    evpn.l3vni_vxlan = Some("vrfvx_tdemo".into());
    evpn.l3vni_bridge = Some("vrfbr_tdemo".into());
    evpn.vtep = Some(ip(vtep));
    evpn.mtu = Some(1450);
    evpn.vnets = vec![vnet(
        "tdemo0",
        Some(11000),
        vec![
            subnet("10.20.129.0/24", "10.20.129.1"),
            subnet("fd20:129::/64", "fd20:129::1"),
        ],
    )];
    let mut simple = zone("tsimple", ZoneType::Simple);
    simple.vnets = vec![vnet(
        "simple0",
        None,
        vec![subnet("10.30.0.0/24", "10.30.0.1")],
    )];
    let mut vxlan = zone("tvx", ZoneType::Vxlan);
    vxlan.vtep = Some(ip(vtep));
    vxlan.vxlan_port = Some(4790);
    vxlan.mtu = Some(1400);
    vxlan.vnets = vec![vnet("vx0", Some(12000), Vec::new())];
    let mut vlan = zone("tvlan", ZoneType::Vlan);
    vlan.vnets = vec![VnetIntent {
        vlan: Some(40),
        ..vnet("vlan0", None, Vec::new())
    }];
    NodeIntent {
        node: "hv02".into(),
        zones: vec![evpn, simple, vxlan, vlan],
        tenants: vec![Tenant {
            name: "tdemo".into(),
            vrf: "vrf_tdemo".into(),
            l3vni_bridge: "vrfbr_tdemo".into(),
            exit_node: false,
        }],
    }
}

fn device(name: &str, kind: &str, mtu: u32, controller: Option<(&str, &str)>) -> Device {
    Device {
        name: name.into(),
        kind: Some(kind.into()),
        mtu: Some(mtu),
        admin_up: true,
        oper_state: OperState::Up,
        controller: controller.map(|(name, kind)| Controller {
            name: name.into(),
            kind: Some(kind.into()),
        }),
        ..Device::default()
    }
}

fn vxlan(name: &str, vni: u32, local: Option<&str>, port: u16, mtu: u32, bridge: &str) -> Device {
    Device {
        vxlan: Some(VxlanInfo {
            vni: Some(vni),
            local: local.map(ip),
            port: Some(port),
        }),
        ..device(name, "vxlan", mtu, Some((bridge, "bridge")))
    }
}

/// What the kernel of a node that applied [`intent`] has.
fn agreeing(vtep: &str) -> KernelView {
    let mut vrf = device("vrf_tdemo", "vrf", 65575, None);
    vrf.vrf_table = Some(1001);
    let mut tdemo0 = device("tdemo0", "bridge", 1450, Some(("vrf_tdemo", "vrf")));
    tdemo0.addresses = vec![
        net("10.20.129.1/24"),
        net("fd20:129::1/64"),
        net("fe80::1/64"),
    ];
    tdemo0.forwarding_v4 = Some(true);
    tdemo0.forwarding_v6 = Some(true);
    let mut simple0 = device("simple0", "bridge", 1500, None);
    simple0.addresses = vec![net("10.30.0.1/24")];
    simple0.forwarding_v4 = Some(true);
    simple0.forwarding_v6 = Some(false);
    let devices = [
        vrf,
        vxlan("vrfvx_tdemo", 10000, Some(vtep), 4789, 1450, "vrfbr_tdemo"),
        device("vrfbr_tdemo", "bridge", 1450, Some(("vrf_tdemo", "vrf"))),
        vxlan("vxlan_tdemo0", 11000, Some(vtep), 4789, 1450, "tdemo0"),
        tdemo0,
        simple0,
        // VXLAN zones leave the local address unset.
        vxlan("vxlan_vx0", 12000, None, 4790, 1400, "vx0"),
        device("vx0", "bridge", 1400, None),
        device("vlan0", "bridge", 1500, None),
    ];
    KernelView {
        devices: devices.into_iter().map(|d| (d.name.clone(), d)).collect(),
        vrf_tables: [(
            "vrf_tdemo".to_string(),
            VrfTable {
                table: 1001,
                catch_all_v4: true,
            },
        )]
        .into(),
    }
}

fn device_mut<'v>(view: &'v mut KernelView, name: &str) -> &'v mut Device {
    view.devices.get_mut(name).unwrap()
}

/// The one finding of `view` against the IPv4 intent (fails unless there is exactly one).
fn only(intent: &NodeIntent, view: &KernelView) -> Finding {
    let findings = kernel_drift(intent, view);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    findings.into_iter().next().unwrap()
}

fn finding(object: &str, declared: &str, found: &str, fix: &str) -> Finding {
    Finding {
        object: object.into(),
        declared: declared.into(),
        found: found.into(),
        fix: fix.into(),
        awaits_reload: false,
    }
}

#[test]
fn nothing_when_the_kernel_agrees_for_either_underlay_family() {
    for vtep in [VTEP_V4, VTEP_V6] {
        assert_eq!(kernel_drift(&intent(vtep), &agreeing(vtep)), Vec::new());
    }
}

#[test]
fn nothing_on_an_exit_node_without_the_catch_all() {
    let mut intent = intent(VTEP_V4);
    intent.zones[0].exit_node = true;
    let mut view = agreeing(VTEP_V4);
    view.vrf_tables.get_mut("vrf_tdemo").unwrap().catch_all_v4 = false;
    assert_eq!(kernel_drift(&intent, &view), Vec::new());
}

#[test]
fn an_ipv4_vtep_device_under_an_ipv6_intent_is_re_created() {
    let reload = reload_advice();
    let findings = kernel_drift(&intent(VTEP_V6), &agreeing(VTEP_V4));
    assert_eq!(
        findings,
        ["vrfvx_tdemo", "vxlan_tdemo0"]
            .map(|object| finding(
                object,
                "local 2001:db8:51::22 (IPv6)",
                "local 10.20.51.22 (IPv4)",
                &format!("re-create it: {reload}"),
            ))
            .to_vec()
    );
}

#[test]
fn a_missing_local_address_and_another_address_of_the_family() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vxlan_tdemo0")
        .vxlan
        .as_mut()
        .unwrap()
        .local = None;
    assert_eq!(
        only(&intent, &view),
        finding(
            "vxlan_tdemo0",
            "local 10.20.51.22 (IPv4)",
            "no local address",
            &format!("re-create it: {reload}")
        )
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vrfvx_tdemo")
        .vxlan
        .as_mut()
        .unwrap()
        .local = Some(ip("10.20.51.99"));
    assert_eq!(only(&intent, &view).found, "local 10.20.51.99 (IPv4)");
}

#[test]
fn a_missing_vrf_is_one_finding_and_its_members_are_not_compared() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    view.devices.remove("vrf_tdemo");
    view.vrf_tables.clear();
    assert_eq!(
        only(&intent, &view),
        finding(
            "vrf_tdemo",
            "a vrf device: the VRF of zone tdemo",
            "no such device",
            &format!(
                "create it (if /etc/network/interfaces.d/sdn lacks it, \
                 apply the SDN: `pvesh set /cluster/sdn` first): {reload}"
            )
        )
    );
}

#[test]
fn a_device_of_another_kind_under_a_declared_name() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vrf_tdemo").kind = Some("bridge".into());
    view.vrf_tables.clear();
    assert_eq!(
        only(&intent, &view),
        finding(
            "vrf_tdemo",
            "a vrf device: the VRF of zone tdemo",
            "a device of kind bridge",
            &format!(
                "remove the device that holds the name (`ip link del vrf_tdemo`), then {reload}"
            )
        )
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vxlan_vx0").kind = None;
    assert_eq!(
        only(&intent, &view).found,
        "a device of kind none (a physical interface?)"
    );
}

#[test]
fn each_missing_device_is_named_with_its_role() {
    let intent = intent(VTEP_V4);
    for (name, declared) in [
        (
            "vrfvx_tdemo",
            "a vxlan device: the L3VNI VXLAN device of zone tdemo",
        ),
        (
            "vrfbr_tdemo",
            "a bridge device: the L3VNI bridge of zone tdemo",
        ),
        (
            "vxlan_tdemo0",
            "a vxlan device: the VXLAN device of VNet tdemo0",
        ),
        (
            "tdemo0",
            "a bridge device: the bridge of VNet tdemo0 (zone tdemo)",
        ),
        (
            "simple0",
            "a bridge device: the bridge of VNet simple0 (zone tsimple)",
        ),
        ("vxlan_vx0", "a vxlan device: the VXLAN device of VNet vx0"),
        (
            "vlan0",
            "a bridge device: the bridge of VNet vlan0 (zone tvlan)",
        ),
    ] {
        let mut view = agreeing(VTEP_V4);
        view.devices.remove(name);
        // The VXLAN device of a missing bridge is still a port of the name: the one finding
        // is the bridge.
        let found = only(&intent, &view);
        assert_eq!(
            (found.object.as_str(), found.declared.as_str()),
            (name, declared)
        );
        assert_eq!(found.found, "no such device");
    }
}

#[test]
fn a_wrong_vni_is_re_created() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vxlan_tdemo0")
        .vxlan
        .as_mut()
        .unwrap()
        .vni = Some(11001);
    assert_eq!(
        only(&intent, &view),
        finding(
            "vxlan_tdemo0",
            "VNI 11000",
            "VNI 11001",
            &format!("re-create it: {reload}")
        )
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vrfvx_tdemo")
        .vxlan
        .as_mut()
        .unwrap()
        .vni = Some(10001);
    assert_eq!(only(&intent, &view).declared, "VNI 10000");
}

#[test]
fn the_port_is_the_zones_or_4789() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    // Made without dstport: the kernel's own default.
    device_mut(&mut view, "vrfvx_tdemo")
        .vxlan
        .as_mut()
        .unwrap()
        .port = Some(8472);
    assert_eq!(
        only(&intent, &view),
        finding(
            "vrfvx_tdemo",
            "port 4789 (the default: the zone sets no vxlan-port)",
            "port 8472",
            &format!("re-create it: {reload}")
        )
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vxlan_vx0")
        .vxlan
        .as_mut()
        .unwrap()
        .port = Some(4789);
    assert_eq!(
        (only(&intent, &view).declared, only(&intent, &view).found),
        ("port 4790".to_string(), "port 4789".to_string())
    );
}

#[test]
fn mtus_that_differ_from_the_zones() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    for name in ["vrfvx_tdemo", "vrfbr_tdemo", "vxlan_tdemo0", "tdemo0"] {
        let mut view = agreeing(VTEP_V4);
        device_mut(&mut view, name).mtu = Some(1500);
        assert_eq!(
            only(&intent, &view),
            finding(name, "MTU 1450", "MTU 1500", &format!("set it: {reload}"))
        );
    }
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vx0").mtu = Some(1450);
    assert_eq!(only(&intent, &view).declared, "MTU 1400");
    // A VNet's own MTU wins over the zone's.
    let mut intent = intent.clone();
    intent.zones[0].vnets[0].mtu = Some(1400);
    let findings = kernel_drift(&intent, &agreeing(VTEP_V4));
    assert_eq!(
        findings
            .iter()
            .map(|f| f.object.as_str())
            .collect::<Vec<_>>(),
        ["vxlan_tdemo0", "tdemo0"]
    );
    assert!(findings.iter().all(|f| f.declared == "MTU 1400"));
}

#[test]
fn bridges_outside_the_zones_vrf() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0").controller = None;
    assert_eq!(
        only(&intent, &view),
        finding(
            "tdemo0",
            "in VRF vrf_tdemo",
            "enslaved to nothing",
            &format!("enslave it: {reload}")
        )
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vrfbr_tdemo").controller = Some(Controller {
        name: "vrf_other".into(),
        kind: Some("vrf".into()),
    });
    assert_eq!(only(&intent, &view).found, "enslaved to vrf_other (vrf)");
}

#[test]
fn vxlan_devices_outside_their_bridge() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "vrfvx_tdemo").controller = None;
    assert_eq!(
        only(&intent, &view),
        finding(
            "vrfvx_tdemo",
            "a port of bridge vrfbr_tdemo",
            "enslaved to nothing",
            &format!("enslave it: {reload}")
        )
    );
}

#[test]
fn a_bridge_without_its_gateway_address() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0")
        .addresses
        .retain(|a| a.addr() != ip("10.20.129.1"));
    assert_eq!(
        only(&intent, &view),
        finding(
            "tdemo0",
            "gateway address 10.20.129.1/24 (subnet 10.20.129.0/24)",
            "no IPv4 address",
            &format!("add it: {reload}")
        )
    );
    // The IPv6 one, with another IPv6 address left; and the simple zone's.
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0")
        .addresses
        .retain(|a| a.addr() != ip("fd20:129::1"));
    assert_eq!(
        only(&intent, &view).found,
        "not on the bridge (it has fe80::1/64)"
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "simple0").addresses = vec![net("10.30.0.1/16")];
    assert_eq!(
        (only(&intent, &view).object, only(&intent, &view).found),
        ("simple0".to_string(), "address 10.30.0.1/16".to_string())
    );
}

#[test]
fn forwarding_off_on_a_bridge_with_a_gateway() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0").forwarding_v4 = Some(false);
    assert_eq!(
        only(&intent, &view),
        finding(
            "tdemo0",
            "IPv4 forwarding on (net.ipv4.conf.tdemo0.forwarding = 1)",
            "net.ipv4.conf.tdemo0.forwarding = 0",
            &format!("turn it on: {reload}")
        )
    );
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0").forwarding_v6 = None;
    assert_eq!(
        only(&intent, &view).found,
        "no net.ipv6.conf.tdemo0.forwarding (is IPv6 off?)"
    );
    // simple0 has no IPv6 gateway: its IPv6 forwarding is not declared, so not compared.
    assert_eq!(
        agreeing(VTEP_V4).device("simple0").unwrap().forwarding_v6,
        Some(false)
    );
}

#[test]
fn the_catch_all_missing_on_a_member() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    view.vrf_tables.get_mut("vrf_tdemo").unwrap().catch_all_v4 = false;
    assert_eq!(
        only(&intent, &view),
        finding(
            "vrf_tdemo",
            "the IPv4 catch-all (unreachable default metric 4278198272 in table 1001): this node \
             is a member of zone tdemo, not an exit node",
            "no catch-all: lookups fall through to the main table",
            &format!(
                "add it (the VRF's post-up runs `ip route add vrf \
                 vrf_tdemo unreachable default metric 4278198272` on member nodes): {reload}"
            )
        )
    );
}

#[test]
fn the_catch_all_present_on_an_exit_node() {
    let reload = reload_advice();
    let mut intent = intent(VTEP_V4);
    intent.zones[0].exit_node = true;
    assert_eq!(
        only(&intent, &agreeing(VTEP_V4)),
        finding(
            "vrf_tdemo",
            "no IPv4 catch-all: this node is an exit node of zone tdemo",
            "the catch-all (unreachable default metric 4278198272 in table 1001)",
            &format!(
                "remove it: `ip route del vrf vrf_tdemo unreachable default metric 4278198272` \
                 (what the VRF's post-up does on exit nodes), or {reload}"
            )
        )
    );
}

#[test]
fn a_zone_without_vnets_has_no_devices_to_compare() {
    let mut intent = intent(VTEP_V4);
    for zone in &mut intent.zones {
        zone.generated = false;
    }
    assert_eq!(kernel_drift(&intent, &KernelView::default()), Vec::new());
    // The same zones, generated, against an empty kernel: each device is missing.
    let generated = self::intent(VTEP_V4);
    assert!(!kernel_drift(&generated, &KernelView::default()).is_empty());
}

const TENTATIVE: AddressState = AddressState {
    tentative: true,
    dad_failed: false,
};
const DAD_FAILED: AddressState = AddressState {
    tentative: true,
    dad_failed: true,
};

#[test]
fn a_bridge_set_down_is_drift_and_names_the_gateway_that_waits_on_it() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    let tdemo0 = device_mut(&mut view, "tdemo0");
    tdemo0.admin_up = false;
    tdemo0.oper_state = OperState::Down;
    tdemo0
        .unusable_addresses
        .insert(net("fd20:129::1/64"), TENTATIVE);
    assert_eq!(
        only(&intent, &view),
        finding(
            "tdemo0",
            "administratively up",
            "administratively down; DAD cannot finish, so fd20:129::1/64 stay tentative (unusable)",
            &format!("bring it up: `ip link set tdemo0 up`, or {reload}")
        )
    );
}

#[test]
fn every_kind_of_device_set_down_is_drift() {
    let intent = intent(VTEP_V4);
    for name in [
        "vrf_tdemo",
        "vrfvx_tdemo",
        "vrfbr_tdemo",
        "vxlan_tdemo0",
        "simple0",
        "vx0",
        "vxlan_vx0",
        "vlan0",
    ] {
        let mut view = agreeing(VTEP_V4);
        device_mut(&mut view, name).admin_up = false;
        let findings = kernel_drift(&intent, &view);
        assert_eq!(findings.len(), 1, "{name}: {findings:#?}");
        assert_eq!(
            (findings[0].object.as_str(), findings[0].found.as_str()),
            (name, "administratively down"),
        );
    }
}

#[test]
fn a_dad_failed_gateway_is_drift() {
    let reload = reload_advice();
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0")
        .unusable_addresses
        .insert(net("fd20:129::1/64"), DAD_FAILED);
    assert_eq!(
        only(&intent, &view),
        finding(
            "tdemo0",
            "gateway address fd20:129::1/64 (subnet fd20:129::/64)",
            "address fd20:129::1/64, DAD failed (`dadfailed`): another holder on the segment has it; the kernel does not use it",
            &format!("remove fd20:129::1/64 from the other holder on the segment, then add it again: `ip address del fd20:129::1/64 dev tdemo0` and {reload}")
        )
    );
}

#[test]
fn a_tentative_gateway_on_a_bridge_up_with_carrier_is_dad_still_running() {
    let intent = intent(VTEP_V4);
    let mut view = agreeing(VTEP_V4);
    device_mut(&mut view, "tdemo0")
        .unusable_addresses
        .insert(net("fd20:129::1/64"), TENTATIVE);
    assert_eq!(kernel_drift(&intent, &view), Vec::new());
}

#[test]
fn a_bridge_without_carrier_is_not_drift_of_its_own() {
    // Carrier follows the VXLAN port (compared on its own) a moment after a reload, and a
    // simple zone's bridge has it only while a guest's port is up.
    let intent = intent(VTEP_V4);
    for bridge in ["tdemo0", "vrfbr_tdemo", "vx0", "simple0"] {
        let mut view = agreeing(VTEP_V4);
        device_mut(&mut view, bridge).oper_state = OperState::LowerLayerDown;
        assert_eq!(kernel_drift(&intent, &view), Vec::new(), "{bridge}");
    }
}

/// Every fix that reloads gives the collection's one advice (the preview, no reload over stale
/// entries, the guarded change), whole and last, and names no reload of its own (the Cozystack
/// guide: "Do not run ifreload -a on a host whose interfaces file has stale entries").
#[test]
fn every_fix_that_reloads_ends_with_the_one_advice() {
    let advice = reload_advice();
    let texts = [
        fix::create(),
        fix::replace("vrf_tdemo"),
        fix::recreate(),
        fix::reload("set it"),
        fix::bring_up("tdemo0"),
        fix::duplicate("fd20:129::1/64", "tdemo0"),
        fix::add_catch_all("vrf_tdemo"),
        fix::remove_catch_all("vrf_tdemo"),
        crate::pending::reload_fix(),
        crate::interfaces::applied_version("auto vrf_x\n", "interfaces_sdn=/s").unwrap_err(),
    ];
    for text in texts {
        let (own, _) = text
            .split_once(&advice)
            .unwrap_or_else(|| panic!("without the advice: {text}"));
        assert!(!own.contains("ifreload"), "a reload of its own: {text}");
        assert_eq!(text.matches("ifreload").count(), 1, "{text}");
    }
}
