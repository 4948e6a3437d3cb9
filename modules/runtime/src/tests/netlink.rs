//! Parsing of recorded kernel messages, the shape of the requests (the kernel traps), and a
//! real kernel in a network namespace of the test's own (`ip netns`; needs root).

use crate::netlink::*;
use netlink_packet_core::Parseable;
use netlink_packet_route::link::{LinkAttribute, LinkMessage};
use netlink_packet_route::route::{
    RouteAttribute, RouteFlags, RouteMessage, RouteProtocol, RouteType,
};
use netlink_packet_route::AddressFamily;
use std::net::{IpAddr, Ipv4Addr};

/// RTM_NEWLINK of `ip link add vrf-blue type vrf table 10` (kernel capture from
/// netlink-packet-route's test suite: this host's kernel has no VRF support).
const VRF_LINK: [u8; 40] = [
    0x00, 0x00, 0x01, 0x00, 0x22, 0x00, 0x00, 0x00, 0xc1, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x18, 0x00, 0x12, 0x00, 0x08, 0x00, 0x01, 0x00, 0x76, 0x72, 0x66, 0x00, 0x0c, 0x00, 0x02, 0x00,
    0x08, 0x00, 0x01, 0x00, 0x0a, 0x00, 0x00, 0x00,
];

/// RTM_NEWLINK of an 802.1ad VLAN link, id 101, parent ifindex 7, admin up.
const QINQ_VLAN_LINK: [u8; 60] = [
    0x00, 0x00, 0x01, 0x00, 0x22, 0x00, 0x00, 0x00, 0x43, 0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x08, 0x00, 0x05, 0x00, 0x07, 0x00, 0x00, 0x00, // IFLA_LINK 7
    0x24, 0x00, 0x12, 0x00, // IFLA_LINKINFO
    0x09, 0x00, 0x01, 0x00, b'v', b'l', b'a', b'n', 0x00, 0x00, 0x00, 0x00, // kind "vlan"
    0x14, 0x00, 0x02, 0x00, // IFLA_INFO_DATA
    0x06, 0x00, 0x05, 0x00, 0x88, 0xa8, 0x00, 0x00, // IFLA_VLAN_PROTOCOL 802.1ad
    0x06, 0x00, 0x01, 0x00, 0x65, 0x00, 0x00, 0x00, // IFLA_VLAN_ID 101
];

#[test]
fn vrf_links_carry_their_table() {
    let message = LinkMessage::parse(VRF_LINK.as_slice()).unwrap();
    let link = link_from_message(&message);
    assert_eq!(link.index, 34);
    assert!(link.is_vrf());
    assert_eq!(link.vrf_table, Some(10));
}

#[test]
fn vlan_links_carry_tag_protocol_and_parent() {
    let message = LinkMessage::parse(QINQ_VLAN_LINK.as_slice()).unwrap();
    let link = link_from_message(&message);
    assert_eq!(link.kind.as_deref(), Some("vlan"));
    assert!(link.admin_up);
    assert_eq!(link.parent, Some(7));
    assert_eq!(
        link.vlan,
        Some(Vlan {
            id: 101,
            protocol: Some(VlanProtocol::Dot1Ad)
        })
    );
    assert_eq!(VlanProtocol::Dot1Ad.name(), "802.1ad");
}

