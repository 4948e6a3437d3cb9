//! FRR 10.3's own JSON, recorded in the all-exit lab (tests/data/frr-10.3, its README says how):
//! the parsers read it, and the two faults it was recorded with are found in the report's words.

use super::*;
use crate::frr;
use crate::node::split_answers;
use crate::params::AddressFamily;
use std::path::{Path, PathBuf};

fn recorded(file: &str) -> Vec<u8> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests/data/frr-10.3", file]
        .iter()
        .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_of(file: &str) -> Value {
    serde_json::from_slice(&recorded(file)).unwrap()
}

#[test]
fn an_exit_nodes_neighbors_summary_and_vnis_are_read() {
    let vrfs = frr::parse_neighbors(&json_of("hv01-bgp-vrf-all-neighbors.json")).unwrap();
    let default = &vrfs["default"];
    let names: Vec<&str> = default.neighbors.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["198.51.100.132", "198.51.100.133", "nic5"]);
    let core = default.neighbor("nic5").unwrap();
    assert_eq!(core.state, "Established");
    assert_eq!((core.remote_as, core.local_as), (Some(65001), Some(65021)));
    assert_eq!(core.peer_group.as_deref(), Some("bgpv6"));
    assert_eq!(core.activated, [AddressFamily::Ipv6Unicast]);
    assert_eq!(core.negotiated, [AddressFamily::Ipv6Unicast]);
    assert_eq!(core.received_only, [AddressFamily::Ipv4Unicast]);
    let vtep = default.neighbor("198.51.100.132").unwrap();
    assert_eq!(vtep.negotiated, [AddressFamily::L2vpnEvpn]);
    assert_eq!(
        vtep.last_reset.as_deref(),
        Some("No AFI/SAFI activated for peer")
    );
    assert!(vrfs["vrf_tdemo"].neighbors.is_empty());

    let base = frr::parse_base_as(&json_of("hv01-bgp-vrf-all-summary.json")).unwrap();
    assert_eq!(base.get("default"), Some(&45689));
    assert_eq!(
        base.get("vrf_tdemo"),
        None,
        "a VRF without peers has no family in the summary"
    );

    let vnis = frr::parse_vnis(&json_of("hv01-evpn-vni-detail.json")).unwrap();
    assert_eq!(vnis.len(), 2);
    assert_eq!((vnis[0].vni, vnis[0].kind.as_str()), (10001, "L3"));
    assert_eq!(
        (vnis[1].vni, vnis[1].kind.as_str(), vnis[1].vrf.as_deref()),
        (11001, "L2", Some("vrf_tdemo"))
    );
    assert_eq!(
        vnis[1].remote_vteps,
        [
            "198.51.100.132".parse::<std::net::IpAddr>().unwrap(),
            "198.51.100.133".parse().unwrap()
        ]
    );
}

#[test]
fn routes_tables_and_advertised_routes_are_read() {
    let table = json_of("hv01-bgp-ipv6-unicast.json");
    let prefixes = frr::route_prefixes(&table, "routes", "show bgp ipv6 unicast json").unwrap();
    assert!(prefixes.contains(&"::/0".parse().unwrap()), "{prefixes:?}");
    let advertised = json_of("hv01-bgp-ipv6-unicast-neighbors-nic5-advertised-routes.json");
    let prefixes = frr::route_prefixes(&advertised, "advertisedRoutes", "x").unwrap();
    let shown: Vec<String> = prefixes.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "::/0",
            "2001:db8:2::/64",
            "2001:db8:2::11/128",
            "2001:db8:2::12/128",
            "2001:db8:2::13/128"
        ]
    );
    // The core's default-originate is in bgpOriginatingDefaultNetwork, not in advertisedRoutes.
    let core = json_of("core-bgp-ipv6-unicast-neighbors-swp1-advertised-routes.json");
    let prefixes = frr::route_prefixes(&core, "advertisedRoutes", "x").unwrap();
    assert!(prefixes.contains(&"::/0".parse().unwrap()), "{prefixes:?}");
    // The core's view of the nodes: IPv4 advertised by the core, not activated by them.
    let vrfs = frr::parse_neighbors(&json_of("core-bgp-vrf-all-neighbors.json")).unwrap();
    let swp1 = vrfs["default"].neighbor("swp1").unwrap();
    assert_eq!(
        (swp1.remote_as, swp1.peer_group.as_deref()),
        (Some(65021), Some("fabric"))
    );
    assert_eq!(swp1.negotiated, [AddressFamily::Ipv6Unicast]);
    assert_eq!(
        frr::parse_base_as(&json_of("core-bgp-vrf-all-summary.json")).unwrap()["default"],
        65001
    );
}

