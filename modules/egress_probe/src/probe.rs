//! What the probes carry and how their answers are recognized: the run's identity (echo
//! identifiers, nonce, local ports), the ICMP echo requests and the answers that count for them
//! (either family), the DNS query. All pure; [`crate::all_targets`] sends them.

use crate::frame::Markers;
use crate::params::{Proto, Target};
use deevnet_probe_port::sock;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

const ICMP_ECHO_REQUEST: u8 = 8;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_UNREACHABLE: u8 = 3;
/// Destination unreachable, code 4: fragmentation needed and DF set.
const ICMP_FRAG_NEEDED: u8 = 4;
pub const PAYLOAD: &[u8] = b"deevnet.net egress_probe";
/// Random bytes per run after [`PAYLOAD`]: a reply must carry them back, so nobody who did not
/// see the request can forge its answer (a VNet neighbour spraying every identifier).
pub const NONCE_LEN: usize = 16;
/// Where the probe's TCP and UDP ports are taken from: below the kernel's ephemeral range, so
/// the node's own connections never carry them (the capture filter keys on them).
const PORT_RANGE: (u16, u16) = (10_000, 32_000);

/// What one run's probes carry, decided before the captures start: every one of the probe's
/// packets is then recognizable from its first frame on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub markers: Markers,
    pub nonce: [u8; NONCE_LEN],
}

/// This run's identity: the echo identifier, a random nonce, and one local port per TCP
/// attempt and per UDP target (consecutive, from a random base).
pub fn identity(targets: &[Target], settings: Settings, icmp_id: u16) -> Result<Identity, String> {
    let mut identities = identities(&[(targets, settings)], icmp_id)?;
    Ok(identities.remove(0))
}

/// The identities of a run's probes, told apart also after SNAT: consecutive echo
/// identifiers from `icmp_id` (lowered so the block does not wrap), one random nonce, and
/// consecutive local ports from one random base, each probe its own slice.
pub fn identities(probes: &[(&[Target], Settings)], icmp_id: u16) -> Result<Vec<Identity>, String> {
    let mut random = [0u8; NONCE_LEN + 2];
    fill_random(&mut random)?;
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&random[..NONCE_LEN]);
    let ports_of = |target: &Target, settings: &Settings| match target.proto {
        Proto::Icmp => 0,
        Proto::Tcp => settings.count as usize,
        Proto::Udp => 1,
    };
    let wanted: usize = probes
        .iter()
        .flat_map(|(targets, settings)| targets.iter().map(move |t| ports_of(t, settings)))
        .sum();
    let room = usize::from(PORT_RANGE.1 - PORT_RANGE.0);
    if wanted > room {
        return Err(format!(
            "targets: {wanted} TCP attempts and UDP targets need more local ports than the \
             probe has ({room}); give fewer targets or a lower count"
        ));
    }
    let offset = usize::from(u16::from_le_bytes([
        random[NONCE_LEN],
        random[NONCE_LEN + 1],
    ])) % (room - wanted + 1);
    let mut next = usize::from(PORT_RANGE.0) + offset;
    let first_id = icmp_id.min(u16::MAX - probes.len() as u16 + 1);
    let mut identities = Vec::with_capacity(probes.len());
    for (i, (targets, settings)) in probes.iter().enumerate() {
        let mut local_ports = Vec::new();
        for target in targets.iter() {
            for _ in 0..ports_of(target, settings) {
                local_ports.push((target.proto, next as u16));
                next += 1;
            }
        }
        identities.push(Identity {
            markers: Markers {
                workload: settings.workload,
                icmp_id: first_id + i as u16,
                local_ports,
            },
            nonce,
        });
    }
    Ok(identities)
}

fn fill_random(buffer: &mut [u8]) -> Result<(), String> {
    let mut filled = 0;
    while filled < buffer.len() {
        // SAFETY: the pointer and length describe the unfilled rest of buffer.
        let got = unsafe {
            libc::getrandom(
                buffer[filled..].as_mut_ptr() as *mut libc::c_void,
                buffer.len() - filled,
                0,
            )
        };
        if got < 0 {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(format!(
                    "reading random bytes for the probe's nonce: {error}"
                ));
            }
            continue;
        }
        filled += got as usize;
    }
    Ok(())
}

/// How every target is probed.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The source of every probe.
    pub workload: IpAddr,
    pub count: u32,
    /// The wait for each answer.
    pub timeout: Duration,
    /// The workload's MTU: what `size: mtu` sends.
    pub mtu: u16,
}

