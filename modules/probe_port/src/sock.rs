//! The few raw socket calls std has no type for (packet and raw ICMP sockets, a TCP connect
//! from a chosen address), each wrapped once.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// `socket(2)` as an owned descriptor.
pub fn socket(domain: i32, kind: i32, protocol: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; a non-negative result is a new descriptor we own.
    let fd = unsafe { libc::socket(domain, kind | libc::SOCK_CLOEXEC, protocol) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by socket(2) and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

pub fn sockaddr_in(address: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: address.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*address.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

pub fn bind_v4(fd: &OwnedFd, address: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr_in(address);
    // SAFETY: sa is a valid sockaddr_in for the given length.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sa as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

pub fn sendto_v4(fd: &OwnedFd, bytes: &[u8], to: Ipv4Addr) -> io::Result<()> {
    let sa = sockaddr_in(SocketAddrV4::new(to, 0));
    // SAFETY: bytes and sa are valid for their lengths.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            bytes.as_ptr() as *const libc::c_void,
            bytes.len(),
            0,
            &sa as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Waits until one of `fds` has `events`, at most `timeout`; the ready ones' indexes.
pub fn poll(fds: &[RawFd], events: i16, timeout: Duration) -> io::Result<Vec<usize>> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
        .collect();
    let millis = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: polls is a valid array of its length.
    let ready = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, millis) };
    if ready < 0 {
        let error = io::Error::last_os_error();
        if error.kind() == io::ErrorKind::Interrupted {
            return Ok(Vec::new());
        }
        return Err(error);
    }
    Ok(polls
        .iter()
        .enumerate()
        .filter(|(_, p)| p.revents != 0)
        .map(|(i, _)| i)
        .collect())
}

/// Waits until `deadline` for the next datagram on `fd`; its length, or `None` when time is up.
pub fn recv_until(fd: &OwnedFd, deadline: Instant, buffer: &mut [u8]) -> io::Result<Option<usize>> {
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if poll(&[fd.as_raw_fd()], libc::POLLIN, left)?.is_empty() {
            continue;
        }
        // SAFETY: buffer is valid for its length.
        let len = unsafe {
            libc::recv(
                fd.as_raw_fd(),
                buffer.as_mut_ptr() as *mut libc::c_void,
                buffer.len(),
                0,
            )
        };
        if len >= 0 {
            return Ok(Some(len as usize));
        }
    }
    Ok(None)
}

/// `setsockopt` of one int.
pub fn set_int_option(fd: &OwnedFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: value lives for the call and has the given length.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            &value as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// `getsockopt(SO_ERROR)`: the outcome of a non-blocking connect.
pub fn take_error(fd: &OwnedFd) -> io::Result<Option<io::Error>> {
    let mut value: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: value and len are valid for writing.
    check(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut value as *mut i32 as *mut libc::c_void,
            &mut len,
        )
    })?;
    Ok((value != 0).then(|| io::Error::from_raw_os_error(value)))
}

/// The one's-complement checksum of ICMP and IP headers.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes
        .chunks(2)
        .map(|pair| u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// `address` as a `sockaddr_storage` (IPv4 or IPv6) and its length.
pub fn sockaddr(address: std::net::SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; the family's fields are set below.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match address {
        std::net::SocketAddr::V4(v4) => {
            let sa = sockaddr_in(v4);
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sa) };
            (
                storage,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        std::net::SocketAddr::V6(v6) => {
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: 0,
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sa) };
            (
                storage,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}

pub fn bind(fd: &OwnedFd, address: std::net::SocketAddr) -> io::Result<()> {
    let (sa, len) = sockaddr(address);
    // SAFETY: sa is valid for len bytes.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sa as *const _ as *const libc::sockaddr,
            len,
        )
    })
    .map(|_| ())
}

/// `sendto` of `bytes` to `to` (port 0: raw sockets).
pub fn sendto(fd: &OwnedFd, bytes: &[u8], to: std::net::IpAddr) -> io::Result<()> {
    let (sa, len) = sockaddr(std::net::SocketAddr::new(to, 0));
    // SAFETY: bytes and sa are valid for their lengths.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            bytes.as_ptr() as *const libc::c_void,
            bytes.len(),
            0,
            &sa as *const _ as *const libc::sockaddr,
            len,
        )
    };
    if sent < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Waits until `deadline` for the next IPv6 datagram on `fd`; its length and source, or
/// `None` when time is up (a raw ICMPv6 socket gives no IPv6 header: the source is here).
pub fn recv_from_v6_until(
    fd: &OwnedFd,
    deadline: Instant,
    buffer: &mut [u8],
) -> io::Result<Option<(usize, std::net::Ipv6Addr)>> {
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if poll(&[fd.as_raw_fd()], libc::POLLIN, left)?.is_empty() {
            continue;
        }
        // SAFETY: zeroed sockaddr_in6 is valid; buffer and from are valid for their lengths.
        let mut from: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
        let mut from_len = std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
        let len = unsafe {
            libc::recvfrom(
                fd.as_raw_fd(),
                buffer.as_mut_ptr() as *mut libc::c_void,
                buffer.len(),
                0,
                &mut from as *mut _ as *mut libc::sockaddr,
                &mut from_len,
            )
        };
        if len >= 0 {
            return Ok(Some((
                len as usize,
                std::net::Ipv6Addr::from(from.sin6_addr.s6_addr),
            )));
        }
    }
    Ok(None)
}

