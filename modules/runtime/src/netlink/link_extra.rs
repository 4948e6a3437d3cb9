//! What [`Link`](super::Link) leaves out and layer-2 checks need: a bond's mode and active
//! port, a bond port's role, and the MTU range a link's driver accepts.

use super::{Netlink, NetlinkError};
use netlink_packet_route::link::{
    BondMode, BondPortState, InfoBond, InfoBondPort, InfoData, InfoPortData, LinkAttribute,
    LinkInfo, LinkMessage, MiiStatus,
};

/// The extra facts of one link.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkExtra {
    pub index: u32,
    /// IFLA_MIN_MTU / IFLA_MAX_MTU: what `ip link set mtu` accepts on this link.
    pub min_mtu: Option<u32>,
    pub max_mtu: Option<u32>,
    /// Set on a bond.
    pub bond: Option<BondInfo>,
    /// Set on a bond's port (slave).
    pub bond_port: Option<BondPortInfo>,
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
pub(super) fn mac_text(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let octets: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Some(octets.join(":"))
}

/// Takes the extra facts out of one RTM_NEWLINK message.
pub fn link_extra_from_message(message: &LinkMessage) -> LinkExtra {
    let mut extra = LinkExtra {
        index: message.header.index,
        ..LinkExtra::default()
    };
    for attribute in &message.attributes {
        match attribute {
            LinkAttribute::MinMtu(mtu) => extra.min_mtu = Some(*mtu),
            LinkAttribute::MaxMtu(mtu) => extra.max_mtu = Some(*mtu),
            LinkAttribute::LinkInfo(infos) => {
                for info in infos {
                    match info {
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
                            extra.bond = Some(bond);
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
                                    InfoBondPort::PermHwaddr(bytes) => {
                                        port.permanent_mac = mac_text(bytes)
                                    }
                                    _ => {}
                                }
                            }
                            extra.bond_port = Some(port);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    extra
}

impl Netlink {
    /// The extra facts of every link of the namespace, in ifindex order.
    pub fn link_extras(&self) -> Result<Vec<LinkExtra>, NetlinkError> {
        let request = self.handle().link().get().execute();
        let messages = self.collect(
            "listing the bonds and MTU limits of the interfaces",
            request,
        )?;
        let mut extras: Vec<LinkExtra> = messages.iter().map(link_extra_from_message).collect();
        extras.sort_by_key(|extra| extra.index);
        Ok(extras)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::link::{InfoKind, InfoPortKind};

    #[test]
    fn bonds_and_their_ports_are_read() {
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
        let extra = link_extra_from_message(&bond);
        assert_eq!((extra.min_mtu, extra.max_mtu), (Some(68), Some(65535)));
        assert_eq!(
            extra.bond,
            Some(BondInfo {
                mode: Some("active-backup".into()),
                active_port: Some(6),
                primary: Some(6),
            })
        );
        assert_eq!(extra.bond_port, None);

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
        let extra = link_extra_from_message(&port);
        assert_eq!(
            extra.bond_port,
            Some(BondPortInfo {
                role: Some(BondRole::Backup),
                link_up: Some(true),
                permanent_mac: Some("02:00:00:00:00:07".into()),
            })
        );
        assert_eq!(BondRole::Backup.name(), "backup");
    }
}
