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
const PAYLOAD: &[u8] = b"deevnet.net egress_probe";

/// How every target is probed.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The source of every probe.
    pub workload: Ipv4Addr,
    pub count: u32,
    /// The wait for each answer.
    pub timeout: Duration,
}

/// Sends every target's probes; the outcomes (in the order of `targets`) and what marks the
/// probe's packets in captures.
pub fn run_all(
    targets: &[Target],
    settings: Settings,
    icmp_id: u16,
) -> (Vec<ProbeOutcome>, Markers) {
    let workload = settings.workload;
    let mut markers = Markers {
        workload,
        icmp_id,
        local_ports: Vec::new(),
    };
    let outcomes = targets
        .iter()
        .map(|target| {
            let result = match target.proto {
                Proto::Icmp => ping(target.address, settings, icmp_id),
                Proto::Tcp => connect(target, settings, &mut markers),
                Proto::Udp => dns_query(target, settings, &mut markers),
            };
            result.unwrap_or_else(|error| ProbeOutcome {
                error: Some(describe(&error)),
                ..ProbeOutcome::default()
            })
        })
        .collect();
    (outcomes, markers)
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

fn ping(target: Ipv4Addr, settings: Settings, id: u16) -> io::Result<ProbeOutcome> {
    let fd = sock::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP)?;
    sock::bind_v4(&fd, SocketAddrV4::new(settings.workload, 0))?;
    let mut outcome = ProbeOutcome::default();
    for sequence in 0..settings.count as u16 {
        let sent_at = Instant::now();
        if let Err(error) = sock::sendto_v4(&fd, &echo_request(id, sequence), target) {
            outcome.error = Some(describe(&error));
            continue;
        }
        outcome.sent += 1;
        let deadline = sent_at + settings.timeout;
        let mut answered = false;
        let mut buffer = [0u8; 1500];
        while let Some(len) = sock::recv_until(&fd, deadline, &mut buffer)? {
            match echo_answer(&buffer[..len], target, id, sequence) {
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

/// An ICMP echo request.
pub fn echo_request(id: u16, sequence: u16) -> Vec<u8> {
    let mut packet = vec![ICMP_ECHO_REQUEST, 0, 0, 0];
    packet.extend_from_slice(&id.to_be_bytes());
    packet.extend_from_slice(&sequence.to_be_bytes());
    packet.extend_from_slice(PAYLOAD);
    let checksum = sock::internet_checksum(&packet);
    packet[2..4].copy_from_slice(&checksum.to_be_bytes());
    packet
}

#[derive(Debug, PartialEq, Eq)]
pub enum EchoAnswer {
    Reply,
    /// A destination-unreachable about our request, from this router.
    Unreachable(Ipv4Addr),
}

/// What an IPv4 packet a raw ICMP socket received says about echo `id`/`sequence` to `target`.
pub fn echo_answer(packet: &[u8], target: Ipv4Addr, id: u16, sequence: u16) -> Option<EchoAnswer> {
    let header = usize::from(packet.first()? & 0x0f) * 4;
    let source = Ipv4Addr::new(*packet.get(12)?, packet[13], packet[14], packet[15]);
    let icmp = packet.get(header..)?;
    let ident = |at: usize| -> Option<(u16, u16)> {
        let b = icmp.get(at..at + 4)?;
        Some((
            u16::from_be_bytes([b[0], b[1]]),
            u16::from_be_bytes([b[2], b[3]]),
        ))
    };
    match *icmp.first()? {
        ICMP_ECHO_REPLY if source == target && ident(4)? == (id, sequence) => {
            Some(EchoAnswer::Reply)
        }
        ICMP_UNREACHABLE => {
            // The quoted packet: its IP header, then our echo request's first 8 bytes.
            let quoted = icmp.get(8..)?;
            let quoted_header = usize::from(quoted.first()? & 0x0f) * 4;
            let quoted_destination =
                Ipv4Addr::new(*quoted.get(16)?, quoted[17], quoted[18], quoted[19]);
            let echo = quoted.get(quoted_header..quoted_header + 8)?;
            let quoted_id = u16::from_be_bytes([echo[4], echo[5]]);
            (quoted_destination == target && echo[0] == ICMP_ECHO_REQUEST && quoted_id == id)
                .then_some(EchoAnswer::Unreachable(source))
        }
        _ => None,
    }
}

/// A completed handshake per attempt, each from a new local port.
fn connect(target: &Target, settings: Settings, markers: &mut Markers) -> io::Result<ProbeOutcome> {
    let port = target.port.unwrap_or_default();
    let mut outcome = ProbeOutcome::default();
    for _ in 0..settings.count {
        let fd = sock::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0)?;
        sock::bind_v4(&fd, SocketAddrV4::new(settings.workload, 0))?;
        markers
            .local_ports
            .push((Proto::Tcp, sock::local_port(&fd)?));
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
    markers: &mut Markers,
) -> io::Result<ProbeOutcome> {
    let port = target.port.unwrap_or(crate::params::DNS_PORT);
    let socket = UdpSocket::bind(SocketAddrV4::new(settings.workload, 0))?;
    markers
        .local_ports
        .push((Proto::Udp, socket.local_addr()?.port()));
    socket.connect(SocketAddrV4::new(target.address, port))?;
    let mut outcome = ProbeOutcome::default();
    for attempt in 0..settings.count as u16 {
        let id = markers.icmp_id.wrapping_add(attempt);
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
    reply.len() >= 4 && reply[..2] == id.to_be_bytes() && reply[2] & 0x80 != 0
}
