//! Captured frames, read and classified without a kernel: which of them are the probe's
//! packets, for which target, in which direction, and whether their source was translated.
//!
//! Captures are AF_PACKET datagram sockets: a frame arrives without its Ethernet header, as the
//! IP packet plus the link-level protocol and packet type the kernel reports beside it.

use crate::params::{Proto, Size, Target};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub const ETH_P_IP: u16 = 0x0800;
pub const ETH_P_IPV6: u16 = 0x86dd;
pub const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88a8;
/// `PACKET_OUTGOING`: the node sent it (it left by the interface).
pub const PACKET_OUTGOING: u8 = 4;

const IPPROTO_ICMP: u8 = 1;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_ECHO_REQUEST: u8 = 8;
const IPPROTO_ICMPV6: u8 = 58;
const ICMPV6_ECHO_REQUEST: u8 = 128;
const ICMPV6_ECHO_REPLY: u8 = 129;

/// One frame as a capture socket returned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The link-level protocol (`sll_protocol`, host order).
    pub protocol: u16,
    /// `sll_pkttype`.
    pub packet_type: u8,
    /// The VLAN id of a tag the kernel kept beside the frame (`TP_STATUS_VLAN_VALID`).
    pub metadata_tag: Option<u16>,
    pub bytes: Vec<u8>,
}

impl Frame {
    /// A frame of a VLAN device on top of the captured one: it belongs to that device, which is
    /// captured on its own when it matters.
    pub fn is_tagged(&self) -> bool {
        self.metadata_tag.is_some() || self.protocol == ETH_P_8021Q || self.protocol == ETH_P_8021AD
    }

    /// Tagged with `vlan` beside the frame only (no tag left in it): on a port of a tagged
    /// workload's bridge, the workload's own frame as it crosses a trunk.
    pub fn is_tagged_only_with(&self, vlan: u16) -> bool {
        self.metadata_tag == Some(vlan)
            && self.protocol != ETH_P_8021Q
            && self.protocol != ETH_P_8021AD
    }

    /// Tagged with `vlan` in the frame itself (the kernel left the 802.1Q header in it), and
    /// nothing else: the inner protocol and the packet behind the tag. A VLAN device that is a
    /// bridge port (a QinQ zone's `bond0.40`) sends the workload's frames so.
    pub fn tagged_in_frame_with(&self, vlan: u16) -> Option<(u16, &[u8])> {
        if self.metadata_tag.is_some() || self.protocol != ETH_P_8021Q {
            return None;
        }
        let header = self.bytes.get(..4)?;
        let inner = u16::from_be_bytes([header[2], header[3]]);
        let tagged_with = u16::from_be_bytes([header[0], header[1]]) & 0x0fff;
        (tagged_with == vlan && inner != ETH_P_8021Q && inner != ETH_P_8021AD)
            .then(|| (inner, &self.bytes[4..]))
    }

    /// The workload's frame as it sent it: a tag of its `vlan` taken off, wherever it was.
    pub fn without_tag_of(mut self, vlan: u16) -> Frame {
        if let Some((inner, _)) = self.tagged_in_frame_with(vlan) {
            self.protocol = inner;
            self.bytes.drain(..4);
        }
        self.metadata_tag = None;
        self
    }

    pub fn is_outgoing(&self) -> bool {
        self.packet_type == PACKET_OUTGOING
    }
}

/// The fields of an IPv4 or IPv6 packet the classification reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub source: IpAddr,
    pub destination: IpAddr,
    pub proto: Proto,
    /// ICMP: (type, echo identifier).
    pub icmp: Option<(u8, u16)>,
    /// TCP, UDP: (source port, destination port).
    pub ports: Option<(u16, u16)>,
    /// The IP total length: what tells a full-size probe from a small one to the same target.
    pub length: u16,
}

impl Packet {
    /// Reads an IPv4 or IPv6 packet; `None` for anything else, fragments after the first,
    /// IPv6 extension headers (the probe sends none) and truncated packets.
    pub fn parse(bytes: &[u8]) -> Option<Packet> {
        if bytes.first()? >> 4 == 6 {
            return Self::parse_v6(bytes);
        }
        if bytes.len() < 20 || bytes[0] >> 4 != 4 {
            return None;
        }
        let header_len = usize::from(bytes[0] & 0x0f) * 4;
        let fragment_offset = u16::from_be_bytes([bytes[6], bytes[7]]) & 0x1fff;
        if header_len < 20 || bytes.len() < header_len || fragment_offset != 0 {
            return None;
        }
        let source = Ipv4Addr::new(bytes[12], bytes[13], bytes[14], bytes[15]).into();
        let destination = Ipv4Addr::new(bytes[16], bytes[17], bytes[18], bytes[19]).into();
        let payload = &bytes[header_len..];
        let word = |at: usize| u16::from_be_bytes([payload[at], payload[at + 1]]);
        let (proto, icmp, ports) = match bytes[9] {
            IPPROTO_ICMP if payload.len() >= 8 => (Proto::Icmp, Some((payload[0], word(4))), None),
            IPPROTO_TCP if payload.len() >= 4 => (Proto::Tcp, None, Some((word(0), word(2)))),
            IPPROTO_UDP if payload.len() >= 4 => (Proto::Udp, None, Some((word(0), word(2)))),
            _ => return None,
        };
        Some(Packet {
            length: u16::from_be_bytes([bytes[2], bytes[3]]),
            source,
            destination,
            proto,
            icmp,
            ports,
        })
    }