#[test]
fn bridge_vlan_settings_and_ports_are_read() {
    use netlink_packet_route::link::{InfoBridge, InfoData, InfoKind, InfoPortKind, LinkInfo};
    let mut bridge = LinkMessage::default();
    bridge.header.index = 4;
    bridge.attributes = vec![
        LinkAttribute::IfName("vmbr0".into()),
        LinkAttribute::LinkInfo(vec![
            LinkInfo::Kind(InfoKind::Bridge),
            LinkInfo::Data(InfoData::Bridge(vec![
                InfoBridge::VlanFiltering(true),
                InfoBridge::VlanProtocol(netlink_packet_route::link::VlanProtocol::Ieee8021Ad),
                InfoBridge::VlanDefaultPvid(1),
            ])),
        ]),
    ];
    let mut port = LinkMessage::default();
    port.header.index = 6;
    port.attributes = vec![
        LinkAttribute::IfName("eno1".into()),
        LinkAttribute::Controller(4),
        LinkAttribute::LinkInfo(vec![LinkInfo::PortKind(InfoPortKind::Bridge)]),
    ];
    let links = Links::new(vec![link_from_message(&port), link_from_message(&bridge)]);
    assert_eq!(
        links.by_name("vmbr0").unwrap().bridge,
        Some(BridgeVlanSettings {
            vlan_filtering: Some(true),
            vlan_protocol: Some(VlanProtocol::Dot1Ad),
            default_pvid: Some(1),
        })
    );
    let eno1 = links.by_index(6).unwrap();
    assert_eq!(eno1.port_kind.as_deref(), Some("bridge"));
    assert_eq!(links.ports_of(4).map(|l| l.index).collect::<Vec<_>>(), [6]);
    assert_eq!(links.vrf_of(eno1), None, "a bridge is not a VRF");
    assert_eq!(links.name_of(99), "ifindex 99");
}

#[test]
fn bonds_their_ports_and_mtu_limits_are_read() {
    use netlink_packet_route::link::{
        BondMode, BondPortState, InfoBond, InfoBondPort, InfoData, InfoKind, InfoPortData,
        InfoPortKind, LinkInfo, MiiStatus,
    };
    let mut bond = LinkMessage::default();
    bond.header.index = 5;
    bond.attributes = vec![
        LinkAttribute::MinMtu(68),
        LinkAttribute::MaxMtu(65535),
        LinkAttribute::LinkInfo(vec![
            LinkInfo::Kind(InfoKind::Bond),
            LinkInfo::Data(InfoData::Bond(vec![
                InfoBond::Mode(BondMode::ActiveBackup),
                InfoBond::ActivePort(6),
                InfoBond::Primary(6),
            ])),
        ]),
    ];
    let link = link_from_message(&bond);
    assert_eq!((link.min_mtu, link.max_mtu), (Some(68), Some(65535)));
    assert_eq!(link.kind.as_deref(), Some("bond"));
    assert_eq!(
        link.bond,
        Some(BondInfo {
            mode: Some("active-backup".into()),
            active_port: Some(6),
            primary: Some(6),
        })
    );
    assert_eq!(link.bond_port, None);

    let mut port = LinkMessage::default();
    port.header.index = 7;
    port.attributes = vec![LinkAttribute::LinkInfo(vec![
        LinkInfo::PortKind(InfoPortKind::Bond),
        LinkInfo::PortData(InfoPortData::BondPort(vec![
            InfoBondPort::BondPortState(BondPortState::Backup),
            InfoBondPort::MiiStatus(MiiStatus::Up),
            InfoBondPort::PermHwaddr(vec![2, 0, 0, 0, 0, 7]),
        ])),
    ])];
    let link = link_from_message(&port);
    assert_eq!(link.port_kind.as_deref(), Some("bond"));
    assert_eq!(
        link.bond_port,
        Some(BondPortInfo {
            role: Some(BondRole::Backup),
            link_up: Some(true),
            permanent_mac: Some("02:00:00:00:00:07".into()),
        })
    );
    assert_eq!(link.bond, None);
    assert_eq!(BondRole::Backup.name(), "backup");
}

#[test]
fn vrf_membership_is_the_direct_controller() {
    let vrf = Link {
        index: 10,
        name: "vrf_tdemo".into(),
        kind: Some("vrf".into()),
        vrf_table: Some(1001),
        ..Link::default()
    };
    let member = Link {
        index: 11,
        name: "vmbr0.50".into(),
        controller: Some(10),
        ..Link::default()
    };
    let links = Links::new(vec![vrf, member]);
    assert_eq!(
        links
            .vrf_of(links.by_name("vmbr0.50").unwrap())
            .map(|l| l.index),
        Some(10)
    );
}

