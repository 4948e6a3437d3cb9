//! The kernel comparison on a real kernel, in a network namespace of the test's own: `observe`
//! reads what was built there (links, VXLAN settings, addresses, the namespace's forwarding
//! sysctls) and `kernel_drift` names each difference, exactly once.
//!
//! This kernel has no VRF: the intent here leaves the EVPN zone's VRF, L3VNI device and bridge
//! out (their comparisons are unit-tested on constructed views; the lab covers real VRFs). Its
//! VNet still carries the EVPN rules: the VXLAN device's local address (the VTEP) and family,
//! the gateways, forwarding.

use std::net::IpAddr;

use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::test_support::TestNamespace;
use sdn_check::kernel_drift::kernel_drift;
use sdn_check::node::observe;
use sdn_check::{Finding, NodeIntent, SubnetIntent, VnetIntent, ZoneIntent, ZoneType};

const VTEP_V4: &str = "10.20.51.22";
const VTEP_V6: &str = "2001:db8:51::22";
/// The reload as every fix gives it: the collection's one advice, for this node.
fn reload_advice() -> String {
    deevnet_runtime::advice::reload_interfaces(deevnet_runtime::advice::THIS_NODE)
}

fn zone(name: &str, zone_type: ZoneType, vnets: Vec<VnetIntent>) -> ZoneIntent {
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
        vnets,
    }
}

fn vnet(name: &str, vni: Option<u32>, gateways: &[(&str, &str)]) -> VnetIntent {
    VnetIntent {
        name: name.into(),
        vni,
        vlan: None,
        vlan_aware: false,
        vxlan_device: vni.map(|_| format!("vxlan_{name}")),
        mtu: None,
        subnets: gateways
            .iter()
            .map(|(cidr, gateway)| SubnetIntent {
                cidr: cidr.parse().unwrap(),
                gateway: Some(gateway.parse().unwrap()),
                snat: false,
            })
            .collect(),
    }
}

/// EVPN zone tdemo (VTEP `vtep`, MTU 1450; VNet tdemo0 with an IPv4 and an IPv6 gateway), simple
/// zone tsimple (VNet simple0, an IPv4 gateway), VXLAN zone tvx (port 4790, MTU 1400, VNet vx0).
fn intent(vtep: &str) -> NodeIntent {
    let mut evpn = zone(
        "tdemo",
        ZoneType::Evpn,
        vec![vnet(
            "tdemo0",
            Some(11000),
            &[
                ("10.20.129.0/24", "10.20.129.1"),
                ("fd20:129::/64", "fd20:129::1"),
            ],
        )],
    );
    evpn.vtep = Some(vtep.parse::<IpAddr>().unwrap());
    evpn.mtu = Some(1450);
    let simple = zone(
        "tsimple",
        ZoneType::Simple,
        vec![vnet("simple0", None, &[("10.30.0.0/24", "10.30.0.1")])],
    );
    let mut vxlan = zone("tvx", ZoneType::Vxlan, vec![vnet("vx0", Some(12000), &[])]);
    vxlan.vxlan_port = Some(4790);
    vxlan.mtu = Some(1400);
    NodeIntent {
        node: "hv02".into(),
        zones: vec![evpn, simple, vxlan],
        tenants: Vec::new(),
    }
}

/// `sysctl -w KEY=VALUE` inside the namespace (never the host's /proc/sys).
fn sysctl(ns: &TestNamespace, setting: &str) {
    let status = ns
        .command("sysctl")
        .args(["-q", "-w", setting])
        .status()
        .expect("running sysctl");
    assert!(status.success(), "sysctl -w {setting}");
}

/// The VXLAN device of tdemo0, as ifupdown2 makes it (`dstport` given explicitly).
fn add_vxlan_tdemo0(ns: &TestNamespace, vni: u32, local: &str) {
    ns.ip(&format!(
        "link add vxlan_tdemo0 type vxlan id {vni} local {local} dstport 4789 nolearning"
    ));
    ns.ip("link set vxlan_tdemo0 mtu 1450 master tdemo0 up");
}

/// What a node that applied [`intent`]`(vtep)` has, on an underlay veth with both VTEPs.
fn node(tag: &str, vtep: &str) -> TestNamespace {
    let ns = TestNamespace::new(&format!("dvn-sdn-{tag}"));
    for command in [
        "link add ul0 type veth peer name ul1",
        "addr add 10.20.51.22/24 dev ul0",
        "-6 addr add 2001:db8:51::22/64 dev ul0 nodad",
        "link set ul0 up",
        "link set ul1 up",
        "link add tdemo0 type bridge",
        "link set tdemo0 mtu 1450 up",
        "addr add 10.20.129.1/24 dev tdemo0",
        "-6 addr add fd20:129::1/64 dev tdemo0 nodad",
        "link add simple0 type bridge",
        "link set simple0 up",
        "addr add 10.30.0.1/24 dev simple0",
        "link add vx0 type bridge",
        "link add vxlan_vx0 type vxlan id 12000 dstport 4790 nolearning",
        "link set vxlan_vx0 mtu 1400 master vx0 up",
        "link set vx0 mtu 1400 up",
    ] {
        ns.ip(command);
    }
    add_vxlan_tdemo0(&ns, 11000, vtep);
    sysctl(&ns, "net.ipv4.conf.tdemo0.forwarding=1");
    sysctl(&ns, "net.ipv6.conf.tdemo0.forwarding=1");
    sysctl(&ns, "net.ipv4.conf.simple0.forwarding=1");
    ns
}

