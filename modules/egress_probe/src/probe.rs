//! The probes, sent from inside the workload's namespace (call on a thread that entered it):
//! ICMP echo, a completed TCP handshake, a DNS query answered. Each waits at most `timeout` for
//! its answer; everything is bounded by count × timeout per target.

use crate::frame::Markers;
use crate::params::{Proto, Size, Target};
use crate::report::ProbeOutcome;
use deevnet_probe_port::sock;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const ICMP_ECHO_REQUEST: u8 = 8;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_UNREACHABLE: u8 = 3;
/// Destination unreachable, code 4: fragmentation needed and DF set.
const ICMP_FRAG_NEEDED: u8 = 4;
const IP_MTU_DISCOVER: i32 = 10;
/// DF set on every packet, whatever path MTU the kernel learned: the probe's size is the
/// operator's, and a frag-needed must come back each time.
const IP_PMTUDISC_PROBE: i32 = 3;
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

/// Sends every target's probes as `identity` says; the outcomes, in the order of `targets`.
pub fn run_all(targets: &[Target], settings: Settings, identity: &Identity) -> Vec<ProbeOutcome> {
    let mut ports = identity.markers.local_ports.iter().map(|&(_, port)| port);
    targets
        .iter()
        .map(|target| {
            let result = match target.proto {
                Proto::Icmp => ping(target, settings, identity),
                Proto::Tcp => connect(target, settings, &mut ports),
                Proto::Udp => dns_query(target, settings, identity, &mut ports),
            };
            result.unwrap_or_else(|error| ProbeOutcome {
                error: Some(describe(&error)),
                ..ProbeOutcome::default()
            })
        })
        .collect()
}

fn next_port(ports: &mut impl Iterator<Item = u16>) -> io::Result<u16> {
    ports
        .next()
        .ok_or_else(|| io::Error::other("more probes than planned local ports"))
}

/// The error as the result shows it: `refused`, `unreachable`, or the system's words.
fn describe(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ECONNREFUSED) => "refused".into(),
        Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) => "unreachable".into(),
        _ if error.kind() == io::ErrorKind::TimedOut
            || error.kind() == io::ErrorKind::WouldBlock =>
        {
            "no reply".into()
        }
        _ => error.to_string(),
    }
}

fn ping(target: &Target, settings: Settings, identity: &Identity) -> io::Result<ProbeOutcome> {
    let (IpAddr::V4(workload), IpAddr::V4(address)) = (settings.workload, target.address) else {
        return ping_v6(target, settings, identity);
    };
    let (id, nonce) = (identity.markers.icmp_id, &identity.nonce);
    let padding = padding(target, settings, IPV4_ECHO_OVERHEAD);
    let fd = sock::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP)?;
    sock::bind_v4(&fd, SocketAddrV4::new(workload, 0))?;
    if target.size.is_some() {
        sock::set_int_option(&fd, libc::IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)?;
    }
    let mut buffer = vec![0u8; 128 + IPV4_ECHO_OVERHEAD + padding];
    echo_loop(
        settings,
        |sequence| {
            let request = echo_request_padded(id, sequence, nonce, padding);
            sock::sendto_v4(&fd, &request, address)
        },
        |sequence, deadline| {
            let echo = Echo {
                target: address,
                id,
                sequence,
                nonce,
                padding,
            };
            while let Some(len) = sock::recv_until(&fd, deadline, &mut buffer)? {
                match echo_answer(&buffer[..len], &echo) {
                    Some(EchoAnswer::Reply) => return Ok(Some(Answer::Reply)),
                    Some(EchoAnswer::FragNeeded(from, mtu)) => {
                        return Ok(Some(Answer::TooBig(from.into(), mtu)))
                    }
                    Some(EchoAnswer::Unreachable(from, code)) => {
                        return Ok(Some(Answer::Unreachable(from.into(), code)))
                    }
                    None => {}
                }
            }
            Ok(None)
        },
    )
}

/// What came back about one echo, either family.
enum Answer {
    Reply,
    /// Fragmentation needed / packet too big, from this router, with the MTU it names.
    TooBig(IpAddr, u16),
    /// Destination unreachable, from this router, with its (ICMPv4-equivalent) code.
    Unreachable(IpAddr, u8),
}