const ICMPV6_DEST_UNREACHABLE: u8 = 1;
const ICMPV6_PACKET_TOO_BIG: u8 = 2;
const ICMPV6_ECHO_REQUEST: u8 = 128;
const ICMPV6_ECHO_REPLY: u8 = 129;
/// The IPv6 header, the echo header, the payload and the nonce.
pub const IPV6_ECHO_OVERHEAD: usize = 40 + 8 + PAYLOAD.len() + NONCE_LEN;

/// The ICMPv6 echo request an answer must be about.
#[derive(Debug, Clone, Copy)]
pub struct Echo6<'a> {
    pub target: Ipv6Addr,
    pub id: u16,
    pub sequence: u16,
    pub nonce: &'a [u8; NONCE_LEN],
    pub padding: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub enum EchoAnswer6 {
    Reply,
    /// Destination unreachable, its code as ICMPv4 says it (blocked_by reads one table): no
    /// route 0, administratively prohibited 13, address unreachable 1, port unreachable 3;
    /// any other code is 100 + its ICMPv6 code.
    Unreachable(u8),
    /// Packet too big, with the MTU it names.
    PacketTooBig(u16),
}

/// What an ICMPv6 message (no IPv6 header: a raw ICMPv6 socket strips it) from `from` says
/// about `echo`. Any bytes: every read is bounded.
pub fn echo6_answer(message: &[u8], from: Ipv6Addr, echo: &Echo6) -> Option<EchoAnswer6> {
    let word = |bytes: &[u8], at: usize| -> Option<u16> {
        Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    };
    match *message.first()? {
        ICMPV6_ECHO_REPLY
            if from == echo.target
                && word(message, 4)? == echo.id
                && word(message, 6)? == echo.sequence =>
        {
            let as_v4 = Echo {
                target: Ipv4Addr::UNSPECIFIED,
                id: echo.id,
                sequence: echo.sequence,
                nonce: echo.nonce,
                padding: echo.padding,
            };
            payload_matches(message.get(8..)?, &as_v4).then_some(EchoAnswer6::Reply)
        }
        kind @ (ICMPV6_DEST_UNREACHABLE | ICMPV6_PACKET_TOO_BIG) => {
            // The quoted packet: its IPv6 header, then our echo request's header.
            let quoted = message.get(8..)?;
            let destination: [u8; 16] = quoted.get(24..40)?.try_into().ok()?;
            let request = quoted.get(40..)?;
            let ours = Ipv6Addr::from(destination) == echo.target
                && *quoted.get(6)? == 58
                && *request.first()? == ICMPV6_ECHO_REQUEST
                && word(request, 4)? == echo.id
                && word(request, 6)? == echo.sequence
                && quotes_the_nonce(request.get(8..)?, echo.nonce);
            if !ours {
                return None;
            }
            Some(if kind == ICMPV6_PACKET_TOO_BIG {
                let mtu = u32::from_be_bytes(message.get(4..8)?.try_into().ok()?);
                EchoAnswer6::PacketTooBig(mtu.min(u32::from(u16::MAX)) as u16)
            } else {
                EchoAnswer6::Unreachable(match message[1] {
                    0 => 0,
                    1 => 13,
                    3 => 1,
                    4 => 3,
                    code => 100u8.saturating_add(code),
                })
            })
        }
        _ => None,
    }
}

/// The IPv4 header, the echo header, the payload and the nonce: a full-size probe's padding
/// is what its size leaves after them.
pub const IPV4_ECHO_OVERHEAD: usize = 20 + 8 + PAYLOAD.len() + NONCE_LEN;

/// An ICMP echo request carrying the run's nonce.
pub fn echo_request(id: u16, sequence: u16, nonce: &[u8; NONCE_LEN]) -> Vec<u8> {
    echo_request_padded(id, sequence, nonce, 0)
}

/// An echo request with `padding` zero bytes after the nonce (a full-size probe).
pub fn echo_request_padded(
    id: u16,
    sequence: u16,
    nonce: &[u8; NONCE_LEN],
    padding: usize,
) -> Vec<u8> {
    let mut packet = vec![ICMP_ECHO_REQUEST, 0, 0, 0];
    packet.extend_from_slice(&id.to_be_bytes());
    packet.extend_from_slice(&sequence.to_be_bytes());
    packet.extend_from_slice(PAYLOAD);
    packet.extend_from_slice(nonce);
    packet.resize(packet.len() + padding, 0);
    let checksum = sock::internet_checksum(&packet);
    packet[2..4].copy_from_slice(&checksum.to_be_bytes());
    packet
}

