//! Interface addresses as plain data (`ip address show`), and the dump request that fetches
//! them.

use ipnet::IpNet;
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::AddressFamily;
use std::net::IpAddr;

use super::route::Family;

/// One address of one interface, as `ip address show` prints it (`10.20.129.1/24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address {
    /// The interface's ifindex.
    pub index: u32,
    /// The address with its prefix length.
    pub address: IpNet,
}

impl Address {
    pub fn family(&self) -> Family {
        Family::of(&self.address.addr())
    }
}

/// Takes the interface's own address out of one RTM_NEWADDR message: IFA_LOCAL when the kernel
/// sends it (IPv4: on a point-to-point link IFA_ADDRESS is the peer's), IFA_ADDRESS otherwise
/// (IPv6 sends only that). `None` for other families, a message without an address, or a
/// prefix length longer than the family's, which the kernel never sends.
pub fn address_from_message(message: &AddressMessage) -> Option<Address> {
    if !matches!(
        message.header.family,
        AddressFamily::Inet | AddressFamily::Inet6
    ) {
        return None;
    }
    let mut local: Option<IpAddr> = None;
    let mut address: Option<IpAddr> = None;
    for attribute in &message.attributes {
        match attribute {
            AddressAttribute::Local(ip) => local = Some(*ip),
            AddressAttribute::Address(ip) => address = Some(*ip),
            _ => {}
        }
    }
    let ip = local.or(address)?;
    Some(Address {
        index: message.header.index,
        address: IpNet::new(ip, message.header.prefix_len).ok()?,
    })
}