#[test]
fn advertised_routes_of_a_family_not_activated_are_not_json_so_they_are_never_asked_for() {
    let out = recorded("hv01-bgp-ipv4-unicast-neighbors-nic5-advertised-routes.json");
    let err =
        split_answers(Path::new("/usr/bin/vtysh"), &["show …".to_string()], &out).unwrap_err();
    assert!(err.contains("did not print JSON"), "{err}");
}

#[test]
fn the_lab_nodes_two_faults_are_found_in_the_reports_words() {
    let route = |af: &str| observe::routes_command("default", "nic5", af, true);
    let mut fake = FakeVtysh::default();
    fake.answer(NEIGHBORS, json_of("hv01-bgp-vrf-all-neighbors.json"))
        .answer(SUMMARY, json_of("hv01-bgp-vrf-all-summary.json"))
        .answer(VNIS, json_of("hv01-evpn-vni-detail.json"))
        // Not recorded: an L3 VNI's next hops, constructed in FRR's shape.
        .answer(
            NEXT_HOPS,
            json!({"10001": {"numNextHops": 2,
            "198.51.100.132": {"nexthopIp": "198.51.100.132"},
            "198.51.100.133": {"nexthopIp": "198.51.100.133"}}}),
        )
        .answer(
            &route("ipv6_unicast"),
            json_of("hv01-bgp-ipv6-unicast-neighbors-nic5-advertised-routes.json"),
        );
    let args = json!({
        "fabric_ipv6_only": true,
        "peers": [
            {"peer": "bgpv6", "remote_as": 65001, "address_families": ["ipv4_unicast", "ipv6_unicast"], "advertises": "aggregates_only"},
            {"peer": "VTEP", "address_families": ["l2vpn_evpn"]}
        ],
        "vnis": [
            {"vni": 11001, "remote_vteps": ["198.51.100.132", "198.51.100.133"]},
            {"vni": 10001, "remote_vteps": ["198.51.100.132", "198.51.100.133"]}
        ]
    });
    let report = assert_on(&mut fake, args).unwrap();
    assert_eq!(
        lines(&report),
        [
            "peer nic5 in VRF default, member of peer group bgpv6: expected address family ipv4_unicast negotiated, found IPv4 unicast not activated (the peer offers it): the activation fault of an IPv6-only fabric (IPv6 defaults arrive, IPv4 ones do not: FRR activates IPv4 only by default on IPv4 sessions); add `neighbor bgpv6 activate` under `address-family ipv4 unicast` of `router bgp 45689`",
            "peer nic5 in VRF default, member of peer group bgpv6: expected only aggregates advertised (no /32, no /128, no default), found advertised: 2001:db8:2::11/128, 2001:db8:2::12/128, 2001:db8:2::13/128, ::/0; filter what goes to it: an outbound prefix-list and route-map that permit only the tenant subnets' aggregates, applied with `neighbor bgpv6 route-map <NAME> out` under both `address-family ipv4 unicast` and `address-family ipv6 unicast` of `router bgp 45689`",
        ]
    );
    // Only the negotiated family's advertised routes were asked for.
    assert_eq!(fake.runs[1], [route("ipv6_unicast")]);
    let core = &report.peers[0];
    assert_eq!(core.prefixes_received.get("ipv6_unicast"), Some(&2));
    assert_eq!(report.peers.len(), 3);
}