#[test]
fn dump_requests_filter_only_family_and_table() {
    let request = dump_request(Family::V4, 1001);
    assert_eq!(request.header.address_family, AddressFamily::Inet);
    // Any other header value is a kernel-side filter under strict checking.
    assert_eq!(request.header.protocol, RouteProtocol::Unspec);
    assert_eq!(request.header.kind, RouteType::Unspec);
    assert_eq!(request.header.table, 252, "RT_TABLE_COMPAT above 255");
    assert_eq!(request.attributes, vec![RouteAttribute::Table(1001)]);
    assert_eq!(dump_request(Family::V6, 254).header.table, 254);
}

#[test]
fn lookup_requests_ask_for_the_table_on_ipv4_only() {
    let v4 = lookup_request(&RouteQuery {
        oif: Some(12),
        ..RouteQuery::to(IpAddr::V4(Ipv4Addr::new(10, 20, 99, 5)))
    });
    assert_eq!(v4.header.flags, RouteFlags::LookupTable);
    assert_eq!(v4.header.destination_prefix_length, 32);
    assert_eq!(v4.header.source_prefix_length, 0);
    assert!(v4.attributes.contains(&RouteAttribute::Oif(12)));
    let v6 = lookup_request(&RouteQuery::to("2001:db8::1".parse().unwrap()));
    assert_eq!(v6.header.flags, RouteFlags::empty());
    assert_eq!(v6.header.destination_prefix_length, 128);
    assert!(!v6
        .attributes
        .iter()
        .any(|a| matches!(a, RouteAttribute::Oif(_))));
}

/// `ip route get DST from SRC iif DEV`: RTA_SRC with the host length (strict checking refuses
/// any other) and RTA_IIF, and no RTA_OIF unless asked.
#[test]
fn input_lookup_requests_carry_the_source_and_the_arrival_interface() {
    let source = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 8));
    let request = lookup_request(&RouteQuery {
        source: Some(source),
        iif: Some(7),
        ..RouteQuery::to(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 11)))
    });
    assert_eq!(request.header.source_prefix_length, 32);
    assert!(request
        .attributes
        .contains(&RouteAttribute::Source(source.into())));
    assert!(request.attributes.contains(&RouteAttribute::Iif(7)));
    assert!(!request
        .attributes
        .iter()
        .any(|a| matches!(a, RouteAttribute::Oif(_))));
    let v6 = lookup_request(&RouteQuery {
        source: Some("2001:db8::8".parse().unwrap()),
        ..RouteQuery::to("2001:db8::11".parse().unwrap())
    });
    assert_eq!(v6.header.source_prefix_length, 128);
    assert_eq!(Refusal::from_errno(libc::EXDEV), Some(Refusal::ReversePath));
}

#[test]
fn route_destinations_are_prefixes() {
    let mut message = RouteMessage::default();
    message.header.address_family = AddressFamily::Inet;
    let default = route_from_message(&message).unwrap();
    assert_eq!(default.destination, net("0.0.0.0/0"), "no RTA_DST: default");
    assert!(default.is_default());
    message.header.destination_prefix_length = 24;
    message
        .attributes
        .push(RouteAttribute::Destination(v4("10.20.0.0").into()));
    let subnet = route_from_message(&message).unwrap();
    assert_eq!(subnet.destination, net("10.20.0.0/24"));
    assert!(!subnet.is_default());
    message.header.destination_prefix_length = 33;
    assert_eq!(route_from_message(&message), None, "longer than IPv4's");

    let mut message = RouteMessage::default();
    message.header.address_family = AddressFamily::Inet6;
    assert_eq!(
        route_from_message(&message).unwrap().destination,
        net("::/0")
    );
    message.header.destination_prefix_length = 48;
    message.attributes.push(RouteAttribute::Destination(
        "2001:db8:10::".parse::<IpAddr>().unwrap().into(),
    ));
    let v6 = route_from_message(&message).unwrap();
    assert_eq!(v6.destination, net("2001:db8:10::/48"));
    assert_eq!(v6.family, Family::V6);
    message.attributes = vec![RouteAttribute::Destination(v4("10.20.0.0").into())];
    assert_eq!(
        route_from_message(&message),
        None,
        "an IPv4 RTA_DST in IPv6"
    );
}

