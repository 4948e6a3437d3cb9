//! Every target of one workload probed at once, on the workload's one thread (call [`run`] on
//! a thread inside the workload's namespace). A target's attempts follow one another, as a
//! ping's do, but no target waits for another: a workload's probing takes at most one
//! target's `count` × `timeout`, whatever the number of targets.
//!
//! Sockets, at most: one raw ICMP socket for all echo targets (answers are told apart by the
//! target's address, the echo identifier, a sequence number of the target's own and the run's
//! nonce), one UDP socket per DNS target (its own local port, which the capture keys on), and
//! one TCP socket per TCP target while its attempt is in flight.

use crate::params::{Proto, Target};
use crate::probe::{
    echo6_answer, echo_answer, echo_request_padded, is_dns_answer, Echo, Echo6, EchoAnswer,
    EchoAnswer6, Identity, Settings, IPV4_ECHO_OVERHEAD, IPV6_ECHO_OVERHEAD,
};
use crate::report::ProbeOutcome;
use deevnet_probe_port::sock;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

const IP_MTU_DISCOVER: i32 = 10;
/// DF set on every packet, whatever path MTU the kernel learned: the probe's size is the
/// operator's, and a frag-needed must come back each time.
const IP_PMTUDISC_PROBE: i32 = 3;
const IPV6_MTU_DISCOVER: i32 = 23;
const IPV6_PMTUDISC_PROBE: i32 = 3;
const IPV6_DONTFRAG: i32 = 62;
const ICMPV6_ECHO_REQUEST: u8 = 128;
/// The shared echo socket's receive buffer: 1 MiB per workload, 128 MiB for the largest run.
const ECHO_BUFFER: i32 = 1 << 20;

/// Probes every target as `identity` says; the outcomes, in the order of `targets`.
pub fn run(targets: &[Target], settings: Settings, identity: &Identity) -> Vec<ProbeOutcome> {
    let icmp = EchoSocket::open(targets, settings);
    let mut ports = identity.markers.local_ports.iter().map(|&(_, port)| port);
    let mut runs: Vec<TargetRun> = targets
        .iter()
        .enumerate()
        .map(|(index, target)| TargetRun::new(index, target, settings, &icmp, &mut ports))
        .collect();
    let mut buffer = vec![0u8; icmp.as_ref().map_or(0, |socket| socket.buffer_len)];
    loop {
        let now = Instant::now();
        for run in &mut runs {
            run.start_next(now, settings, identity, &icmp);
        }
        let Some(deadline) = runs
            .iter()
            .filter_map(|run| run.in_flight.as_ref().map(|a| a.deadline))
            .min()
        else {
            break;
        };
        let waiting = Waiting::of(&runs, &icmp);
        let mut polls = waiting.polls();
        if let Err(error) = sock::poll_each(
            &mut polls,
            deadline.saturating_duration_since(Instant::now()),
        ) {
            for run in runs.iter_mut().filter(|run| run.in_flight.is_some()) {
                run.fail(&error);
            }
            continue;
        }
        for (poll, waiter) in polls.iter().zip(&waiting.waiters) {
            if poll.revents == 0 {
                continue;
            }
            match *waiter {
                Waiter::Echoes => {
                    if let Ok(socket) = &icmp {
                        socket.read_answers(&mut buffer, &mut runs, identity)
                    }
                }
                Waiter::Target(index) => runs[index].on_ready(identity),
            }
        }
        let now = Instant::now();
        for run in &mut runs {
            run.expire(now);
        }
    }
    runs.into_iter().map(|run| run.outcome).collect()
}

