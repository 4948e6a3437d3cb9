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