#[test]
fn names_follow_iproute2() {
    assert_eq!(table_name(254), "main");
    assert_eq!(table_name(1001), "1001");
    assert_eq!(protocol_name(2), "kernel");
    assert_eq!(protocol_name(186), "bgp");
    assert_eq!(
        protocol_name(196),
        "static",
        "FRR's static routes (nexthop-vrf leaks)"
    );
    assert_eq!(protocol_name(77), "77");
    assert_eq!(
        Refusal::from_errno(libc::EHOSTUNREACH),
        Some(Refusal::Unreachable)
    );
    assert_eq!(Refusal::from_errno(libc::EPERM), None);
}

#[test]
fn vxlan_links_carry_vni_local_and_port() {
    use netlink_packet_route::link::{InfoData, InfoKind, InfoVxlan, LinkInfo};
    let vxlan = |local: InfoVxlan| {
        let mut message = LinkMessage::default();
        message.header.index = 9;
        message.attributes = vec![
            LinkAttribute::IfName("vrfvx_tdemo".into()),
            LinkAttribute::LinkInfo(vec![
                LinkInfo::Kind(InfoKind::Vxlan),
                LinkInfo::Data(InfoData::Vxlan(vec![
                    InfoVxlan::Id(10000),
                    local,
                    InfoVxlan::Port(4790),
                    InfoVxlan::Learning(false),
                ])),
            ]),
        ];
        link_from_message(&message).vxlan
    };
    assert_eq!(
        vxlan(InfoVxlan::Local(Ipv4Addr::new(10, 20, 51, 22))),
        Some(VxlanInfo {
            vni: Some(10000),
            local: Some(v4("10.20.51.22")),
            port: Some(4790),
        })
    );
    assert_eq!(
        vxlan(InfoVxlan::Local6("2001:db8:51::22".parse().unwrap())).and_then(|info| info.local),
        Some("2001:db8:51::22".parse().unwrap())
    );
    // Not a VXLAN link: no VXLAN settings.
    let mut bridge = LinkMessage::default();
    bridge.attributes = vec![LinkAttribute::IfName("vmbr0".into())];
    assert_eq!(link_from_message(&bridge).vxlan, None);
}

#[test]
fn addresses_are_the_interfaces_own_with_their_prefix() {
    use netlink_packet_route::address::{AddressAttribute, AddressMessage};
    let message = |family, prefix_len, attributes| {
        let mut message = AddressMessage::default();
        message.header.family = family;
        message.header.prefix_len = prefix_len;
        message.header.index = 7;
        message.attributes = attributes;
        message
    };
    // A point-to-point IPv4 address: IFA_LOCAL is ours, IFA_ADDRESS the peer's.
    let p2p = message(
        AddressFamily::Inet,
        32,
        vec![
            AddressAttribute::Address(v4("10.255.255.2")),
            AddressAttribute::Local(v4("10.255.255.1")),
        ],
    );
    assert_eq!(
        address_from_message(&p2p),
        Some(Address {
            index: 7,
            address: net("10.255.255.1/32"),
            state: AddressState::default(),
        })
    );
    let v6 = message(
        AddressFamily::Inet6,
        64,
        vec![AddressAttribute::Address("fd00::1".parse().unwrap())],
    );
    let v6 = address_from_message(&v6).unwrap();
    assert_eq!(v6.address, net("fd00::1/64"));
    assert_eq!(v6.family(), Family::V6);
    assert_eq!(
        address_from_message(&message(AddressFamily::Inet, 24, vec![])),
        None,
        "no address at all"
    );
    assert_eq!(
        address_from_message(&message(
            AddressFamily::Inet,
            40,
            vec![AddressAttribute::Local(v4("10.0.0.1"))]
        )),
        None,
        "a prefix longer than the family's"
    );
    assert_eq!(
        address_from_message(&message(
            AddressFamily::Packet,
            0,
            vec![AddressAttribute::Local(v4("10.0.0.1"))]
        )),
        None,
        "another family"
    );
}

