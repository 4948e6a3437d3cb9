//! Links (network interfaces) as plain data: what the modules ask about a link, without the
//! netlink attribute soup, so that tests can build them by hand. One dump answers everything:
//! kind, controller, VRF table, VLAN, bridge VLAN settings, bonds and their ports, MTU limits.

use netlink_packet_route::link::{
    self as nl, BondMode, BondPortState, InfoBond, InfoBondPort, InfoBridge, InfoData,
    InfoPortData, InfoPortKind, InfoVlan, InfoVrf, InfoVxlan, LinkAttribute, LinkFlags, LinkInfo,
    LinkMessage, MiiStatus,
};
use std::collections::HashMap;
use std::net::IpAddr;

/// One link, as `ip -d link show` would describe it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Link {
    pub index: u32,
    pub name: String,
    /// The link's kind from IFLA_INFO_KIND: `vrf`, `vlan`, `bridge`, `veth`, `bond`, …; `None`
    /// for physical NICs and loopback, which have none.
    pub kind: Option<String>,
    /// The kind of the link's controller when it is a port (IFLA_INFO_SLAVE_KIND): `vrf`,
    /// `bridge`, `bond`.
    pub port_kind: Option<String>,
    /// The controller's ifindex (IFLA_MASTER): the VRF, bridge or bond this link is a port of.
    pub controller: Option<u32>,
    /// The lower link's ifindex (IFLA_LINK): a VLAN's parent, a veth's peer.
    pub parent: Option<u32>,
    pub mtu: Option<u32>,
    /// IFLA_MIN_MTU / IFLA_MAX_MTU: what `ip link set mtu` accepts on this link.
    pub min_mtu: Option<u32>,
    pub max_mtu: Option<u32>,
    /// IFF_UP: administratively up.
    pub admin_up: bool,
    pub oper_state: OperState,
    /// The MAC address, `aa:bb:cc:dd:ee:ff`.
    pub mac: Option<String>,
    /// A VRF's routing table.
    pub vrf_table: Option<u32>,
    /// A VLAN link's tag.
    pub vlan: Option<Vlan>,
    /// A bridge's VLAN settings.
    pub bridge: Option<BridgeVlanSettings>,
    /// A VXLAN link's VNI, local address and port.
    pub vxlan: Option<VxlanInfo>,
    /// A bond's settings.
    pub bond: Option<BondInfo>,
    /// A bond port's (slave's) state.
    pub bond_port: Option<BondPortInfo>,
    /// IFLA_IFALIAS, the free-text label `ip link set DEV alias TEXT` sets (only a user with
    /// CAP_NET_ADMIN over the namespace can set it).
    pub alias: Option<String>,
}

impl Link {
    pub fn is_vrf(&self) -> bool {
        self.kind.as_deref() == Some("vrf")
    }
}

/// IFLA_OPERSTATE (RFC 2863).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OperState {
    #[default]
    Unknown,
    NotPresent,
    Down,
    LowerLayerDown,
    Testing,
    Dormant,
    Up,
    Other(u8),
}

impl OperState {
    /// The name `ip link` prints.
    pub fn name(&self) -> String {
        match self {
            OperState::Unknown => "UNKNOWN".into(),
            OperState::NotPresent => "NOTPRESENT".into(),
            OperState::Down => "DOWN".into(),
            OperState::LowerLayerDown => "LOWERLAYERDOWN".into(),
            OperState::Testing => "TESTING".into(),
            OperState::Dormant => "DORMANT".into(),
            OperState::Up => "UP".into(),
            OperState::Other(value) => format!("state {value}"),
        }
    }
}

impl From<&nl::State> for OperState {
    fn from(state: &nl::State) -> Self {
        match state {
            nl::State::Unknown => OperState::Unknown,
            nl::State::NotPresent => OperState::NotPresent,
            nl::State::Down => OperState::Down,
            nl::State::LowerLayerDown => OperState::LowerLayerDown,
            nl::State::Testing => OperState::Testing,
            nl::State::Dormant => OperState::Dormant,
            nl::State::Up => OperState::Up,
            other => OperState::Other(u8::from(*other)),
        }
    }
}

/// The tag protocol of a VLAN link or a bridge: 802.1Q (C-tag) or 802.1ad (S-tag, QinQ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlanProtocol {
    Dot1Q,
    Dot1Ad,
}

impl VlanProtocol {
    /// The name `ip -d link` prints.
    pub fn name(&self) -> &'static str {
        match self {
            VlanProtocol::Dot1Q => "802.1Q",
            VlanProtocol::Dot1Ad => "802.1ad",
        }
    }
}

impl VlanProtocol {
    /// `None` for an ethertype that is neither (the crate's enum is open to new ones).
    fn from_netlink(protocol: nl::VlanProtocol) -> Option<Self> {
        match u16::from(protocol) {
            0x8100 => Some(VlanProtocol::Dot1Q),
            0x88a8 => Some(VlanProtocol::Dot1Ad),
            _ => None,
        }
    }
}