/// The padding a full-size echo needs after the fixed part (`overhead`, headers included).
fn padding(target: &Target, settings: Settings, overhead: usize) -> usize {
    match target.size {
        None => 0,
        Some(Size::Bytes(size)) => usize::from(size).saturating_sub(overhead),
        Some(Size::Mtu) => usize::from(settings.mtu).saturating_sub(overhead),
    }
}

/// `count` echoes: `send` sends echo `sequence`, `wait` returns what came back about it by
/// `deadline`, or `None`.
fn echo_loop(
    settings: Settings,
    mut send: impl FnMut(u16) -> io::Result<()>,
    mut wait: impl FnMut(u16, Instant) -> io::Result<Option<Answer>>,
) -> io::Result<ProbeOutcome> {
    let mut outcome = ProbeOutcome::default();
    for sequence in 0..settings.count as u16 {
        let sent_at = Instant::now();
        if let Err(error) = send(sequence) {
            outcome.error = Some(describe(&error));
            continue;
        }
        outcome.sent += 1;
        match wait(sequence, sent_at + settings.timeout)? {
            Some(Answer::Reply) => {
                outcome.received += 1;
                outcome
                    .rtts_ms
                    .push(sent_at.elapsed().as_secs_f64() * 1000.0);
            }
            Some(Answer::TooBig(from, mtu)) => {
                outcome.frag_needed = Some((from, mtu));
                outcome.error = Some(format!("fragmentation needed (MTU {mtu}, from {from})"));
            }
            Some(Answer::Unreachable(from, code)) => {
                outcome.unreachable = Some((from, code));
                outcome.error = Some(format!("unreachable (ICMP from {from})"));
            }
            None if outcome.error.is_none() => outcome.error = Some("no reply".into()),
            None => {}
        }
    }
    Ok(outcome)
}

const ICMPV6_DEST_UNREACHABLE: u8 = 1;
const ICMPV6_PACKET_TOO_BIG: u8 = 2;
const ICMPV6_ECHO_REQUEST: u8 = 128;
const ICMPV6_ECHO_REPLY: u8 = 129;
const IPV6_MTU_DISCOVER: i32 = 23;
const IPV6_PMTUDISC_PROBE: i32 = 3;
const IPV6_DONTFRAG: i32 = 62;

/// ICMPv6 echoes, as [`ping`] sends ICMP ones.
fn ping_v6(target: &Target, settings: Settings, identity: &Identity) -> io::Result<ProbeOutcome> {
    let (IpAddr::V6(workload), IpAddr::V6(address)) = (settings.workload, target.address) else {
        return Err(io::Error::other("a probe mixes IPv4 and IPv6"));
    };
    let (id, nonce) = (identity.markers.icmp_id, &identity.nonce);
    let padding = padding(target, settings, IPV6_ECHO_OVERHEAD);
    let fd = sock::socket(libc::AF_INET6, libc::SOCK_RAW, libc::IPPROTO_ICMPV6)?;
    sock::bind(&fd, SocketAddr::new(workload.into(), 0))?;
    if target.size.is_some() {
        sock::set_int_option(
            &fd,
            libc::IPPROTO_IPV6,
            IPV6_MTU_DISCOVER,
            IPV6_PMTUDISC_PROBE,
        )?;
        sock::set_int_option(&fd, libc::IPPROTO_IPV6, IPV6_DONTFRAG, 1)?;
    }
    let mut buffer = vec![0u8; 256 + IPV6_ECHO_OVERHEAD + padding];
    echo_loop(
        settings,
        |sequence| {
            // The kernel fills in an ICMPv6 checksum (it covers the IPv6 pseudo-header).
            let mut request = echo_request_padded(id, sequence, nonce, padding);
            request[0] = ICMPV6_ECHO_REQUEST;
            request[2..4].copy_from_slice(&[0, 0]);
            sock::sendto(&fd, &request, address.into())
        },
        |sequence, deadline| {
            let echo = Echo6 {
                target: address,
                id,
                sequence,
                nonce,
                padding,
            };
            while let Some((len, from)) = sock::recv_from_v6_until(&fd, deadline, &mut buffer)? {
                match echo6_answer(&buffer[..len], from, &echo) {
                    Some(EchoAnswer6::Reply) => return Ok(Some(Answer::Reply)),
                    Some(EchoAnswer6::PacketTooBig(mtu)) => {
                        return Ok(Some(Answer::TooBig(from.into(), mtu)))
                    }
                    Some(EchoAnswer6::Unreachable(code)) => {
                        return Ok(Some(Answer::Unreachable(from.into(), code)))
                    }
                    None => {}
                }
            }
            Ok(None)
        },
    )
}

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
                && word(request, 6)? == echo.sequence;
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
            // The quoted packet: its IP header, then our echo request's first 8 bytes (all a
            // router must quote: the nonce is not there, the identifier and sequence are).
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
                && word(request, 6)? == echo.sequence)
                .then_some(match icmp[1] {
                    ICMP_FRAG_NEEDED => EchoAnswer::FragNeeded(source, word(icmp, 6)?),
                    code => EchoAnswer::Unreachable(source, code),
                })
        }
        _ => None,
    }
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

