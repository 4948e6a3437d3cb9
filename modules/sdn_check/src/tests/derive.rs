//! The generator's rules (docs/proxmox-sdn.md §3–§8) on each scenario.

use super::{sources, sources_with};
use crate::derive::{derive, subnet_cidr};
use crate::intent::{NodeIntent, Tenant, ZoneIntent, ZoneType};
use crate::interfaces::OwnInterfaces;
use crate::report::evaluate;
use crate::running_config::{reads, Object, ObjectKind, RunningConfig};
use std::net::IpAddr;

fn derive_for(scenario: &str, interfaces: &str, node: &str) -> (NodeIntent, Vec<String>) {
    let sources = sources_with(scenario, scenario, interfaces);
    let derived = derive(&sources.running, node, &sources.own).unwrap();
    (derived.intent, derived.skipped)
}

fn zone<'a>(intent: &'a NodeIntent, name: &str) -> &'a ZoneIntent {
    intent
        .zones
        .iter()
        .find(|z| z.name == name)
        .unwrap_or_else(|| panic!("zone {name} in {:?}", intent.zones))
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

/// §3, §4, §5, §6: hv02 is tdemo's (primary) exit node and a member of tprod; tedge's
/// `nodes` leaves hv02 out; the VTEP is the peer that is hv02's own address; tdemo's MTU is
/// vmbr0's 9000 minus 50, tprod's its own 1400.
#[test]
fn evpn_zones_of_a_node_with_exit_primary_and_local_routing() {
    let (intent, skipped) = derive_for("evpn", "interfaces", "hv02");
    assert_eq!(skipped, Vec::<String>::new());
    let names: Vec<&str> = intent.zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(names, ["tdemo", "tprod"], "tedge's nodes leave hv02 out");

    let tdemo = zone(&intent, "tdemo");
    assert_eq!(tdemo.zone_type, ZoneType::Evpn);
    assert_eq!(tdemo.vrf.as_deref(), Some("vrf_tdemo"));
    assert_eq!(tdemo.l3vni, Some(10000));
    assert_eq!(tdemo.l3vni_vxlan.as_deref(), Some("vrfvx_tdemo"));
    assert_eq!(tdemo.l3vni_bridge.as_deref(), Some("vrfbr_tdemo"));
    assert!(tdemo.exit_node);
    assert_eq!(tdemo.primary_exit_node.as_deref(), Some("hv02"));
    assert!(!tdemo.local_routing);
    assert_eq!(tdemo.vtep, Some(ip("10.20.51.22")));
    assert_eq!(tdemo.vxlan_port, None);
    assert_eq!(
        tdemo.mtu,
        Some(8950),
        "vmbr0 carries the VTEP with mtu 9000"
    );
    assert!(tdemo.generated);
    let vnet = &tdemo.vnets[0];
    assert_eq!(vnet.name, "tdemo0");
    assert_eq!(vnet.vni, Some(11000));
    assert_eq!(vnet.vlan, None);
    assert_eq!(vnet.vxlan_device.as_deref(), Some("vxlan_tdemo0"));
    assert_eq!(vnet.mtu, Some(8950));
    let subnets: Vec<(String, Option<IpAddr>, bool)> = vnet
        .subnets
        .iter()
        .map(|s| (s.cidr.to_string(), s.gateway, s.snat))
        .collect();
    assert_eq!(
        subnets,
        [
            ("10.20.129.0/24".into(), Some(ip("10.20.129.1")), true),
            (
                "2001:db8:129::/64".into(),
                Some(ip("2001:db8:129::1")),
                false
            ),
        ]
    );

    let tprod = zone(&intent, "tprod");
    assert!(!tprod.exit_node, "hv02 is not in tprod's exitnodes");
    assert!(tprod.local_routing);
    assert_eq!(tprod.primary_exit_node, None);
    assert_eq!(tprod.mtu, Some(1400), "the zone's own mtu wins");
    assert_eq!(tprod.vnets[0].mtu, Some(1400));

    assert_eq!(
        intent.tenants,
        [
            Tenant {
                name: "tdemo".into(),
                vrf: "vrf_tdemo".into(),
                l3vni_bridge: "vrfbr_tdemo".into(),
                exit_node: true
            },
            Tenant {
                name: "tprod".into(),
                vrf: "vrf_tprod".into(),
                l3vni_bridge: "vrfbr_tprod".into(),
                exit_node: false
            },
        ]
    );
}