#[test]
fn an_address_dad_failed_or_tentative_is_not_usable_by_either_flag_field() {
    use netlink_packet_route::address::{
        AddressAttribute, AddressFlags, AddressHeaderFlags, AddressMessage,
    };
    let message = |header: AddressHeaderFlags, attribute: Option<AddressFlags>| {
        let mut message = AddressMessage::default();
        message.header.family = AddressFamily::Inet6;
        message.header.prefix_len = 64;
        message.header.flags = header;
        message.attributes = vec![AddressAttribute::Address("fd00::1".parse().unwrap())];
        message
            .attributes
            .extend(attribute.map(AddressAttribute::Flags));
        address_from_message(&message).unwrap().state
    };
    let usable = message(AddressHeaderFlags::Permanent, None);
    assert!(usable.usable(), "{usable:?}");
    // The kernel sends both; either alone is read (IFA_FLAGS holds flags beyond the header's).
    let failed = message(AddressHeaderFlags::Dadfailed, None);
    assert!(failed.dad_failed && !failed.tentative && !failed.usable());
    let failed = message(
        AddressHeaderFlags::empty(),
        Some(AddressFlags::Dadfailed | AddressFlags::Tentative),
    );
    assert!(failed.dad_failed && failed.tentative && !failed.usable());
    let tentative = message(AddressHeaderFlags::Tentative, Some(AddressFlags::Tentative));
    assert!(tentative.tentative && !tentative.dad_failed && !tentative.usable());
}

// ---- a real kernel, in a namespace of the test's own ----

use crate::test_support::TestNamespace;