/// The error as the result shows it: `refused`, `unreachable`, or the system's words.
pub fn describe(error: &io::Error) -> String {
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

/// The raw ICMP socket every echo target of the workload shares.
struct EchoSocket {
    fd: OwnedFd,
    buffer_len: usize,
}

impl EchoSocket {
    /// `None` without echo targets; an error that every echo target then reports.
    fn open(targets: &[Target], settings: Settings) -> Result<EchoSocket, Option<String>> {
        let echoes: Vec<&Target> = targets.iter().filter(|t| t.proto == Proto::Icmp).collect();
        if echoes.is_empty() {
            return Err(None);
        }
        let sized = echoes.iter().any(|target| target.size.is_some());
        let opened = match settings.workload {
            IpAddr::V4(_) => sock::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP)
                .and_then(|fd| {
                    if sized {
                        sock::set_int_option(
                            &fd,
                            libc::IPPROTO_IP,
                            IP_MTU_DISCOVER,
                            IP_PMTUDISC_PROBE,
                        )?;
                    }
                    Ok(fd)
                }),
            IpAddr::V6(_) => sock::socket(libc::AF_INET6, libc::SOCK_RAW, libc::IPPROTO_ICMPV6)
                .and_then(|fd| {
                    if sized {
                        sock::set_int_option(
                            &fd,
                            libc::IPPROTO_IPV6,
                            IPV6_MTU_DISCOVER,
                            IPV6_PMTUDISC_PROBE,
                        )?;
                        sock::set_int_option(&fd, libc::IPPROTO_IPV6, IPV6_DONTFRAG, 1)?;
                    }
                    Ok(fd)
                }),
        }
        .and_then(|fd| {
            sock::bind(&fd, SocketAddr::new(settings.workload, 0))?;
            // Room for what a VNet neighbour queued for the workload's address while it was
            // not yet up (its ARP queue, flushed at once): a full buffer would drop the
            // answers. Forced past rmem_max, as root may; a kernel that refuses keeps its own.
            let _ = sock::set_int_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, ECHO_BUFFER);
            Ok(fd)
        })
        .map_err(|error| Some(describe(&error)))?;
        let largest = echoes
            .iter()
            .map(|target| padding(target, settings))
            .max()
            .unwrap_or(0);
        Ok(EchoSocket {
            fd: opened,
            buffer_len: 256 + IPV6_ECHO_OVERHEAD.max(IPV4_ECHO_OVERHEAD) + largest,
        })
    }

    fn send(&self, request: &[u8], to: IpAddr) -> io::Result<()> {
        sock::sendto(&self.fd, request, to)
    }

    /// Every answer queued now, each given to the echo target it is about.
    fn read_answers(&self, buffer: &mut [u8], runs: &mut [TargetRun], identity: &Identity) {
        loop {
            let (len, from) = match sock::recv_from_now(&self.fd, buffer) {
                Ok(Some(received)) => received,
                Ok(None) => return,
                Err(error) => {
                    for run in runs.iter_mut().filter(|run| run.is_echo_in_flight()) {
                        run.fail(&error);
                    }
                    return;
                }
            };
            let packet = &buffer[..len];
            if let Some((index, answer)) = runs
                .iter()
                .enumerate()
                .find_map(|(index, run)| Some((index, run.echo_answer(packet, from, identity)?)))
            {
                runs[index].answered(answer);
            }
        }
    }
}

/// What came back about one echo, either family.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Reply,
    /// Fragmentation needed / packet too big, from this router, with the MTU it names.
    TooBig(IpAddr, u16),
    /// Destination unreachable, from this router, with its (ICMPv4-equivalent) code.
    Unreachable(IpAddr, u8),
}

/// How one target is probed.
enum Way {
    /// ICMP echoes on the shared socket; this target's sequence numbers start at
    /// `first_sequence` (one block per target, so two targets' answers never mix).
    Echo { padding: usize, first_sequence: u16 },
    /// A completed TCP handshake per attempt, each from its own planned local port.
    Tcp { port: u16, local_ports: Vec<u16> },
    /// A DNS query per attempt on one socket bound to the target's planned local port.
    Dns { socket: UdpSocket },
    /// Could not start; the outcome says why.
    Broken,
}

/// One attempt waiting for its answer.
struct Attempt {
    number: u32,
    sent_at: Instant,
    deadline: Instant,
    /// The attempt's own socket (TCP).
    socket: Option<OwnedFd>,
}

/// One target's attempts and what they found.
struct TargetRun<'a> {
    target: &'a Target,
    way: Way,
    outcome: ProbeOutcome,
    started: u32,
    count: u32,
    timeout: Duration,
    in_flight: Option<Attempt>,
}