/// A completed handshake per attempt, each from a new local port.
fn connect(
    target: &Target,
    settings: Settings,
    ports: &mut impl Iterator<Item = u16>,
) -> io::Result<ProbeOutcome> {
    let port = target.port.unwrap_or_default();
    let mut outcome = ProbeOutcome::default();
    for _ in 0..settings.count {
        let domain = if target.address.is_ipv4() {
            libc::AF_INET
        } else {
            libc::AF_INET6
        };
        let fd = sock::socket(domain, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0)?;
        sock::bind(&fd, SocketAddr::new(settings.workload, next_port(ports)?))?;
        let (sa, sa_len) = sock::sockaddr(SocketAddr::new(target.address, port));
        let started = Instant::now();
        // SAFETY: sa is a valid socket address for its length.
        let result = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                &sa as *const libc::sockaddr_storage as *const libc::sockaddr,
                sa_len,
            )
        };
        outcome.sent += 1;
        if result < 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINPROGRESS) {
                outcome.error = Some(describe(&error));
                continue;
            }
        }
        if sock::poll(&[fd.as_raw_fd()], libc::POLLOUT, settings.timeout)?.is_empty() {
            outcome.error = Some("no reply".into());
            continue;
        }
        match sock::take_error(&fd)? {
            None => {
                outcome.received += 1;
                outcome
                    .rtts_ms
                    .push(started.elapsed().as_secs_f64() * 1000.0);
            }
            Some(error) => {
                outcome.refused |= error.raw_os_error() == Some(libc::ECONNREFUSED);
                outcome.error = Some(describe(&error));
            }
        }
    }
    Ok(outcome)
}

/// A DNS query (the root's NS records) per attempt; answered means a response with its ID.
fn dns_query(
    target: &Target,
    settings: Settings,
    identity: &Identity,
    ports: &mut impl Iterator<Item = u16>,
) -> io::Result<ProbeOutcome> {
    let port = target.port.unwrap_or(crate::params::DNS_PORT);
    let socket = UdpSocket::bind(SocketAddr::new(settings.workload, next_port(ports)?))?;
    socket.connect(SocketAddr::new(target.address, port))?;
    let mut outcome = ProbeOutcome::default();
    for attempt in 0..settings.count as u16 {
        let id = identity.markers.icmp_id.wrapping_add(attempt);
        let started = Instant::now();
        if let Err(error) = socket.send(&dns_query_bytes(id)) {
            outcome.error = Some(describe(&error));
            continue;
        }
        outcome.sent += 1;
        let deadline = started + settings.timeout;
        loop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                outcome.error = Some("no reply".into());
                break;
            };
            socket.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
            let mut buffer = [0u8; 512];
            match socket.recv(&mut buffer) {
                Ok(len) if is_dns_answer(&buffer[..len], id) => {
                    outcome.received += 1;
                    outcome
                        .rtts_ms
                        .push(started.elapsed().as_secs_f64() * 1000.0);
                    break;
                }
                Ok(_) => {}
                Err(error) => {
                    // ICMP port unreachable: the target's host itself answered.
                    outcome.refused |= error.raw_os_error() == Some(libc::ECONNREFUSED);
                    outcome.error = Some(describe(&error));
                    break;
                }
            }
        }
    }
    Ok(outcome)
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