    fn parse_v6(bytes: &[u8]) -> Option<Packet> {
        let address = |at: usize| -> Option<IpAddr> {
            let octets: [u8; 16] = bytes.get(at..at + 16)?.try_into().ok()?;
            Some(Ipv6Addr::from(octets).into())
        };
        let payload = bytes.get(40..)?;
        let word = |at: usize| {
            Some(u16::from_be_bytes([
                *payload.get(at)?,
                *payload.get(at + 1)?,
            ]))
        };
        let (proto, icmp, ports) = match *bytes.get(6)? {
            IPPROTO_ICMPV6 if payload.len() >= 8 => {
                let kind = match payload[0] {
                    ICMPV6_ECHO_REQUEST => ICMP_ECHO_REQUEST,
                    ICMPV6_ECHO_REPLY => ICMP_ECHO_REPLY,
                    _ => return None,
                };
                (Proto::Icmp, Some((kind, word(4)?)), None)
            }
            IPPROTO_TCP => (Proto::Tcp, None, Some((word(0)?, word(2)?))),
            IPPROTO_UDP => (Proto::Udp, None, Some((word(0)?, word(2)?))),
            _ => return None,
        };
        Some(Packet {
            // Payload length plus the fixed header: the size a full-size probe is asked for.
            length: u16::from_be_bytes([bytes[4], bytes[5]]).saturating_add(40),
            source: address(8)?,
            destination: address(24)?,
            proto,
            icmp,
            ports,
        })
    }
}

/// What identifies the probe's packets, also after source NAT: the workload's address, the
/// echo identifier of its pings and the local ports of its TCP and UDP sockets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Markers {
    pub workload: IpAddr,
    pub icmp_id: u16,
    pub local_ports: Vec<(Proto, u16)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the workload toward the target.
    Request,
    /// From the target back toward the workload.
    Reply,
}

/// One of the probe's packets, recognized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbePacket {
    /// Index into the targets.
    pub target: usize,
    pub direction: Direction,
    /// The workload's address was replaced (by SNAT on the way out, or not yet restored on
    /// the way back).
    pub translated: bool,
    pub packet: Packet,
}

/// The probe packet `packet` is, or `None` for anybody else's traffic.
pub fn classify(packet: &Packet, targets: &[Target], markers: &Markers) -> Option<ProbePacket> {
    targets.iter().enumerate().find_map(|(index, target)| {
        if packet.proto != target.proto || !size_fits(packet, target, targets) {
            return None;
        }
        let (direction, workload_side, local_field) =
            if packet.destination == target.address && request_shape(packet, target) {
                (
                    Direction::Request,
                    packet.source,
                    local_of(packet, Direction::Request),
                )
            } else if packet.source == target.address && reply_shape(packet, target) {
                (
                    Direction::Reply,
                    packet.destination,
                    local_of(packet, Direction::Reply),
                )
            } else {
                return None;
            };
        let marked = match packet.proto {
            Proto::Icmp => local_field == Some(markers.icmp_id),
            proto => local_field.is_some_and(|port| markers.local_ports.contains(&(proto, port))),
        };
        let translated = workload_side != markers.workload;
        // The untranslated address is the workload's alone; a translated one needs the marker.
        (marked || !translated).then_some(ProbePacket {
            target: index,
            direction,
            translated,
            packet: *packet,
        })
    })
}

/// A full-size target's packets have its size; a small one's any other than the full-size
/// targets' to the same address (its own are all alike and far smaller).
fn size_fits(packet: &Packet, target: &Target, targets: &[Target]) -> bool {
    match target.size {
        Some(Size::Bytes(size)) => packet.length == size,
        // Resolved to bytes before probing (the VNet's MTU).
        Some(Size::Mtu) => true,
        None => !targets.iter().any(|other| {
            other.address == target.address
                && other.proto == target.proto
                && other.size == Some(Size::Bytes(packet.length))
        }),
    }
}

fn request_shape(packet: &Packet, target: &Target) -> bool {
    match packet.proto {
        Proto::Icmp => packet
            .icmp
            .is_some_and(|(kind, _)| kind == ICMP_ECHO_REQUEST),
        _ => packet.ports.is_some_and(|(_, to)| Some(to) == target.port),
    }
}

fn reply_shape(packet: &Packet, target: &Target) -> bool {
    match packet.proto {
        Proto::Icmp => packet.icmp.is_some_and(|(kind, _)| kind == ICMP_ECHO_REPLY),
        _ => packet
            .ports
            .is_some_and(|(from, _)| Some(from) == target.port),
    }
}

/// The workload's side of the packet: its echo identifier, or its port.
fn local_of(packet: &Packet, direction: Direction) -> Option<u16> {
    match (packet.icmp, packet.ports, direction) {
        (Some((_, id)), _, _) => Some(id),
        (_, Some((from, _)), Direction::Request) => Some(from),
        (_, Some((_, to)), Direction::Reply) => Some(to),
        _ => None,
    }
}