/// Binds packet socket `fd` to interface `index` (0: every interface, each frame naming its
/// own) for frames of `protocol` (host order; `ETH_P_ALL` for all). A packet socket opened with
/// protocol 0 receives nothing until this, so a filter attached before it sees every frame.
pub fn bind_packet(fd: &OwnedFd, index: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: zeroed sockaddr_ll is valid; the fields set are the ones bind reads.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = index as i32;
    // SAFETY: sll is valid for its length.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// `PACKET_AUXDATA`: each frame read comes with the tag the kernel took out of it.
pub const PACKET_AUXDATA: i32 = 8;
const PACKET_STATISTICS: i32 = 6;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;

/// `struct tpacket_auxdata`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct AuxData {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    vlan_tci: u16,
    vlan_tpid: u16,
}

/// One frame read from a packet socket with `PACKET_AUXDATA` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Its length on the wire (the buffer may hold less).
    pub len: usize,
    pub ifindex: u32,
    /// The link-level protocol, host order.
    pub protocol: u16,
    /// `PACKET_HOST`, `PACKET_OUTGOING`, …
    pub packet_type: u8,
    /// The VLAN tag the kernel took out of the frame (a VLAN offload, or the stack's own
    /// untagging before the capture): (protocol identifier, TCI), outer to what is left.
    pub tag: Option<(u16, u16)>,
}

/// The next queued frame into `buffer`, or `None` when the queue is empty.
pub fn receive_packet(fd: &OwnedFd, buffer: &mut [u8]) -> io::Result<Option<Received>> {
    // Room for one cmsghdr with a tpacket_auxdata (20 bytes), aligned.
    let mut control = [0u64; 8];
    // SAFETY: zeroed sockaddr_ll and msghdr are valid; every pointer set below outlives the call.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    let mut iov = libc::iovec {
        iov_base: buffer.as_mut_ptr() as *mut libc::c_void,
        iov_len: buffer.len(),
    };
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = &mut sll as *mut libc::sockaddr_ll as *mut libc::c_void;
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    let len = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, 0) };
    if len < 0 {
        let error = io::Error::last_os_error();
        return match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(error),
        };
    }
    let mut tag = None;
    // SAFETY: msg was filled by recvmsg; the CMSG macros walk within msg_controllen.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_PACKET && (*cmsg).cmsg_type == PACKET_AUXDATA {
                let aux = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const AuxData);
                if aux.status & TP_STATUS_VLAN_VALID != 0 {
                    // Kernels that do not say the protocol put 802.1Q tags there.
                    let tpid = if aux.status & TP_STATUS_VLAN_TPID_VALID != 0 {
                        aux.vlan_tpid
                    } else {
                        0x8100
                    };
                    tag = Some((tpid, aux.vlan_tci));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(Some(Received {
        len: len as usize,
        ifindex: sll.sll_ifindex as u32,
        protocol: u16::from_be(sll.sll_protocol),
        packet_type: sll.sll_pkttype,
        tag,
    }))
}

/// `struct tpacket_stats`.
#[repr(C)]
#[derive(Default)]
struct PacketStatistics {
    packets: u32,
    drops: u32,
}

/// Frames the kernel dropped from packet socket `fd` since it was opened (its queue was full).
pub fn packet_drops(fd: &OwnedFd) -> io::Result<u64> {
    let mut stats = PacketStatistics::default();
    let mut len = std::mem::size_of::<PacketStatistics>() as libc::socklen_t;
    // SAFETY: stats and len are valid for writing; the kernel writes at most len bytes.
    check(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            PACKET_STATISTICS,
            &mut stats as *mut PacketStatistics as *mut libc::c_void,
            &mut len,
        )
    })?;
    Ok(u64::from(stats.drops))
}

/// `poll(2)` on descriptors each waiting for its own events, at most `timeout`; every entry's
/// `revents` is set (zero when it is not ready). Interrupted counts as nothing ready.
pub fn poll_each(polls: &mut [libc::pollfd], timeout: Duration) -> io::Result<()> {
    for poll in polls.iter_mut() {
        poll.revents = 0;
    }
    // Rounded up: a wait cut to 0 ms would spin until the deadline.
    let millis = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: polls is a valid array of its length.
    let ready = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, millis) };
    if ready < 0 {
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    Ok(())
}

/// The next datagram queued on `fd` without waiting, and its source address: `None` when
/// nothing is queued.
pub fn recv_from_now(
    fd: &OwnedFd,
    buffer: &mut [u8],
) -> io::Result<Option<(usize, std::net::IpAddr)>> {
    // SAFETY: a zeroed sockaddr_storage is valid; buffer and from are valid for their lengths.
    let mut from: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut from_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let len = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buffer.as_mut_ptr() as *mut libc::c_void,
            buffer.len(),
            libc::MSG_DONTWAIT,
            &mut from as *mut _ as *mut libc::sockaddr,
            &mut from_len,
        )
    };
    if len < 0 {
        let error = io::Error::last_os_error();
        return match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(error),
        };
    }
    let source = match i32::from(from.ss_family) {
        libc::AF_INET6 => {
            // SAFETY: the kernel wrote a sockaddr_in6 for this family.
            let v6 = unsafe { &*(&from as *const _ as *const libc::sockaddr_in6) };
            std::net::IpAddr::from(v6.sin6_addr.s6_addr)
        }
        _ => {
            // SAFETY: an AF_INET (or unset, all-zero) sockaddr_in fits in the storage.
            let v4 = unsafe { &*(&from as *const _ as *const libc::sockaddr_in) };
            std::net::IpAddr::from(u32::from_be(v4.sin_addr.s_addr).to_be_bytes())
        }
    };
    Ok(Some((len as usize, source)))
}