#[test]
fn the_core_announcing_the_base_as_from_both_sides_in_the_lab() {
    // The node refused the core's OPEN; by the time of the read FRR had overwritten the
    // notification it sent with "Waiting for peer OPEN".
    let mut node = FakeVtysh::default();
    node.answer(
        NEIGHBORS,
        json_of("core-as-hv01-bgp-vrf-all-neighbors.json"),
    )
    .answer(SUMMARY, json_of("core-as-hv01-bgp-vrf-all-summary.json"));
    let report = assert_on(
        &mut node,
        json!({"peers": [{"peer": "bgpv6", "remote_as": 65001}]}),
    )
    .unwrap();
    assert_eq!(
        lines(&report),
        ["peer nic5 in VRF default, member of peer group bgpv6: expected the session Established, found state Idle; last reset: Waiting for peer OPEN; bgpv6 announces an AS this node refuses (FRR: Waiting for peer OPEN after 8 OPENs received and 6 notifications sent; the peer's `show bgp neighbors` names the notification, bad peer AS when it is its AS), most likely AS 45689, this node's base AS (or 65021, its local-as), which `remote-as external` refuses: give bgpv6 an AS of its own; or an AS other than `neighbor bgpv6 remote-as` under `router bgp 45689` names (the plan expects AS 65001): make the two agree"]
    );
    // The core received the node's bad peer AS: it announces the nodes' base AS as its own.
    let mut core = FakeVtysh::default();
    core.answer(
        NEIGHBORS,
        json_of("core-as-core-bgp-vrf-all-neighbors.json"),
    )
    .answer(SUMMARY, json_of("core-as-core-bgp-vrf-all-summary.json"));
    let report = assert_on(&mut core, json!({"peers": [{"peer": "swp1"}]})).unwrap();
    assert_eq!(
        lines(&report),
        ["peer swp1 in VRF default: expected the session Established, found state Idle; last notification: OPEN Message Error/Bad Peer AS (code/subcode 0202); last reset: BGP Notification received; swp1 refuses AS 45689, the AS this node announces to it (bad peer AS, notification received): swp1 expects another AS for this node, or AS 45689 is swp1's own: give this node an AS of its own toward swp1 (`neighbor swp1 local-as`), or fix `remote-as` for this node on swp1"]
    );
}

#[test]
fn the_lab_node_once_fixed_passes() {
    let route = |af: &str| observe::routes_command("default", "nic5", af, true);
    let mut fake = FakeVtysh::default();
    fake.answer(
        NEIGHBORS,
        json_of("healthy-hv01-bgp-vrf-all-neighbors.json"),
    )
    .answer(SUMMARY, json_of("healthy-hv01-bgp-vrf-all-summary.json"))
    .answer(VNIS, json_of("healthy-hv01-evpn-vni-detail.json"))
    // Not recorded: the L3 VNI's next hops (not asserted here).
    .answer(NEXT_HOPS, json!({}))
    .answer(
        &route("ipv4_unicast"),
        json_of("healthy-hv01-bgp-ipv4-unicast-neighbors-nic5-advertised-routes.json"),
    )
    .answer(
        &route("ipv6_unicast"),
        json_of("healthy-hv01-bgp-ipv6-unicast-neighbors-nic5-advertised-routes.json"),
    );
    let args = json!({
        "fabric_ipv6_only": true,
        "peers": [
            {"peer": "bgpv6", "remote_as": 65001, "address_families": ["ipv4_unicast", "ipv6_unicast"], "advertises": "aggregates_only"},
            {"peer": "VTEP", "address_families": ["l2vpn_evpn"]}
        ],
        "vnis": [{"vni": 11001, "remote_vteps": ["198.51.100.133", "198.51.100.132"]}, {"vni": 10001}]
    });
    let report = assert_on(&mut fake, args).unwrap();
    assert_eq!(lines(&report), Vec::<String>::new());
    let core = &report.peers[0];
    assert_eq!(core.address_families, ["ipv4_unicast", "ipv6_unicast"]);
    assert_eq!(
        (core.advertised_host_routes.clone(), core.advertised_default),
        (Some(vec![]), Some(false))
    );
    assert_eq!(fake.runs[1], [route("ipv4_unicast"), route("ipv6_unicast")]);
}
