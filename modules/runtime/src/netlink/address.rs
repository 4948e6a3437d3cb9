//! Interface addresses as plain data (`ip address show`), and the dump request that fetches
//! them.

use ipnet::IpNet;
use netlink_packet_route::address::{
    AddressAttribute, AddressFlags, AddressHeaderFlags, AddressMessage,
};
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
    /// Whether the kernel can use it (duplicate address detection's verdict).
    pub state: AddressState,
}

/// What duplicate address detection (DAD) says of an address: IFA_F_TENTATIVE and
/// IFA_F_DADFAILED, from the header's flags and IFA_FLAGS (which carries them all). The kernel
/// uses an address with neither; `ip address show` prints `tentative` and `dadfailed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddressState {
    /// DAD has not finished: the kernel neither answers for the address nor sends from it yet.
    /// It finishes within seconds once the link is up with carrier, and never before.
    pub tentative: bool,
    /// DAD found another holder on the link: the kernel never uses the address until it is
    /// deleted and added again.
    pub dad_failed: bool,
}

impl AddressState {
    /// Neither tentative nor failed.
    pub fn usable(&self) -> bool {
        !self.tentative && !self.dad_failed
    }
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
    let header = message.header.flags;
    let mut state = AddressState {
        tentative: header.contains(AddressHeaderFlags::Tentative),
        dad_failed: header.contains(AddressHeaderFlags::Dadfailed),
    };
    for attribute in &message.attributes {
        match attribute {
            AddressAttribute::Local(ip) => local = Some(*ip),
            AddressAttribute::Address(ip) => address = Some(*ip),
            // The header holds only the first eight flags; IFA_FLAGS, when sent, holds them all.
            AddressAttribute::Flags(flags) => {
                state.tentative |= flags.contains(AddressFlags::Tentative);
                state.dad_failed |= flags.contains(AddressFlags::Dadfailed);
            }
            _ => {}
        }
    }
    let ip = local.or(address)?;
    Some(Address {
        index: message.header.index,
        address: IpNet::new(ip, message.header.prefix_len).ok()?,
        state,
    })
}