impl<'a> TargetRun<'a> {
    fn new(
        index: usize,
        target: &'a Target,
        settings: Settings,
        icmp: &Result<EchoSocket, Option<String>>,
        ports: &mut impl Iterator<Item = u16>,
    ) -> Self {
        let mut run = TargetRun {
            target,
            way: Way::Broken,
            outcome: ProbeOutcome::default(),
            started: 0,
            count: settings.count,
            timeout: settings.timeout,
            in_flight: None,
        };
        if target.address.is_ipv4() != settings.workload.is_ipv4() {
            run.outcome.error = Some("a probe mixes IPv4 and IPv6".into());
            return run;
        }
        let way = match target.proto {
            Proto::Icmp => match icmp {
                Ok(_) => Ok(Way::Echo {
                    padding: padding(target, settings),
                    first_sequence: (index as u32 * settings.count) as u16,
                }),
                Err(error) => Err(error.clone().unwrap_or_default()),
            },
            Proto::Tcp => {
                let local_ports: Vec<u16> = ports.take(settings.count as usize).collect();
                if local_ports.len() < settings.count as usize {
                    Err("more probes than planned local ports".into())
                } else {
                    Ok(Way::Tcp {
                        port: target.port.unwrap_or_default(),
                        local_ports,
                    })
                }
            }
            Proto::Udp => match ports.next() {
                None => Err("more probes than planned local ports".into()),
                Some(local) => dns_socket(target, settings, local)
                    .map(|socket| Way::Dns { socket })
                    .map_err(|error| describe(&error)),
            },
        };
        match way {
            Ok(way) => run.way = way,
            Err(error) => run.outcome.error = Some(error),
        }
        run
    }

    fn is_done(&self) -> bool {
        self.in_flight.is_none() && (self.started >= self.count || matches!(self.way, Way::Broken))
    }

    fn is_echo_in_flight(&self) -> bool {
        matches!(self.way, Way::Echo { .. }) && self.in_flight.is_some()
    }

    /// Sends the next attempt when none is in flight; an attempt that fails to send is
    /// recorded and the one after it sent at once.
    fn start_next(
        &mut self,
        now: Instant,
        settings: Settings,
        identity: &Identity,
        icmp: &Result<EchoSocket, Option<String>>,
    ) {
        while !self.is_done() && self.in_flight.is_none() {
            let number = self.started;
            self.started += 1;
            let sent = match &self.way {
                Way::Echo {
                    padding,
                    first_sequence,
                } => {
                    let sequence = first_sequence.wrapping_add(number as u16);
                    let request = echo_request(identity, sequence, *padding, settings.workload);
                    match icmp {
                        Ok(socket) => socket.send(&request, self.target.address).map(|()| None),
                        Err(_) => Err(io::Error::other("no ICMP socket")),
                    }
                }
                Way::Tcp { port, local_ports } => {
                    match tcp_connect(self.target, settings, local_ports[number as usize], *port) {
                        Ok(socket) => Ok(Some(socket)),
                        Err(TcpStart::Setup(error)) => {
                            // The socket itself could not be made: nothing was sent.
                            self.outcome = ProbeOutcome {
                                error: Some(describe(&error)),
                                ..ProbeOutcome::default()
                            };
                            self.way = Way::Broken;
                            return;
                        }
                        Err(TcpStart::Connect(error)) => {
                            self.outcome.sent += 1;
                            self.outcome.error = Some(describe(&error));
                            continue;
                        }
                    }
                }
                Way::Dns { socket } => {
                    let id = identity.markers.icmp_id.wrapping_add(number as u16);
                    socket
                        .send(&crate::probe::dns_query_bytes(id))
                        .map(|_| None)
                }
                Way::Broken => return,
            };
            match sent {
                Ok(socket) => {
                    self.outcome.sent += 1;
                    self.in_flight = Some(Attempt {
                        number,
                        sent_at: now,
                        deadline: now + self.timeout,
                        socket,
                    });
                }
                Err(error) => self.outcome.error = Some(describe(&error)),
            }
        }
    }