/// §3, §5: on hv01 (address + netmask form, no mtu) all three zones apply, MTU 1450 by default.
#[test]
fn evpn_zones_of_another_node_default_mtu() {
    let (intent, _) = derive_for("evpn", "interfaces.hv01", "hv01");
    let names: Vec<&str> = intent.zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(names, ["tdemo", "tedge", "tprod"]);
    assert_eq!(zone(&intent, "tdemo").vtep, Some(ip("10.20.51.21")));
    assert_eq!(zone(&intent, "tdemo").mtu, Some(1450));
    assert!(!zone(&intent, "tdemo").exit_node);
    assert!(zone(&intent, "tedge").exit_node);
    assert!(zone(&intent, "tprod").exit_node);
}

/// §4: an IPv6 underlay: the VTEP is hv02's IPv6 peer address, MTU its stanza's 1600 - 50.
/// On hv01 the BGP controller's loopback (dummy0) carries the VTEP and its MTU.
#[test]
fn evpn_ipv6_underlay_and_bgp_loopback() {
    let (intent, skipped) = derive_for("ipv6", "interfaces", "hv02");
    assert_eq!(skipped, Vec::<String>::new());
    let tv6 = zone(&intent, "tv6");
    assert_eq!(tv6.vtep, Some(ip("2001:db8:51::22")));
    assert_eq!(tv6.mtu, Some(1550));
    assert!(!tv6.exit_node);

    let (intent, _) = intent_hv01_ipv6();
    let tv6 = zone(&intent, "tv6");
    assert_eq!(
        tv6.vtep,
        Some(ip("2001:db8:ff::1")),
        "the loopback's address"
    );
    assert_eq!(tv6.mtu, Some(8950));
    assert!(tv6.exit_node);
}

fn intent_hv01_ipv6() -> (NodeIntent, Vec<String>) {
    derive_for("ipv6", "interfaces.hv01", "hv01")
}

/// §4: fabric-backed controllers (PVE 9): the VTEP is the node's `ip` in the fabric,
/// OpenFabric and OSPF alike, and the VTEP interface's MTU plays no part (1450).
#[test]
fn evpn_and_vxlan_on_openfabric_and_ospf_fabrics() {
    let (intent, skipped) = derive_for("fabric", "interfaces", "hv02");
    assert_eq!(skipped, Vec::<String>::new());
    assert_eq!(zone(&intent, "zof").vtep, Some(ip("10.99.0.2")));
    assert_eq!(zone(&intent, "zof").mtu, Some(1450));
    assert!(!zone(&intent, "zof").exit_node);
    assert_eq!(zone(&intent, "zospf").vtep, Some(ip("10.98.0.2")));
    assert_eq!(zone(&intent, "zospf").l3vni, Some(20001));
    let zvxf = zone(&intent, "zvxf");
    assert_eq!(zvxf.zone_type, ZoneType::Vxlan);
    assert_eq!(zvxf.vtep, Some(ip("10.99.0.2")));
    assert_eq!(zvxf.vnets[0].vni, Some(700));

    // hv01 is in the OpenFabric but not in the OSPF fabric: no VTEP there, and said so.
    let (intent, skipped) = derive_for("fabric", "interfaces", "hv01");
    assert_eq!(zone(&intent, "zof").vtep, Some(ip("10.99.0.1")));
    assert!(zone(&intent, "zof").exit_node);
    assert_eq!(zone(&intent, "zospf").vtep, None);
    assert_eq!(
        skipped,
        ["zone zospf: node hv01 has no ip in fabric ospf1; Proxmox configures no VTEP for it"]
    );
}