/// `observe` then `kernel_drift`, on a thread inside the namespace.
fn drift(ns: &TestNamespace, intent: NodeIntent) -> Vec<Finding> {
    ns.enter(move || {
        let netlink = Netlink::connect().expect("netlink");
        let view = observe(&netlink, &intent).expect("observe");
        kernel_drift(&intent, &view)
    })
}

fn only(ns: &TestNamespace, intent: NodeIntent) -> Finding {
    let findings = drift(ns, intent);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    findings.into_iter().next().unwrap()
}

#[test]
fn a_node_as_applied_has_no_finding_with_either_vtep_family() {
    for (tag, vtep) in [("ok4", VTEP_V4), ("ok6", VTEP_V6)] {
        let ns = node(tag, vtep);
        assert_eq!(drift(&ns, intent(vtep)), Vec::new(), "VTEP {vtep}");
    }
}

#[test]
fn observe_reads_the_namespace_devices() {
    let ns = node("view", VTEP_V6);
    let view = ns.enter(|| {
        let intent = intent(VTEP_V6);
        observe(&Netlink::connect().unwrap(), &intent).unwrap()
    });
    let names: Vec<&str> = view.devices.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["simple0", "tdemo0", "vx0", "vxlan_tdemo0", "vxlan_vx0"],
        "the named devices only (not ul0, lo)"
    );
    let vxlan = view.device("vxlan_tdemo0").unwrap();
    let info = vxlan.vxlan.unwrap();
    assert_eq!(
        (info.vni, info.local, info.port),
        (Some(11000), Some(VTEP_V6.parse().unwrap()), Some(4789))
    );
    assert_eq!(vxlan.controller.as_ref().unwrap().name, "tdemo0");
    assert_eq!(
        vxlan.controller.as_ref().unwrap().kind.as_deref(),
        Some("bridge")
    );
    let bridge = view.device("tdemo0").unwrap();
    assert!(bridge
        .addresses
        .contains(&"fd20:129::1/64".parse().unwrap()));
    assert_eq!(
        (bridge.forwarding_v4, bridge.forwarding_v6),
        (Some(true), Some(true))
    );
    // Read from the namespace's /proc/sys: the host has no simple0.
    let simple0 = view.device("simple0").unwrap();
    assert_eq!(
        (simple0.forwarding_v4, simple0.forwarding_v6),
        (Some(true), Some(false))
    );
    assert!(view.vrf_tables.is_empty(), "no VRF named, none read");
}

#[test]
fn an_ipv4_vxlan_device_after_the_vtep_moved_to_ipv6() {
    let reload = reload_advice();
    let ns = node("family", VTEP_V4);
    assert_eq!(
        only(&ns, intent(VTEP_V6)),
        Finding {
            object: "vxlan_tdemo0".into(),
            declared: "local 2001:db8:51::22 (IPv6)".into(),
            found: "local 10.20.51.22 (IPv4)".into(),
            fix: format!("re-create it: {reload}"),
            awaits_reload: false,
        }
    );
}

#[test]
fn a_wrong_vni() {
    let ns = node("vni", VTEP_V4);
    ns.ip("link del vxlan_tdemo0");
    add_vxlan_tdemo0(&ns, 11001, VTEP_V4);
    let finding = only(&ns, intent(VTEP_V4));
    assert_eq!(
        (
            finding.object.as_str(),
            finding.declared.as_str(),
            finding.found.as_str()
        ),
        ("vxlan_tdemo0", "VNI 11000", "VNI 11001")
    );
}

#[test]
fn a_device_made_without_a_port_has_the_kernels_8472() {
    let ns = node("port", VTEP_V4);
    ns.ip("link del vxlan_tdemo0");
    ns.ip("link add vxlan_tdemo0 type vxlan id 11000 local 10.20.51.22");
    ns.ip("link set vxlan_tdemo0 mtu 1450 master tdemo0 up");
    let finding = only(&ns, intent(VTEP_V4));
    assert_eq!(
        (finding.declared.as_str(), finding.found.as_str()),
        (
            "port 4789 (the default: the zone sets no vxlan-port)",
            "port 8472"
        )
    );
}