    /// What `packet` (from `from`) says about this target's echo in flight.
    fn echo_answer(&self, packet: &[u8], from: IpAddr, identity: &Identity) -> Option<Answer> {
        let (
            Way::Echo {
                padding,
                first_sequence,
            },
            Some(attempt),
        ) = (&self.way, &self.in_flight)
        else {
            return None;
        };
        let (id, nonce) = (identity.markers.icmp_id, &identity.nonce);
        let sequence = first_sequence.wrapping_add(attempt.number as u16);
        match (self.target.address, from) {
            (IpAddr::V4(target), _) => {
                let echo = Echo {
                    target,
                    id,
                    sequence,
                    nonce,
                    padding: *padding,
                };
                Some(match echo_answer(packet, &echo)? {
                    EchoAnswer::Reply => Answer::Reply,
                    EchoAnswer::FragNeeded(from, mtu) => Answer::TooBig(from.into(), mtu),
                    EchoAnswer::Unreachable(from, code) => Answer::Unreachable(from.into(), code),
                })
            }
            (IpAddr::V6(target), IpAddr::V6(from)) => {
                let echo = Echo6 {
                    target,
                    id,
                    sequence,
                    nonce,
                    padding: *padding,
                };
                Some(match echo6_answer(packet, from, &echo)? {
                    EchoAnswer6::Reply => Answer::Reply,
                    EchoAnswer6::PacketTooBig(mtu) => Answer::TooBig(from.into(), mtu),
                    EchoAnswer6::Unreachable(code) => Answer::Unreachable(from.into(), code),
                })
            }
            _ => None,
        }
    }

    /// The echo in flight was answered.
    fn answered(&mut self, answer: Answer) {
        let Some(attempt) = self.in_flight.take() else {
            return;
        };
        match answer {
            Answer::Reply => self.received(&attempt),
            Answer::TooBig(from, mtu) => {
                self.outcome.frag_needed = Some((from, mtu));
                self.outcome.error = Some(format!("fragmentation needed (MTU {mtu}, from {from})"));
            }
            Answer::Unreachable(from, code) => {
                self.outcome.unreachable = Some((from, code));
                self.outcome.error = Some(format!("unreachable (ICMP from {from})"));
            }
        }
    }

    fn received(&mut self, attempt: &Attempt) {
        self.outcome.received += 1;
        self.outcome
            .rtts_ms
            .push(attempt.sent_at.elapsed().as_secs_f64() * 1000.0);
    }

    /// The attempt's own socket (TCP, DNS) is ready: its answer, its error, or nothing yet.
    fn on_ready(&mut self, identity: &Identity) {
        let Some(attempt) = self.in_flight.take() else {
            return;
        };
        match &self.way {
            Way::Tcp { .. } => {
                let Some(socket) = &attempt.socket else {
                    return;
                };
                match sock::take_error(socket) {
                    Ok(None) => self.received(&attempt),
                    Ok(Some(error)) | Err(error) => self.refused_or(&error),
                }
            }
            Way::Dns { socket } => {
                let id = identity.markers.icmp_id.wrapping_add(attempt.number as u16);
                let mut buffer = [0u8; 512];
                loop {
                    match socket.recv(&mut buffer) {
                        Ok(len) if is_dns_answer(&buffer[..len], id) => {
                            return self.received(&attempt);
                        }
                        // Somebody else's datagram, or an earlier attempt's late answer.
                        Ok(_) => {}
                        Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                            self.in_flight = Some(attempt);
                            return;
                        }
                        // ICMP port unreachable: the target's host itself answered.
                        Err(error) => return self.refused_or(&error),
                    }
                }
            }
            Way::Echo { .. } | Way::Broken => self.in_flight = Some(attempt),
        }
    }

    fn refused_or(&mut self, error: &io::Error) {
        self.outcome.refused |= error.raw_os_error() == Some(libc::ECONNREFUSED);
        self.outcome.error = Some(describe(error));
    }

    /// The attempt in flight ends with `error` (a socket that cannot be waited on).
    fn fail(&mut self, error: &io::Error) {
        if self.in_flight.take().is_some() {
            self.outcome.error = Some(describe(error));
        }
    }

    /// The attempt in flight gets no more time after its deadline.
    fn expire(&mut self, now: Instant) {
        if self.in_flight.as_ref().is_none_or(|a| a.deadline > now) {
            return;
        }
        self.in_flight = None;
        // An echo keeps a more telling error of an earlier attempt (unreachable, too big).
        if !matches!(self.way, Way::Echo { .. }) || self.outcome.error.is_none() {
            self.outcome.error = Some("no reply".into());
        }
    }
}