/// §6, §7, §8: simple, VLAN, QinQ and VXLAN zones; a zone of another node; an unknown zone
/// type and an unknown key, skipped and said so.
#[test]
fn simple_vlan_qinq_and_vxlan_zones() {
    let (intent, skipped) = derive_for("zones", "interfaces", "hv02");
    let names: Vec<&str> = intent.zones.iter().map(|z| z.name.as_str()).collect();
    assert_eq!(names, ["zfoo", "zqinq", "zsimple", "zvlan", "zvx"]);
    assert_eq!(
        skipped,
        [
            "zone z9: type 'faucet' is not one sdn_check knows; skipped",
            "zone zfoo: key 'frobnicate' is not one sdn_check knows for a simple zone; skipped",
        ]
    );
    assert!(intent.tenants.is_empty(), "no EVPN zone");

    let simple = zone(&intent, "zsimple");
    assert_eq!(simple.zone_type, ZoneType::Simple);
    assert_eq!(
        (simple.vrf.as_deref(), simple.mtu, simple.vtep),
        (None, None, None)
    );
    let vnet = &simple.vnets[0];
    assert!(vnet.vlan_aware);
    assert_eq!(
        (vnet.vni, vnet.vlan, vnet.vxlan_device.as_deref()),
        (None, None, None)
    );
    assert_eq!(vnet.subnets[0].gateway, Some(ip("192.168.50.1")));
    assert!(vnet.subnets[0].snat);

    let vlan = zone(&intent, "zvlan");
    assert_eq!(vlan.vnets[0].vlan, Some(100));
    assert_eq!(vlan.vnets[0].vni, None);
    assert_eq!(
        vlan.vnets[0].subnets[0].gateway, None,
        "a VLAN zone puts no gateway on the node"
    );

    let qinq = zone(&intent, "zqinq");
    assert_eq!(qinq.mtu, Some(1496));
    let tags: Vec<(&str, Option<u16>)> = qinq
        .vnets
        .iter()
        .map(|v| (v.name.as_str(), v.vlan))
        .collect();
    assert_eq!(tags, [("qinq201", Some(201)), ("qinqnotag", None)]);

    let vx = zone(&intent, "zvx");
    assert_eq!(vx.vtep, Some(ip("10.20.51.22")));
    assert_eq!(vx.vxlan_port, Some(4790));
    assert_eq!(vx.mtu, Some(1450), "vmbr0 has no mtu");
    assert_eq!(vx.vrf, None);
    assert_eq!(vx.vnets[0].vni, Some(500));
    assert_eq!(vx.vnets[0].vxlan_device.as_deref(), Some("vxlan_vx500"));
    assert_eq!(vx.vnets[0].subnets[0].gateway, None);

    let foo = zone(&intent, "zfoo");
    assert!(!foo.generated, "a zone without a VNet gets no devices");
}

/// §4: no peer is the node's own address: no VTEP, said so, never guessed.
#[test]
fn a_node_without_a_peer_address_has_no_vtep() {
    let sources = sources("evpn");
    let derived = derive(
        &sources.running,
        "hv03",
        &crate::interfaces::own_interfaces("iface vmbr0 inet static\n\taddress 10.1.1.1/24\n", "x")
            .unwrap(),
    )
    .unwrap();
    let tdemo = derived
        .intent
        .zones
        .iter()
        .find(|z| z.name == "tdemo")
        .unwrap();
    assert_eq!(tdemo.vtep, None);
    assert_eq!(tdemo.mtu, Some(1450));
    assert!(
        derived.skipped[0].starts_with("zone tdemo: none of the peers is an address of node hv03")
    );
}

/// §6: subnet IDs.
#[test]
fn subnet_ids() {
    assert_eq!(
        subnet_cidr("tdemo", "tdemo-10.0.0.0-24").map(|c| c.to_string()),
        Some("10.0.0.0/24".into())
    );
    assert_eq!(
        subnet_cidr("tdemo", "tdemo-2001:db8::-64").map(|c| c.to_string()),
        Some("2001:db8::/64".into())
    );
    assert_eq!(subnet_cidr("tdemo", "tprod-10.0.0.0-24"), None);
    assert_eq!(subnet_cidr("tdemo", "tdemo-10.0.0.0"), None);
}

/// §3: a node the SDN does not name, and that is not this host, fails naming it.
#[test]
fn an_unknown_node_fails_naming_it() {
    let sources = sources("evpn");
    let error = evaluate(&sources, "hv09", "pve1", "sdn").unwrap_err();
    assert_eq!(
        error,
        "node: 'hv09' is neither this host (pve1) nor a node the SDN configuration names (hv01, hv02, hv03); give the node's name as Proxmox knows it (`pvecm nodes`), or leave node out for this host"
    );
    // This host is always known, named or not; fabric nodes and controllers' nodes are named.
    assert!(evaluate(&sources, "pve1", "pve1", "sdn").is_ok());
    let fabric = sources_with("fabric", "fabric", "interfaces");
    assert!(
        evaluate(&fabric, "hv02", "pve1", "sdn").is_ok(),
        "a fabric node"
    );
    assert!(evaluate(&fabric, "hv03", "pve1", "sdn").is_err());
}