/// A VLAN link's tag; its parent is [`Link::parent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vlan {
    pub id: u16,
    /// `None` when the kernel did not say (it always does for VLAN links it created), or named
    /// an ethertype other than 802.1Q and 802.1ad.
    pub protocol: Option<VlanProtocol>,
}

/// A bridge's VLAN settings (IFLA_BR_*); each is `None` when the kernel did not report it
/// (kernels built without bridge VLAN filtering leave them out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BridgeVlanSettings {
    pub vlan_filtering: Option<bool>,
    pub vlan_protocol: Option<VlanProtocol>,
    pub default_pvid: Option<u16>,
}

/// A VXLAN link's settings (IFLA_VXLAN_*); each is `None` when the kernel did not report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VxlanInfo {
    /// IFLA_VXLAN_ID.
    pub vni: Option<u32>,
    /// IFLA_VXLAN_LOCAL or IFLA_VXLAN_LOCAL6: the source address of the tunnel (the VTEP);
    /// its family is the tunnel's. `None` for a device created without `local`.
    pub local: Option<IpAddr>,
    /// IFLA_VXLAN_PORT: the UDP destination port. The kernel reports its own default when none
    /// was given: Linux's old 8472, not IANA's 4789 (ifupdown2 asks for 4789 explicitly).
    pub port: Option<u16>,
}

/// A bond's settings (IFLA_BOND_*).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BondInfo {
    /// The mode as the bonding driver names it: `active-backup`, `802.3ad`, …
    pub mode: Option<String>,
    /// The ifindex of the active port (active-backup, tlb, alb).
    pub active_port: Option<u32>,
    /// The ifindex of the primary port, when one is set.
    pub primary: Option<u32>,
}

/// A bond port's state (IFLA_BOND_SLAVE_*).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BondPortInfo {
    pub role: Option<BondRole>,
    /// MII link status: `true` when the bond sees the port's link up.
    pub link_up: Option<bool>,
    /// The MAC the port had before the bond took it over.
    pub permanent_mac: Option<String>,
}

/// A bond port's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BondRole {
    Active,
    Backup,
}

impl BondRole {
    pub fn name(&self) -> &'static str {
        match self {
            BondRole::Active => "active",
            BondRole::Backup => "backup",
        }
    }
}

fn bond_mode_name(mode: &BondMode) -> String {
    match mode {
        BondMode::BalanceRr => "balance-rr".into(),
        BondMode::ActiveBackup => "active-backup".into(),
        BondMode::BalanceXor => "balance-xor".into(),
        BondMode::Broadcast => "broadcast".into(),
        BondMode::Ieee8023Ad => "802.3ad".into(),
        BondMode::BalanceTlb => "balance-tlb".into(),
        BondMode::BalanceAlb => "balance-alb".into(),
        other => format!("mode {}", u8::from(*other)),
    }
}

/// `aa:bb:cc:dd:ee:ff`; `None` for an empty address.
pub(crate) fn mac_text(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let octets: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Some(octets.join(":"))
}

/// Takes what the modules need out of one RTM_NEWLINK message.
pub fn link_from_message(message: &LinkMessage) -> Link {
    let mut link = Link {
        index: message.header.index,
        admin_up: message.header.flags.contains(LinkFlags::Up),
        ..Link::default()
    };
    for attribute in &message.attributes {
        match attribute {
            LinkAttribute::IfName(name) => link.name = name.clone(),
            LinkAttribute::Mtu(mtu) => link.mtu = Some(*mtu),
            LinkAttribute::MinMtu(mtu) => link.min_mtu = Some(*mtu),
            LinkAttribute::MaxMtu(mtu) => link.max_mtu = Some(*mtu),
            LinkAttribute::Controller(index) => link.controller = Some(*index),
            LinkAttribute::Link(index) => link.parent = Some(*index),
            LinkAttribute::OperState(state) => link.oper_state = state.into(),
            LinkAttribute::Address(bytes) if !bytes.is_empty() => link.mac = mac_text(bytes),
            LinkAttribute::LinkInfo(infos) => read_link_info(&mut link, infos),
            LinkAttribute::IfAlias(alias) => link.alias = Some(alias.clone()),
            _ => {}
        }
    }
    link
}