#[test]
fn a_wrong_mtu() {
    let reload = reload_advice();
    let ns = node("mtu", VTEP_V4);
    ns.ip("link set vx0 mtu 1300");
    assert_eq!(
        only(&ns, intent(VTEP_V4)),
        Finding {
            object: "vx0".into(),
            declared: "MTU 1400".into(),
            found: "MTU 1300".into(),
            fix: format!("set it: {reload}"),
            awaits_reload: false,
        }
    );
}

#[test]
fn a_bridge_without_its_gateway_address() {
    let reload = reload_advice();
    let ns = node("gateway", VTEP_V4);
    ns.ip("-6 addr del fd20:129::1/64 dev tdemo0");
    let finding = only(&ns, intent(VTEP_V4));
    assert_eq!(
        (
            finding.object.as_str(),
            finding.declared.as_str(),
            finding.fix.as_str()
        ),
        (
            "tdemo0",
            "gateway address fd20:129::1/64 (subnet fd20:129::/64)",
            format!("add it: {reload}").as_str()
        )
    );
    // The bridge's link-local address is there, the gateway is not.
    assert!(
        finding
            .found
            .starts_with("not on the bridge (it has fe80::"),
        "{finding:?}"
    );
}

#[test]
fn forwarding_off_on_a_gateway_bridge() {
    let reload = reload_advice();
    let ns = node("forward", VTEP_V4);
    sysctl(&ns, "net.ipv4.conf.simple0.forwarding=0");
    assert_eq!(
        only(&ns, intent(VTEP_V4)),
        Finding {
            object: "simple0".into(),
            declared: "IPv4 forwarding on (net.ipv4.conf.simple0.forwarding = 1)".into(),
            found: "net.ipv4.conf.simple0.forwarding = 0".into(),
            fix: format!("turn it on: {reload}"),
            awaits_reload: false,
        }
    );
}

#[test]
fn a_missing_device() {
    let ns = node("missing", VTEP_V4);
    ns.ip("link del simple0");
    let finding = only(&ns, intent(VTEP_V4));
    assert_eq!(
        (finding.object.as_str(), finding.found.as_str()),
        ("simple0", "no such device")
    );
}

#[test]
fn a_vxlan_device_outside_its_bridge() {
    let ns = node("nomaster", VTEP_V4);
    ns.ip("link set vxlan_vx0 nomaster");
    let findings = drift(&ns, intent(VTEP_V4));
    let summary: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f.object.as_str(), f.found.as_str()))
        .collect();
    // The kernel resets a bridge's MTU to 1500 when it loses its last port: a second,
    // true, finding.
    assert_eq!(
        summary,
        [("vxlan_vx0", "enslaved to nothing"), ("vx0", "MTU 1500")]
    );
}

#[test]
fn a_bridge_set_down() {
    let reload = reload_advice();
    let ns = node("down", VTEP_V4);
    ns.ip("link set simple0 down");
    assert_eq!(
        only(&ns, intent(VTEP_V4)),
        Finding {
            object: "simple0".into(),
            declared: "administratively up".into(),
            found: "administratively down".into(),
            fix: format!("bring it up: `ip link set simple0 up`, or {reload}"),
            awaits_reload: false,
        }
    );
}

/// Whether `address` on `device` is marked `dadfailed`, waiting for DAD (one probe, about a
/// second) to finish: polled, never timed.
fn dad_failed(ns: &TestNamespace, device: &str, address: &str) -> bool {
    for _ in 0..100 {
        let output = ns
            .command("ip")
            .args(["-6", "address", "show", "dev", device])
            .output()
            .expect("running ip");
        let text = String::from_utf8_lossy(&output.stdout);
        if text
            .lines()
            .any(|line| line.contains(address) && line.contains("dadfailed"))
        {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

#[test]
fn a_gateway_another_host_on_the_segment_holds() {
    let reload = reload_advice();
    let ns = node("dad", VTEP_V4);
    // A guest on the VNet that already holds the gateway's address answers the bridge's
    // duplicate address detection: the kernel marks the gateway `dadfailed` and never uses it.
    for command in [
        "-6 addr del fd20:129::1/64 dev tdemo0",
        "link add guest0 type veth peer name guest1",
        "link set guest0 mtu 1450 master tdemo0 up",
        "link set guest1 mtu 1450 up",
        "-6 addr add fd20:129::1/64 dev guest1 nodad",
        "-6 addr add fd20:129::1/64 dev tdemo0",
    ] {
        ns.ip(command);
    }
    assert!(
        dad_failed(&ns, "tdemo0", "fd20:129::1/64"),
        "no DAD failure"
    );
    assert_eq!(
        only(&ns, intent(VTEP_V4)),
        Finding {
            object: "tdemo0".into(),
            declared: "gateway address fd20:129::1/64 (subnet fd20:129::/64)".into(),
            found: "address fd20:129::1/64, DAD failed (`dadfailed`): another holder on the segment has it; the kernel does not use it".into(),
            fix: format!("remove fd20:129::1/64 from the other holder on the segment, then add it again: `ip address del fd20:129::1/64 dev tdemo0` and {reload}"),
            awaits_reload: false,
        }
    );
}