/// §4: a fabric node with only `ip6` gets that VTEP; an EVPN zone whose controller is not in
/// the running configuration has none, said so.
#[test]
fn an_ipv6_only_fabric_node_and_a_missing_controller() {
    let config = crate::running_config::parse(
        r#"{"version": 1,
            "zones": {"ids": {"z6": {"type": "evpn", "controller": "c6", "vrf-vxlan": 5},
                              "zlost": {"type": "evpn", "controller": "gone", "vrf-vxlan": 6}}},
            "vnets": {"ids": {"v6": {"type": "vnet", "zone": "z6", "tag": 50}}},
            "controllers": {"ids": {"c6": {"type": "evpn", "asn": 65000, "fabric": "f6"}}},
            "fabrics": {"ids": {"f6": {"type": "openfabric_fabric", "ip6_prefix": "2001:db8:6::/64"},
                                "f6_hv02": {"type": "openfabric_node", "ip6": "2001:db8:6::2"}}}}"#,
        "running_config",
    )
    .unwrap();
    let derived = derive(&config, "hv02", &Default::default()).unwrap();
    let z6 = &derived.intent.zones[0];
    assert_eq!(z6.vtep, Some(ip("2001:db8:6::2")));
    assert_eq!(z6.mtu, Some(1450));
    let zlost = &derived.intent.zones[1];
    assert_eq!(zlost.vtep, None);
    assert!(!zlost.generated, "no VNet");
    assert_eq!(
        derived.skipped,
        ["zone zlost: controller 'gone' is not in the running configuration; its VTEP is unknown"]
    );
}

/// A running configuration of `zones` simple zones, each with `vnets_per_zone` VNets of one
/// subnet each (the subnet's gateway on the VNet's bridge).
fn many_vnets(zones: usize, vnets_per_zone: usize) -> RunningConfig {
    let object = |section_type: &str, values: serde_json::Value| Object {
        section_type: section_type.into(),
        values: values.as_object().cloned().unwrap_or_default(),
    };
    let mut config = RunningConfig {
        version: 1,
        ..RunningConfig::default()
    };
    for z in 0..zones {
        let zone = format!("z{z}");
        config.objects.entry(ObjectKind::Zone).or_default().insert(
            zone.clone(),
            object("simple", serde_json::json!({"type": "simple"})),
        );
        for v in 0..vnets_per_zone {
            let vnet = format!("v{z}x{v}");
            config.objects.entry(ObjectKind::Vnet).or_default().insert(
                vnet.clone(),
                object("vnet", serde_json::json!({"type": "vnet", "zone": zone})),
            );
            let (a, b) = (z / 256, z % 256);
            config.objects.entry(ObjectKind::Subnet).or_default().insert(
                format!("{zone}-10.{a}.{b}.{}-32", v % 256),
                object(
                    "subnet",
                    serde_json::json!({"type": "subnet", "vnet": vnet, "gateway": format!("10.{a}.{b}.{}", v % 256)}),
                ),
            );
        }
    }
    config
}

/// SD2: the derivation looks each VNet up by its zone and each subnet by its VNet, once: the
/// values it reads grow with the objects, not with their product (10,000 VNets in 1,000 zones
/// read 100 million values when each zone scanned every VNet and each VNet every subnet).
#[test]
fn ten_thousand_vnets_are_derived_reading_each_object_a_bounded_number_of_times() {
    let (zones, per_zone) = (1_000, 10);
    let config = many_vnets(zones, per_zone);
    reads::take();
    let derived = derive(&config, "hv02", &OwnInterfaces::default()).unwrap();
    let read = reads::take();
    let objects = (zones + 2 * zones * per_zone) as u64;
    assert!(
        read <= 16 * objects,
        "{read} values read for {objects} objects: a lookup scans the configuration again"
    );
    assert_eq!(derived.intent.zones.len(), zones);
    for zone in &derived.intent.zones {
        assert_eq!(zone.vnets.len(), per_zone, "{}", zone.name);
        for vnet in &zone.vnets {
            assert_eq!(vnet.subnets.len(), 1, "{}", vnet.name);
            assert!(vnet.subnets[0].gateway.is_some(), "{}", vnet.name);
        }
    }
}
