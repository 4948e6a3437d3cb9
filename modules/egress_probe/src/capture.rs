//! Captures on the node's interfaces (AF_PACKET datagram sockets), opened before the first
//! probe and read on a thread of their own until the probes are done. Only IPv4 frames to or
//! from a target are kept, cut to their headers: the classification is `frame.rs`'s.

use crate::frame::{Frame, Packet};
use crate::report::{Capture, Role};
use crate::sock;
use crate::tenant::Interface;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const PACKET_AUXDATA: i32 = 8;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
/// IP and transport headers are all the classification reads.
const KEEP_BYTES: usize = 96;
/// A busy management bridge must not grow the run's memory without bound.
const MAX_FRAMES: usize = 10_000;

/// One open capture.
pub struct CaptureSocket {
    interface: Interface,
    role: Role,
    fd: OwnedFd,
}

impl CaptureSocket {
    /// Opens a capture on `interface` (in the calling thread's namespace: the node's).
    pub fn open(interface: &Interface, role: Role) -> Result<CaptureSocket, String> {
        let fail =
            |what: &str, e: std::io::Error| format!("{what} a capture on {}: {e}", interface.name);
        let all = (libc::ETH_P_ALL as u16).to_be() as i32;
        let fd = sock::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK, all)
            .map_err(|e| fail("opening", e))?;
        // SAFETY: zeroed sockaddr_ll is valid; the fields set are the ones bind reads.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = all as u16;
        sll.sll_ifindex = interface.index as i32;
        sock::check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })
        .map_err(|e| fail("binding", e))?;
        sock::set_int_option(&fd, libc::SOL_PACKET, PACKET_AUXDATA, 1)
            .map_err(|e| fail("asking for VLAN data on", e))?;
        Ok(CaptureSocket {
            interface: interface.clone(),
            role,
            fd,
        })
    }
}

/// Captures being read.
pub struct Running {
    stop: Arc<AtomicBool>,
    reader: JoinHandle<Result<Vec<Capture>, String>>,
}

/// Starts reading `sockets`, keeping the frames to or from `targets`.
pub fn start(sockets: Vec<CaptureSocket>, targets: Vec<Ipv4Addr>) -> Running {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let reader = std::thread::spawn(move || read_until(sockets, &targets, &stopping));
    Running { stop, reader }
}

impl Running {
    /// Reads what is still queued, stops and returns what every capture kept.
    pub fn finish(self) -> Result<Vec<Capture>, String> {
        // The last replies may still be on their way through the node's queues.
        std::thread::sleep(Duration::from_millis(200));
        self.stop.store(true, Ordering::SeqCst);
        self.reader
            .join()
            .map_err(|_| "the capture thread panicked".to_string())?
    }
}

fn read_until(
    sockets: Vec<CaptureSocket>,
    targets: &[Ipv4Addr],
    stop: &AtomicBool,
) -> Result<Vec<Capture>, String> {
    let mut captures: Vec<Capture> = sockets
        .iter()
        .map(|s| Capture {
            interface: s.interface.name.clone(),
            role: s.role,
            frames: Vec::new(),
        })
        .collect();
    let fds: Vec<i32> = sockets.iter().map(|s| s.fd.as_raw_fd()).collect();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let ready = sock::poll(&fds, libc::POLLIN, Duration::from_millis(50))
            .map_err(|e| format!("waiting for captured frames: {e}"))?;
        for index in ready {
            while let Some(frame) = receive(&sockets[index].fd).map_err(|e| {
                format!(
                    "reading the capture on {}: {e}",
                    sockets[index].interface.name
                )
            })? {
                let capture = &mut captures[index];
                if capture.frames.len() < MAX_FRAMES && concerns(&frame, targets) {
                    capture.frames.push(frame);
                }
            }
        }
        if stopping {
            return Ok(captures);
        }
    }
}

fn concerns(frame: &Frame, targets: &[Ipv4Addr]) -> bool {
    let bytes = if frame.is_tagged() && frame.bytes.len() > 4 && !frame.tag_in_metadata {
        &frame.bytes[4..]
    } else {
        &frame.bytes[..]
    };
    Packet::parse(bytes)
        .is_some_and(|p| targets.contains(&p.source) || targets.contains(&p.destination))
}

/// One queued frame, or `None` when the queue is empty.
fn receive(fd: &OwnedFd) -> std::io::Result<Option<Frame>> {
    let mut buffer = [0u8; 2048];
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
        let error = std::io::Error::last_os_error();
        return match error.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(None),
            _ => Err(error),
        };
    }
    let mut tag_in_metadata = false;
    // SAFETY: msg was filled by recvmsg; the CMSG macros walk within msg_controllen.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_PACKET && (*cmsg).cmsg_type == PACKET_AUXDATA {
                let status = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const u32);
                tag_in_metadata = status & TP_STATUS_VLAN_VALID != 0;
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    let len = (len as usize).min(KEEP_BYTES);
    Ok(Some(Frame {
        protocol: u16::from_be(sll.sll_protocol),
        packet_type: sll.sll_pkttype,
        tag_in_metadata,
        bytes: buffer[..len].to_vec(),
    }))
}