/// Who waits on each descriptor of one `poll`.
enum Waiter {
    Echoes,
    Target(usize),
}

/// The descriptors of one round of waiting, and whom each is for.
struct Waiting {
    fds: Vec<(libc::c_int, i16)>,
    waiters: Vec<Waiter>,
}

impl Waiting {
    fn of(runs: &[TargetRun], icmp: &Result<EchoSocket, Option<String>>) -> Waiting {
        let mut waiting = Waiting {
            fds: Vec::new(),
            waiters: Vec::new(),
        };
        if let Ok(socket) = icmp {
            if runs.iter().any(TargetRun::is_echo_in_flight) {
                waiting.fds.push((socket.fd.as_raw_fd(), libc::POLLIN));
                waiting.waiters.push(Waiter::Echoes);
            }
        }
        for (index, run) in runs.iter().enumerate() {
            let Some(attempt) = &run.in_flight else {
                continue;
            };
            let fd = match (&run.way, &attempt.socket) {
                (Way::Tcp { .. }, Some(socket)) => (socket.as_raw_fd(), libc::POLLOUT),
                (Way::Dns { socket }, _) => (socket.as_raw_fd(), libc::POLLIN),
                _ => continue,
            };
            waiting.fds.push(fd);
            waiting.waiters.push(Waiter::Target(index));
        }
        waiting
    }

    fn polls(&self) -> Vec<libc::pollfd> {
        self.fds
            .iter()
            .map(|&(fd, events)| libc::pollfd {
                fd,
                events,
                revents: 0,
            })
            .collect()
    }
}

/// The padding a full-size echo needs after the fixed part (headers included).
fn padding(target: &Target, settings: Settings) -> usize {
    let overhead = match settings.workload {
        IpAddr::V4(_) => IPV4_ECHO_OVERHEAD,
        IpAddr::V6(_) => IPV6_ECHO_OVERHEAD,
    };
    match target.size {
        None => 0,
        Some(crate::params::Size::Bytes(size)) => usize::from(size).saturating_sub(overhead),
        Some(crate::params::Size::Mtu) => usize::from(settings.mtu).saturating_sub(overhead),
    }
}

/// The echo request of `sequence`, in the workload's family.
fn echo_request(identity: &Identity, sequence: u16, padding: usize, family: IpAddr) -> Vec<u8> {
    let mut request =
        echo_request_padded(identity.markers.icmp_id, sequence, &identity.nonce, padding);
    if family.is_ipv6() {
        // The kernel fills in an ICMPv6 checksum (it covers the IPv6 pseudo-header).
        request[0] = ICMPV6_ECHO_REQUEST;
        request[2..4].copy_from_slice(&[0, 0]);
    }
    request
}

/// Why a TCP attempt did not start waiting.
enum TcpStart {
    /// The socket could not be made or bound: nothing was sent.
    Setup(io::Error),
    /// The connect failed at once (no route, …): an attempt that got its answer.
    Connect(io::Error),
}

/// A non-blocking connect from `local` to the target: the socket to wait on.
fn tcp_connect(
    target: &Target,
    settings: Settings,
    local: u16,
    port: u16,
) -> Result<OwnedFd, TcpStart> {
    let domain = if target.address.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    let fd = sock::socket(domain, libc::SOCK_STREAM | libc::SOCK_NONBLOCK, 0)
        .map_err(TcpStart::Setup)?;
    sock::bind(&fd, SocketAddr::new(settings.workload, local)).map_err(TcpStart::Setup)?;
    let (sa, sa_len) = sock::sockaddr(SocketAddr::new(target.address, port));
    // SAFETY: sa is a valid socket address for its length.
    let result = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            &sa as *const libc::sockaddr_storage as *const libc::sockaddr,
            sa_len,
        )
    };
    if result < 0 {
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(TcpStart::Connect(error));
        }
    }
    Ok(fd)
}

/// The DNS target's socket: bound to its planned local port, connected, non-blocking.
fn dns_socket(target: &Target, settings: Settings, local: u16) -> io::Result<UdpSocket> {
    let port = target.port.unwrap_or(crate::params::DNS_PORT);
    let socket = UdpSocket::bind(SocketAddr::new(settings.workload, local))?;
    socket.connect(SocketAddr::new(target.address, port))?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}