/// The echo request an answer must be about.
#[derive(Debug, Clone, Copy)]
pub struct Echo<'a> {
    pub target: Ipv4Addr,
    pub id: u16,
    pub sequence: u16,
    pub nonce: &'a [u8; NONCE_LEN],
    /// Zero bytes after the nonce (a full-size probe's).
    pub padding: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub enum EchoAnswer {
    Reply,
    /// A destination-unreachable about our request, from this router, with its code (1 host,
    /// 13 administratively prohibited, ...).
    Unreachable(Ipv4Addr, u8),
    /// Fragmentation needed (unreachable, code 4), from this router, with the next hop's MTU.
    FragNeeded(Ipv4Addr, u16),
}

/// What an IPv4 packet a raw ICMP socket received says about `echo`. Any bytes: every read is
/// bounded (a neighbour's short ICMP error aborted the module once). A reply counts only with
/// the request's identifier, sequence and whole payload, nonce included.
pub fn echo_answer(packet: &[u8], echo: &Echo) -> Option<EchoAnswer> {
    let header = usize::from(packet.first()? & 0x0f) * 4;
    if packet.first()? >> 4 != 4 || header < 20 {
        return None;
    }
    let source = ipv4_at(packet, 12)?;
    let icmp = packet.get(header..)?;
    let word = |bytes: &[u8], at: usize| -> Option<u16> {
        Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    };
    match *icmp.first()? {
        ICMP_ECHO_REPLY
            if source == echo.target
                && word(icmp, 4)? == echo.id
                && word(icmp, 6)? == echo.sequence
                && payload_matches(icmp.get(8..)?, echo) =>
        {
            Some(EchoAnswer::Reply)
        }
        ICMP_UNREACHABLE => {
            // The quoted packet: its IP header, then our echo request. The identifier and
            // sequence are public (a neighbour sprays them all): the quote must hold the
            // payload up to the run's nonce too, as every router quoting per RFC 1812 does.
            let quoted = icmp.get(8..)?;
            let quoted_header = usize::from(quoted.first()? & 0x0f) * 4;
            if quoted_header < 20 {
                return None;
            }
            let quoted_destination = ipv4_at(quoted, 16)?;
            let request = quoted.get(quoted_header..)?;
            (quoted_destination == echo.target
                && *request.first()? == ICMP_ECHO_REQUEST
                && word(request, 4)? == echo.id
                && word(request, 6)? == echo.sequence
                && quotes_the_nonce(request.get(8..)?, echo.nonce))
            .then_some(match icmp[1] {
                ICMP_FRAG_NEEDED => EchoAnswer::FragNeeded(source, word(icmp, 6)?),
                code => EchoAnswer::Unreachable(source, code),
            })
        }
        _ => None,
    }
}

/// An ICMP error's quote of the request's payload holds the fixed text and the run's nonce:
/// only who saw the request can quote it. A quote cut shorter proves nothing and is ignored.
fn quotes_the_nonce(quoted_payload: &[u8], nonce: &[u8; NONCE_LEN]) -> bool {
    quoted_payload.get(..PAYLOAD.len()) == Some(PAYLOAD)
        && quoted_payload.get(PAYLOAD.len()..PAYLOAD.len() + NONCE_LEN) == Some(&nonce[..])
}

/// The reply's payload is the request's: the fixed text, the nonce, then the padding.
fn payload_matches(payload: &[u8], echo: &Echo) -> bool {
    let fixed = PAYLOAD.len() + NONCE_LEN;
    payload.len() == fixed + echo.padding
        && payload[..PAYLOAD.len()] == *PAYLOAD
        && payload[PAYLOAD.len()..fixed] == echo.nonce[..]
        && payload[fixed..].iter().all(|b| *b == 0)
}

/// The IPv4 address at `at`, if the bytes hold all four of it.
fn ipv4_at(bytes: &[u8], at: usize) -> Option<Ipv4Addr> {
    let octets: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(Ipv4Addr::from(octets))
}

/// A standard query, recursion desired, for `. IN NS`.
pub fn dns_query_bytes(id: u16) -> Vec<u8> {
    let mut query = id.to_be_bytes().to_vec();
    query.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    query.extend_from_slice(&[0, 0, 2, 0, 1]);
    query
}

/// A response (QR set) to query `id`.
pub fn is_dns_answer(reply: &[u8], id: u16) -> bool {
    reply.len() >= 4 && reply.get(..2) == Some(&id.to_be_bytes()[..]) && reply[2] & 0x80 != 0
}