fn v4(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn net(text: &str) -> ipnet::IpNet {
    text.parse().unwrap()
}

/// veth0 (10.0.0.1/24, fd00::1/64) <-> veth1, a bridge br0 with port veth2; routes in main,
/// table 100 (steered to by rules, as a VRF's l3mdev rule would) and table 1000.
fn routed_namespace(tag: &str) -> TestNamespace {
    let ns = TestNamespace::new(&format!("dvn-nl-{tag}"));
    for command in [
        "link add veth0 type veth peer name veth1",
        "link add br0 type bridge",
        "link add veth2 type veth peer name veth3",
        "link set veth2 master br0",
        "link set veth0 mtu 1450",
        "link set veth0 up",
        "link set veth1 up",
        "link set veth2 up",
        "link set veth3 up",
        "link set br0 up",
        "addr add 10.0.0.1/24 dev veth0",
        "addr add 192.168.50.1/24 dev br0",
        "-6 addr add fd00::1/64 dev veth0 nodad",
        "route add default via 10.0.0.254 dev veth0",
        "route add 10.10.0.0/24 via 10.0.0.2 table 100",
        "route add unreachable 10.20.0.0/24 table 100",
        "route add blackhole 10.30.0.0/24 table 100",
        "route add 10.40.0.0/24 table 100 nexthop via 10.0.0.2 weight 1 nexthop via 10.0.0.3 weight 2",
        "route add 10.50.0.0/24 via 10.0.0.2 metric 50 table 100",
        "route add unreachable default metric 4278198272 table 100",
        "-6 route add 2001:db8:10::/48 via fd00::2 table 100",
        "route add 172.16.0.0/16 via 10.0.0.2 table 1000",
        "rule add to 10.10.0.0/16 lookup 100 pref 1000",
        "rule add to 10.20.0.0/16 lookup 100 pref 1000",
        "rule add to 10.30.0.0/16 lookup 100 pref 1000",
        "rule add to 172.16.0.0/16 lookup 1000 pref 1000",
        "-6 rule add to 2001:db8:10::/48 lookup 100 pref 1000",
    ] {
        ns.ip(command);
    }
    ns
}

#[test]
fn links_are_dumped_with_kind_controller_and_peer() {
    let ns = routed_namespace("links");
    ns.ip("link set veth0 alias marked-by-a-module");
    let links = ns.enter(|| Netlink::connect().unwrap().links().unwrap());
    let veth0 = links.by_name("veth0").unwrap();
    assert_eq!(veth0.kind.as_deref(), Some("veth"));
    assert_eq!(veth0.alias.as_deref(), Some("marked-by-a-module"));
    assert_eq!(veth0.mtu, Some(1450));
    assert!(veth0.admin_up);
    assert_eq!(veth0.parent, Some(links.by_name("veth1").unwrap().index));
    let br0 = links.by_name("br0").unwrap();
    assert_eq!(br0.kind.as_deref(), Some("bridge"));
    assert!(br0.bridge.is_some());
    assert_eq!(br0.alias, None);
    let veth2 = links.by_name("veth2").unwrap();
    assert_eq!(veth2.controller, Some(br0.index));
    assert_eq!(veth2.port_kind.as_deref(), Some("bridge"));
    assert_eq!(links.by_name("lo").unwrap().kind, None);
}

#[test]
fn table_dumps_keep_every_route_type_and_big_table_ids() {
    let ns = routed_namespace("routes");
    let (links, t100, t1000, t100_v6, missing, main) = ns.enter(|| {
        let netlink = Netlink::connect().unwrap();
        (
            netlink.links().unwrap(),
            netlink.routes(Family::V4, 100).unwrap(),
            netlink.routes(Family::V4, 1000).unwrap(),
            netlink.routes(Family::V6, 100).unwrap(),
            netlink.routes(Family::V4, 4242).unwrap(),
            netlink.routes(Family::V4, 254).unwrap(),
        )
    });
    let veth0 = links.by_name("veth0").unwrap().index;
    let by_destination = |destination: &str| {
        t100.iter()
            .find(|r| r.destination == net(destination))
            .unwrap_or_else(|| panic!("{destination} missing from {t100:#?}"))
    };
    let catch_all = by_destination("0.0.0.0/0");
    assert_eq!(catch_all.kind, RouteKind::Unreachable);
    assert!(catch_all.is_default());
    assert_eq!(catch_all.metric, Some(4278198272));
    assert_eq!(by_destination("10.20.0.0/24").kind, RouteKind::Unreachable);
    assert_eq!(by_destination("10.30.0.0/24").kind, RouteKind::Blackhole);
    let gateway_route = by_destination("10.10.0.0/24");
    assert_eq!(gateway_route.gateway, Some(v4("10.0.0.2")));
    assert_eq!(gateway_route.oif, Some(veth0));
    assert_eq!(gateway_route.destination.prefix_len(), 24);
    assert_eq!(protocol_name(gateway_route.protocol), "boot");
    assert_eq!(by_destination("10.50.0.0/24").metric, Some(50));
    let multipath = by_destination("10.40.0.0/24");
    assert_eq!(
        multipath.nexthops,
        vec![
            NextHop {
                gateway: Some(v4("10.0.0.2")),
                oif: veth0,
                weight: 1
            },
            NextHop {
                gateway: Some(v4("10.0.0.3")),
                oif: veth0,
                weight: 2
            },
        ]
    );
    assert_eq!(multipath.paths().len(), 2);
    assert!(t100
        .iter()
        .all(|r| r.table == 100 && r.family == Family::V4));

    assert_eq!(t1000.len(), 1);
    assert_eq!(t1000[0].table, 1000);
    assert_eq!(t1000[0].destination, net("172.16.0.0/16"));

    assert!(t100_v6
        .iter()
        .any(|r| r.gateway == Some("fd00::2".parse().unwrap()) && r.family == Family::V6));
    assert!(
        missing.is_empty(),
        "a table that does not exist has no routes"
    );
    assert!(main.iter().any(|r| r.is_default()
        && r.kind == RouteKind::Unicast
        && protocol_name(r.protocol) == "boot"));
    assert!(
        main.iter().any(|r| protocol_name(r.protocol) == "kernel"),
        "kernel routes are dumped too: {main:#?}"
    );
}

#[test]
fn lookups_name_the_table_that_answered_and_refusals() {
    let ns = routed_namespace("lookups");
    let (links, answers) = ns.enter(|| {
        let netlink = Netlink::connect().unwrap();
        let answers: Vec<Lookup> = [
            "8.8.8.8",
            "10.10.0.7",
            "172.16.1.1",
            "10.20.0.1",
            "10.30.0.1",
            "10.99.0.1",
            "2001:db8:10::1",
            "2001:db8:99::1",
        ]
        .iter()
        .map(|d| {
            netlink
                .route_get(&RouteQuery::to(d.parse().unwrap()))
                .unwrap()
        })
        .collect();
        (netlink.links().unwrap(), answers)
    });
    let veth0 = links.by_name("veth0").unwrap().index;
    let route = |i: usize| match &answers[i] {
        Lookup::Route(route) => route.clone(),
        other => panic!("answer {i}: {other:?}"),
    };
    let main = route(0);
    assert_eq!(
        (main.table, main.gateway, main.oif, main.kind),
        (254, Some(v4("10.0.0.254")), Some(veth0), RouteKind::Unicast)
    );
    assert_eq!(main.pref_source, Some(v4("10.0.0.1")));
    let table_100 = route(1);
    assert_eq!(
        (table_100.table, table_100.gateway),
        (100, Some(v4("10.0.0.2")))
    );
    assert_eq!(route(2).table, 1000, "a table above 255 is named in full");
    assert_eq!(answers[3], Lookup::Refused(Refusal::Unreachable));
    assert_eq!(answers[4], Lookup::Refused(Refusal::Blackhole));
    // 10.99.0.1 matches no rule to table 100: it leaves by main's default.
    assert_eq!(route(5).table, 254);
    let v6 = route(6);
    assert_eq!(
        (v6.family, v6.table, v6.gateway),
        (Family::V6, 100, Some("fd00::2".parse().unwrap()))
    );
    assert_eq!(answers[7], Lookup::Refused(Refusal::NoRoute));
    // Pinned to an interface, a lookup that finds no route there is assumed on-link (table 0).
    let br0 = links.by_name("br0").unwrap().index;
    let pinned = ns.enter(move || {
        Netlink::connect()
            .unwrap()
            .route_get(&RouteQuery {
                oif: Some(br0),
                ..RouteQuery::to(v4("8.8.8.8"))
            })
            .unwrap()
    });
    match pinned {
        Lookup::Route(route) => assert_eq!((route.table, route.oif), (0, Some(br0))),
        other => panic!("{other:?}"),
    }
}

/// `ip route get DST from SRC iif DEV` on this kernel: the route a forwarded packet takes, then
/// the errnos of the input path as measured (uname 6.18): forwarding off on the arrival device
/// is EHOSTUNREACH, and the reverse-path filter refusing the source is EINVAL (EXDEV before
/// 6.13, when the input path's drop reasons all became EINVAL).
#[test]
fn input_lookups_answer_as_for_a_packet_arriving_by_iif() {
    let ns = routed_namespace("input");
    ns.ip("route add 10.5.5.0/24 via 192.168.50.254 dev br0");
    let sysctl = |assignment: &str| {
        let status = ns.command("sysctl").args(["-qw", assignment]).status();
        assert!(status.unwrap().success(), "sysctl -w {assignment}");
    };
    sysctl("net.ipv4.conf.all.forwarding=1");
    sysctl("net.ipv4.conf.all.rp_filter=0");
    sysctl("net.ipv4.conf.veth0.rp_filter=0");
    let ask = |source: &str| {
        let source = v4(source);
        ns.enter(move || {
            let netlink = Netlink::connect().unwrap();
            let veth0 = netlink.links().unwrap().by_name("veth0").unwrap().index;
            netlink.route_get(&RouteQuery {
                source: Some(source),
                iif: Some(veth0),
                ..RouteQuery::to(v4("192.168.50.7"))
            })
        })
    };
    match ask("10.0.0.9").unwrap() {
        Lookup::Route(route) => assert_eq!((route.table, route.kind), (254, RouteKind::Unicast)),
        other => panic!("{other:?}"),
    }
    sysctl("net.ipv4.conf.veth0.forwarding=0");
    assert_eq!(
        ask("10.0.0.9").unwrap(),
        Lookup::Refused(Refusal::Unreachable)
    );
    sysctl("net.ipv4.conf.veth0.forwarding=1");
    sysctl("net.ipv4.conf.veth0.rp_filter=1");
    let refused = ask("10.5.5.5").unwrap();
    assert!(
        matches!(
            refused,
            Lookup::Refused(Refusal::Blackhole | Refusal::ReversePath)
        ),
        "{refused:?}"
    );
    assert!(matches!(ask("10.0.0.9").unwrap(), Lookup::Route(_)));
}

#[test]
fn errors_name_the_operation() {
    let ns = TestNamespace::new("dvn-nl-errors");
    let answer = ns.enter(|| {
        Netlink::connect().unwrap().route_get(&RouteQuery {
            oif: Some(4242),
            ..RouteQuery::to(v4("10.0.0.1"))
        })
    });
    let error = answer.unwrap_err();
    assert_eq!(error.errno(), Some(libc::ENODEV));
    assert!(
        error
            .to_string()
            .starts_with("looking up the route to 10.0.0.1: No such device"),
        "{error}"
    );
}

#[test]
fn vxlan_devices_and_addresses_are_dumped() {
    let ns = routed_namespace("vxlan");
    ns.ip("link add vx4 type vxlan id 11000 local 10.0.0.1 dstport 4790");
    ns.ip("link add vx6 type vxlan id 12000 local fd00::1");
    ns.ip("link add vxnone type vxlan id 13000 dstport 4789");
    let (links, addresses) = ns.enter(|| {
        let netlink = Netlink::connect().unwrap();
        (netlink.links().unwrap(), netlink.addresses().unwrap())
    });
    let info = |name: &str| links.by_name(name).unwrap().vxlan.unwrap();
    assert_eq!(
        info("vx4"),
        VxlanInfo {
            vni: Some(11000),
            local: Some(v4("10.0.0.1")),
            port: Some(4790),
        }
    );
    assert_eq!(info("vx6").local, Some("fd00::1".parse().unwrap()));
    // Without dstport the kernel takes Linux's old 8472, not IANA's 4789 (iproute2 warns).
    assert_eq!(
        info("vx6").port,
        Some(8472),
        "the kernel reports its default"
    );
    assert_eq!(info("vxnone").local, None);
    assert_eq!(links.by_name("veth0").unwrap().vxlan, None);

    let of = |name: &str| -> Vec<ipnet::IpNet> {
        let index = links.by_name(name).unwrap().index;
        addresses
            .iter()
            .filter(|a| a.index == index)
            .map(|a| a.address)
            .collect()
    };
    assert!(of("veth0").contains(&net("10.0.0.1/24")));
    assert!(of("veth0").contains(&net("fd00::1/64")));
    assert!(of("br0").contains(&net("192.168.50.1/24")));
    assert!(
        !of("br0").contains(&net("10.0.0.1/24")),
        "addresses stay on their own link"
    );
    assert!(of("lo").contains(&net("127.0.0.1/8")));
}
