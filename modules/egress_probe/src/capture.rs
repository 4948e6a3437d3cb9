//! Captures on the node's interfaces: one AF_PACKET datagram socket for all of them, opened
//! before the first probe and read on a thread of its own until the probes are done; each
//! frame is filed under its interface by the index the kernel gives with it, and frames of
//! interfaces not captured are dropped at once. One socket, however many interfaces a node
//! has (a node with 1,100 addressed interfaces ran out of descriptors with one each). Only
//! IPv4 frames to or from a target are kept, cut to their headers: the classification is
//! `frame.rs`'s.

use crate::frame::{Frame, Packet};
use crate::report::{Capture, Role};
use crate::sock;
use crate::tenant::Interface;
use deevnet_runtime::Failure;
use std::collections::HashMap;
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
/// The socket's receive queue: every captured interface shares it.
const RECEIVE_BUFFER: i32 = 4 << 20;

/// Opens the capture of `interfaces` (in the calling thread's namespace: the node's); `None`
/// when there is nothing to capture.
fn open(interfaces: &[(Interface, Role)]) -> Result<Option<OwnedFd>, Failure> {
    if interfaces.is_empty() {
        return Ok(None);
    }
    let fail =
        |what: &str, e: std::io::Error| Failure::new(format!("{what} the capture socket: {e}"));
    let all = (libc::ETH_P_ALL as u16).to_be() as i32;
    // Not bound to an interface: it sees every one, and `read_until` keeps the captured ones.
    let fd = sock::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK, all)
        .map_err(|e| fail("opening", e))?;
    sock::set_int_option(&fd, libc::SOL_PACKET, PACKET_AUXDATA, 1)
        .map_err(|e| fail("asking for VLAN data on", e))?;
    // Root may exceed rmem_max; where it may not, the default queue still works.
    let _ = sock::set_int_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, RECEIVE_BUFFER);
    Ok(Some(fd))
}

/// Captures being read.
pub struct Running {
    stop: Arc<AtomicBool>,
    reader: JoinHandle<Result<Vec<Capture>, Failure>>,
}

/// Starts capturing on `interfaces`, keeping the frames to or from `targets`.
pub fn start(
    interfaces: Vec<(Interface, Role)>,
    targets: Vec<Ipv4Addr>,
) -> Result<Running, Failure> {
    let fd = open(&interfaces)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let reader = std::thread::spawn(move || read_until(fd, &interfaces, &targets, &stopping));
    Ok(Running { stop, reader })
}

impl Running {
    /// Reads what is still queued, stops and returns what every capture kept.
    pub fn finish(self) -> Result<Vec<Capture>, Failure> {
        // The last replies may still be on their way through the node's queues.
        std::thread::sleep(Duration::from_millis(200));
        self.stop.store(true, Ordering::SeqCst);
        self.reader
            .join()
            .map_err(|_| Failure::new("the capture thread panicked"))?
    }
}

fn read_until(
    fd: Option<OwnedFd>,
    interfaces: &[(Interface, Role)],
    targets: &[Ipv4Addr],
    stop: &AtomicBool,
) -> Result<Vec<Capture>, Failure> {
    let mut captures: Vec<Capture> = interfaces
        .iter()
        .map(|(interface, role)| Capture {
            interface: interface.name.clone(),
            role: *role,
            frames: Vec::new(),
        })
        .collect();
    let Some(fd) = fd else {
        return Ok(captures);
    };
    let by_index: HashMap<u32, usize> = interfaces
        .iter()
        .enumerate()
        .map(|(i, (interface, _))| (interface.index, i))
        .collect();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let ready = sock::poll(&[fd.as_raw_fd()], libc::POLLIN, Duration::from_millis(50))
            .map_err(|e| Failure::new(format!("waiting for captured frames: {e}")))?;
        if !ready.is_empty() {
            while let Some((index, frame)) =
                receive(&fd).map_err(|e| Failure::new(format!("reading the capture: {e}")))?
            {
                let Some(capture) = by_index.get(&index).map(|&i| &mut captures[i]) else {
                    continue;
                };
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

/// One queued frame and the index of its interface, or `None` when the queue is empty.
fn receive(fd: &OwnedFd) -> std::io::Result<Option<(u32, Frame)>> {
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
    Ok(Some((
        sll.sll_ifindex as u32,
        Frame {
            protocol: u16::from_be(sll.sll_protocol),
            packet_type: sll.sll_pkttype,
            tag_in_metadata,
            bytes: buffer[..len].to_vec(),
        },
    )))
}