fn read_link_info(link: &mut Link, infos: &[LinkInfo]) {
    for info in infos {
        match info {
            LinkInfo::Kind(kind) => link.kind = Some(kind.to_string()),
            LinkInfo::PortKind(kind) => {
                link.port_kind = Some(match kind {
                    InfoPortKind::Other(name) => name.clone(),
                    known => known.to_string(),
                })
            }
            LinkInfo::Data(InfoData::Vrf(data)) => {
                for item in data {
                    if let InfoVrf::TableId(table) = item {
                        link.vrf_table = Some(*table);
                    }
                }
            }
            LinkInfo::Data(InfoData::Vlan(data)) => {
                let mut vlan = Vlan {
                    id: 0,
                    protocol: None,
                };
                for item in data {
                    match item {
                        InfoVlan::Id(id) => vlan.id = *id,
                        InfoVlan::Protocol(protocol) => {
                            vlan.protocol = VlanProtocol::from_netlink(*protocol)
                        }
                        _ => {}
                    }
                }
                link.vlan = Some(vlan);
            }
            LinkInfo::Data(InfoData::Bridge(data)) => {
                let mut bridge = BridgeVlanSettings::default();
                for item in data {
                    match item {
                        InfoBridge::VlanFiltering(on) => bridge.vlan_filtering = Some(*on),
                        InfoBridge::VlanProtocol(protocol) => {
                            bridge.vlan_protocol = VlanProtocol::from_netlink(*protocol)
                        }
                        InfoBridge::VlanDefaultPvid(pvid) => bridge.default_pvid = Some(*pvid),
                        _ => {}
                    }
                }
                link.bridge = Some(bridge);
            }
            LinkInfo::Data(InfoData::Vxlan(items)) => {
                let mut vxlan = VxlanInfo::default();
                for item in items {
                    match item {
                        InfoVxlan::Id(vni) => vxlan.vni = Some(*vni),
                        InfoVxlan::Local(v4) => vxlan.local = Some(IpAddr::V4(*v4)),
                        InfoVxlan::Local6(v6) => vxlan.local = Some(IpAddr::V6(*v6)),
                        InfoVxlan::Port(port) => vxlan.port = Some(*port),
                        _ => {}
                    }
                }
                link.vxlan = Some(vxlan);
            }
            LinkInfo::Data(InfoData::Bond(items)) => {
                let mut bond = BondInfo::default();
                for item in items {
                    match item {
                        InfoBond::Mode(mode) => bond.mode = Some(bond_mode_name(mode)),
                        InfoBond::ActivePort(index) => bond.active_port = Some(*index),
                        InfoBond::Primary(index) => bond.primary = Some(*index),
                        _ => {}
                    }
                }
                link.bond = Some(bond);
            }
            LinkInfo::PortData(InfoPortData::BondPort(items)) => {
                let mut port = BondPortInfo::default();
                for item in items {
                    match item {
                        InfoBondPort::BondPortState(BondPortState::Active) => {
                            port.role = Some(BondRole::Active)
                        }
                        InfoBondPort::BondPortState(BondPortState::Backup) => {
                            port.role = Some(BondRole::Backup)
                        }
                        InfoBondPort::MiiStatus(status) => {
                            port.link_up = Some(matches!(status, MiiStatus::Up))
                        }
                        InfoBondPort::PermHwaddr(bytes) => port.permanent_mac = mac_text(bytes),
                        _ => {}
                    }
                }
                link.bond_port = Some(port);
            }
            _ => {}
        }
    }
}

/// All links of the namespace, looked up by name or index.
#[derive(Debug, Clone, Default)]
pub struct Links {
    links: Vec<Link>,
    by_name: HashMap<String, usize>,
    by_index: HashMap<u32, usize>,
}

impl Links {
    pub fn new(mut links: Vec<Link>) -> Self {
        links.sort_by_key(|link| link.index);
        let by_name = links
            .iter()
            .enumerate()
            .map(|(i, link)| (link.name.clone(), i))
            .collect();
        let by_index = links
            .iter()
            .enumerate()
            .map(|(i, link)| (link.index, i))
            .collect();
        Links {
            links,
            by_name,
            by_index,
        }
    }

    pub fn by_name(&self, name: &str) -> Option<&Link> {
        self.by_name.get(name).map(|&i| &self.links[i])
    }

    pub fn by_index(&self, index: u32) -> Option<&Link> {
        self.by_index.get(&index).map(|&i| &self.links[i])
    }

    /// The link's name, or `ifindex N` for an index the dump did not list (a link that
    /// appeared or vanished in between), so that messages never show a bare number.
    pub fn name_of(&self, index: u32) -> String {
        match self.by_index(index) {
            Some(link) => link.name.clone(),
            None => format!("ifindex {index}"),
        }
    }

    /// The ports whose controller is `index` (a bridge's ports, a VRF's members); the kernel
    /// lists the controller on the port only.
    pub fn ports_of(&self, index: u32) -> impl Iterator<Item = &Link> {
        self.links
            .iter()
            .filter(move |link| link.controller == Some(index))
    }

    /// The VRF the link is enslaved to (its controller, when that is a VRF). A bridge's ports
    /// are not members of the bridge's VRF: they are layer 2, the bridge itself is the member.
    pub fn vrf_of(&self, link: &Link) -> Option<&Link> {
        self.by_index(link.controller?)
            .filter(|controller| controller.is_vrf())
    }

    pub fn iter(&self) -> impl Iterator<Item = &Link> {
        self.links.iter()
    }

    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }
}
