//! Is an address in use on the VNet? An ARP probe (RFC 5227: sender address 0.0.0.0, so no
//! neighbour learns anything from it) sent on the bridge, and any answer for that address.
//! It runs before anything is created: a free address is a precondition, not a finding.
//!
//! The address counts as free when nothing answered for [`ANSWER_WAIT`] (3 s), the question
//! asked again every [`ASK_EVERY`] (0.5 s): a loaded VM answers late (one that took 1.2 s was
//! missed by a 1 s wait), and a question can be lost.

use deevnet_probe_port::sock;
use deevnet_runtime::Failure;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

const ARP_REQUEST: u16 = 1;
const ARP_REPLY: u16 = 2;
/// How long an address's owner has to answer, in all.
pub const ANSWER_WAIT: Duration = Duration::from_secs(3);
/// How often the question is asked again meanwhile.
pub const ASK_EVERY: Duration = Duration::from_millis(500);

/// An ARP probe for `address` from `mac`.
pub fn probe_frame(mac: [u8; 6], address: Ipv4Addr) -> Vec<u8> {
    let mut frame = vec![0, 1, 0x08, 0x00, 6, 4];
    frame.extend_from_slice(&ARP_REQUEST.to_be_bytes());
    frame.extend_from_slice(&mac);
    frame.extend_from_slice(&[0, 0, 0, 0]);
    frame.extend_from_slice(&[0; 6]);
    frame.extend_from_slice(&address.octets());
    frame
}

/// The MAC that answers for `address` in an ARP packet (a reply, or another host's probe or
/// announcement for it), else `None`.
pub fn answer_for(packet: &[u8], address: Ipv4Addr) -> Option<[u8; 6]> {
    if packet.len() < 28 || packet[..6] != [0, 1, 0x08, 0x00, 6, 4] {
        return None;
    }
    let operation = u16::from_be_bytes([packet[6], packet[7]]);
    let sender_mac: [u8; 6] = packet[8..14].try_into().ok()?;
    let sender = Ipv4Addr::new(packet[14], packet[15], packet[16], packet[17]);
    (sender == address && (operation == ARP_REPLY || operation == ARP_REQUEST))
        .then_some(sender_mac)
}

/// `aa:bb:cc:dd:ee:ff` as bytes.
pub fn parse_mac(text: &str) -> Option<[u8; 6]> {
    let bytes: Vec<u8> = text
        .split(':')
        .map(|part| u8::from_str_radix(part, 16).ok())
        .collect::<Option<_>>()?;
    bytes.try_into().ok()
}

pub fn format_mac(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A packet socket for ARP on link `index`, and the broadcast address to send to there.
fn arp_socket(index: u32) -> std::io::Result<(OwnedFd, libc::sockaddr_ll)> {
    let arp = (libc::ETH_P_ARP as u16).to_be();
    let fd = sock::socket(
        libc::AF_PACKET,
        libc::SOCK_DGRAM | libc::SOCK_NONBLOCK,
        arp as i32,
    )?;
    // SAFETY: zeroed sockaddr_ll is valid; the fields set are those bind and sendto read.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = arp;
    sll.sll_ifindex = index as i32;
    sll.sll_halen = 6;
    sll.sll_addr[..6].copy_from_slice(&[0xff; 6]);
    // SAFETY: sll is a valid sockaddr_ll for its length.
    sock::check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            SLL_LEN,
        )
    })?;
    Ok((fd, sll))
}

const SLL_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;

/// Sends `frame` (an ARP packet) to the link's broadcast address.
fn send(fd: &OwnedFd, sll: &libc::sockaddr_ll, frame: &[u8]) -> std::io::Result<()> {
    // SAFETY: frame and sll are valid for their lengths.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            frame.as_ptr() as *const libc::c_void,
            frame.len(),
            0,
            sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            SLL_LEN,
        )
    };
    if sent < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The workload's ARP request for its gateway, as any host sends one: the node (or the router)
/// learns the workload's address and MAC from it, replacing what it held for that address. The
/// answer is not needed (the gateway is pinned) and not read.
pub fn announcement_frame(mac: [u8; 6], address: Ipv4Addr, gateway: Ipv4Addr) -> Vec<u8> {
    let mut frame = vec![0, 1, 0x08, 0x00, 6, 4];
    frame.extend_from_slice(&ARP_REQUEST.to_be_bytes());
    frame.extend_from_slice(&mac);
    frame.extend_from_slice(&address.octets());
    frame.extend_from_slice(&[0; 6]);
    frame.extend_from_slice(&gateway.octets());
    frame
}

/// Announces from link `index` (MAC `mac`) that `address` is there now, by asking for
/// `gateway`. The workload's address is the same run after run but its MAC is new each time,
/// and with its gateway pinned it would never ask: the node would keep sending its answers to
/// the previous run's MAC, and on an EVPN zone never learn the workload at all (the type-2
/// route a member advertises comes from the neighbour entry this request creates).
pub fn announce(
    index: u32,
    mac: [u8; 6],
    address: Ipv4Addr,
    gateway: Ipv4Addr,
) -> Result<(), Failure> {
    let fail = |what: &str, e: std::io::Error| {
        Failure::new(format!("{what} the ARP announcement of {address}: {e}"))
    };
    let (fd, sll) = arp_socket(index).map_err(|e| fail("opening a socket for", e))?;
    send(&fd, &sll, &announcement_frame(mac, address, gateway)).map_err(|e| fail("sending", e))
}

/// Asks on `bridge` (ifindex, MAC) who has `address`; the MAC that answered, if any.
pub fn who_has(bridge: u32, mac: [u8; 6], address: Ipv4Addr) -> Result<Option<[u8; 6]>, Failure> {
    let fail = |what: &str, e: std::io::Error| {
        Failure::new(format!("{what} the ARP check for {address}: {e}"))
    };
    let (fd, sll) = arp_socket(bridge).map_err(|e| fail("opening a socket for", e))?;
    let frame = probe_frame(mac, address);
    let deadline = Instant::now() + ANSWER_WAIT;
    while Instant::now() < deadline {
        send(&fd, &sll, &frame).map_err(|e| fail("sending", e))?;
        let ask_again = (Instant::now() + ASK_EVERY).min(deadline);
        let mut buffer = [0u8; 128];
        while let Some(len) =
            sock::recv_until(&fd, ask_again, &mut buffer).map_err(|e| fail("waiting for", e))?
        {
            if let Some(owner) = answer_for(&buffer[..len], address) {
                return Ok(Some(owner));
            }
        }
    }
    Ok(None)
}
