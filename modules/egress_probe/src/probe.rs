//! The probes, sent from inside the workload's namespace (call on a thread that entered it):
//! ICMP echo, a completed TCP handshake, a DNS query answered. Each waits at most `timeout` for
//! its answer; everything is bounded by count × timeout per target.

use crate::frame::Markers;
use crate::params::{Proto, Target};
use crate::report::ProbeOutcome;
use crate::sock;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const ICMP_ECHO_REQUEST: u8 = 8;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_UNREACHABLE: u8 = 3;
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
    let mut random = [0u8; NONCE_LEN + 2];
    fill_random(&mut random)?;
    let mut nonce = [0u8; NONCE_LEN];
    nonce.copy_from_slice(&random[..NONCE_LEN]);
    let wanted: usize = targets
        .iter()
        .map(|t| match t.proto {
            Proto::Icmp => 0,
            Proto::Tcp => settings.count as usize,
            Proto::Udp => 1,
        })
        .sum();
    let room = usize::from(PORT_RANGE.1 - PORT_RANGE.0);
    if wanted > room {
        return Err(format!(
            "targets: {wanted} TCP attempts and UDP targets need more local ports than the              probe has ({room}); give fewer targets or a lower count"
        ));
    }
    let offset = usize::from(u16::from_le_bytes([
        random[NONCE_LEN],
        random[NONCE_LEN + 1],
    ])) % (room - wanted + 1);
    let mut next = usize::from(PORT_RANGE.0) + offset;
    let mut local_ports = Vec::with_capacity(wanted);
    for target in targets {
        let ports = match target.proto {
            Proto::Icmp => 0,
            Proto::Tcp => settings.count as usize,
            Proto::Udp => 1,
        };
        for _ in 0..ports {
            local_ports.push((target.proto, next as u16));
            next += 1;
        }
    }
    Ok(Identity {
        markers: Markers {
            workload: settings.workload,
            icmp_id,
            local_ports,
        },
        nonce,
    })
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
    pub workload: Ipv4Addr,
    pub count: u32,
    /// The wait for each answer.
    pub timeout: Duration,
}

/// Sends every target's probes as `identity` says; the outcomes, in the order of `targets`.
pub fn run_all(targets: &[Target], settings: Settings, identity: &Identity) -> Vec<ProbeOutcome> {
    let mut ports = identity.markers.local_ports.iter().map(|&(_, port)| port);
    targets
        .iter()
        .map(|target| {
            let result = match target.proto {
                Proto::Icmp => ping(target.address, settings, identity),
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

fn ping(target: Ipv4Addr, settings: Settings, identity: &Identity) -> io::Result<ProbeOutcome> {
    let (id, nonce) = (identity.markers.icmp_id, &identity.nonce);
    let fd = sock::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP)?;
    sock::bind_v4(&fd, SocketAddrV4::new(settings.workload, 0))?;
    let mut outcome = ProbeOutcome::default();
    for sequence in 0..settings.count as u16 {
        let sent_at = Instant::now();
        if let Err(error) = sock::sendto_v4(&fd, &echo_request(id, sequence, nonce), target) {
            outcome.error = Some(describe(&error));
            continue;
        }
        outcome.sent += 1;
        let deadline = sent_at + settings.timeout;
        let mut answered = false;
        let mut buffer = [0u8; 1500];
        while let Some(len) = sock::recv_until(&fd, deadline, &mut buffer)? {
            let echo = Echo {
                target,
                id,
                sequence,
                nonce,
            };
            match echo_answer(&buffer[..len], &echo) {
                Some(EchoAnswer::Reply) => {
                    outcome.received += 1;
                    outcome
                        .rtts_ms
                        .push(sent_at.elapsed().as_secs_f64() * 1000.0);
                    answered = true;
                    break;
                }
                Some(EchoAnswer::Unreachable(from)) => {
                    outcome.error = Some(format!("unreachable (ICMP from {from})"));
                    break;
                }
                None => {}
            }
        }
        if !answered && outcome.error.is_none() {
            outcome.error = Some("no reply".into());
        }
    }
    Ok(outcome)
}

/// An ICMP echo request carrying the run's nonce.
pub fn echo_request(id: u16, sequence: u16, nonce: &[u8; NONCE_LEN]) -> Vec<u8> {
    let mut packet = vec![ICMP_ECHO_REQUEST, 0, 0, 0];
    packet.extend_from_slice(&id.to_be_bytes());
    packet.extend_from_slice(&sequence.to_be_bytes());
    packet.extend_from_slice(PAYLOAD);
    packet.extend_from_slice(nonce);
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
}

#[derive(Debug, PartialEq, Eq)]
pub enum EchoAnswer {
    Reply,
    /// A destination-unreachable about our request, from this router.
    Unreachable(Ipv4Addr),
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
                && icmp.get(8..)? == [PAYLOAD, &echo.nonce[..]].concat() =>
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
                .then_some(EchoAnswer::Unreachable(source))
        }
        _ => None,
    }
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
        let fd = sock::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0)?;
        sock::bind_v4(&fd, SocketAddrV4::new(settings.workload, next_port(ports)?))?;
        let sa = sock::sockaddr_in(SocketAddrV4::new(target.address, port));
        let started = Instant::now();
        // SAFETY: sa is a valid sockaddr_in for its length.
        let result = unsafe {
            libc::connect(
                fd.as_raw_fd(),
                &sa as *const libc::sockaddr_in as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
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
            Some(error) => outcome.error = Some(describe(&error)),
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
    let socket = UdpSocket::bind(SocketAddrV4::new(settings.workload, next_port(ports)?))?;
    socket.connect(SocketAddrV4::new(target.address, port))?;
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
