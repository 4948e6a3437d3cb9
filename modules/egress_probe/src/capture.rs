//! The capture: one AF_PACKET datagram socket on every interface of the node, opened before the
//! first probe and read on a thread of its own until the probes are done. A classic BPF filter
//! in the kernel passes only what can be the probe's (its address, echo identifier or ports),
//! and a frame is kept only once `frame.rs` recognized it as one of the probe's packets, so
//! other traffic toward a target can neither fill the per-interface cap nor hide a leak. What
//! the kernel still dropped (`PACKET_STATISTICS`) and a reached cap are reported: a capture that
//! lost frames proves nothing.

use crate::frame::{classify, Frame, Markers, Packet};
use crate::params::Target;
use crate::report::{Capture, Role, MAX_FRAMES};
use crate::tenant::{Interface, Plan};
use deevnet_probe_port::bpf::*;
use deevnet_probe_port::sock;
use deevnet_runtime::netlink::Links;
use std::collections::HashMap;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// IP and transport headers are all the classification reads.
const KEEP_BYTES: usize = 96;
const RECEIVE_BUFFER: i32 = 8 << 20;
/// Tagged workloads' VLANs the kernel filter names one by one at most (two instructions each,
/// within the 255 a short jump spans).
const MAX_FILTERED_VLANS: usize = 100;
/// Interfaces the kernel filter names one by one at most (two instructions each, within the
/// kernel's 4,096); beyond it, the frames of the rest are dropped after reading instead.
const MAX_FILTERED_INTERFACES: usize = 1_000;

/// The interfaces to capture on, each with its role: the forbidden ones, the expected egress,
/// and every other interface a packet could leave the node by (role `Other`). Not watched: the
/// loopback, the VNet, its ports and the probe's own veth (the probe's path, not its egress),
/// VRF devices, and the ports of forbidden interfaces (a leak shows on the interface itself).
/// A target's `via` is watched whatever it is (a peer's is a port of the VNet).
/// A tagged workload's bridge is no VNet of a VRF: its router is off the node, beyond one of
/// the bridge's ports, so those ports are watched (see [`tagged_ports`]).
pub fn watched(plan: &Plan, links: &Links, probe_index: u32) -> Vec<(Interface, Role)> {
    let mut watched: Vec<(Interface, Role)> = plan
        .forbidden
        .iter()
        .map(|i| (i.clone(), Role::Forbidden))
        .collect();
    if let Some(egress) = &plan.egress {
        watched.push((egress.clone(), Role::Egress));
    }
    // A target's `via` is watched even as a port of the VNet: a peer's requests leave by it.
    for via in &plan.vias {
        if !watched.iter().any(|(i, _)| i.index == via.index) {
            watched.push((via.clone(), Role::Other));
        }
    }
    let forbidden = |index: u32| plan.forbidden.iter().any(|i| i.index == index);
    let others: Vec<(Interface, Role)> = links
        .iter()
        .filter(|link| !watched.iter().any(|(i, _)| i.index == link.index))
        .filter(|link| link.name != "lo" && link.kind.as_deref() != Some("vrf"))
        .filter(|link| link.index != plan.vnet.index && link.index != probe_index)
        .filter(|link| {
            link.controller
                .is_none_or(|c| (c != plan.vnet.index || plan.vlan.is_some()) && !forbidden(c))
        })
        .map(|link| {
            (
                Interface {
                    index: link.index,
                    name: link.name.clone(),
                },
                Role::Other,
            )
        })
        .collect();
    watched.extend(others);
    watched
}

/// A tagged workload's VLAN and the ports of its bridge but the workload's own veth: a frame
/// tagged with that VLAN there (a trunk carries it so) is the workload's, leaving the node
/// toward its router or arriving from it. `None` for a workload in a VRF's VNet.
pub fn tagged_ports(plan: &Plan, links: &Links, probe_index: u32) -> Option<(u16, Vec<u32>)> {
    let vlan = plan.vlan?;
    let ports = links
        .ports_of(plan.vnet.index)
        .map(|link| link.index)
        .filter(|index| *index != probe_index)
        .collect();
    Some((vlan, ports))
}

/// The node's interfaces that are not watched (from the same dump as [`watched`]).
pub fn unwatched(links: &Links, watched: &[(Interface, Role)]) -> Vec<u32> {
    links
        .iter()
        .map(|link| link.index)
        .filter(|index| !watched.iter().any(|(i, _)| i.index == *index))
        .collect()
}

/// The open capture socket.
pub struct CaptureSocket {
    fd: OwnedFd,
}

impl CaptureSocket {
    /// Opens the capture of every interface (in the calling thread's namespace: the node's),
    /// filtered in the kernel to what can be the probe's.
    /// `unwatched`: interface indexes whose frames the kernel drops right away (the VNet's
    /// side, which carries every frame of the workload, and whatever anybody there sends it).
    pub fn open(
        markers: &[Markers],
        unwatched: &[u32],
        tagged_vlans: &[u16],
    ) -> Result<CaptureSocket, String> {
        let fail = |what: &str, e: std::io::Error| format!("{what} the capture: {e}");
        // Protocol 0 receives nothing until bind: the filter is in place before the first frame.
        let fd = sock::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK, 0)
            .map_err(|e| fail("opening", e))?;
        attach_filter(&fd, &filter_program_for(markers, unwatched, tagged_vlans))
            .map_err(|e| fail("filtering", e))?;
        // Room for bursts while the reading thread waits for a busy CPU; as root the node's
        // rmem_max does not cap it. A refusal leaves the default, and drops are counted anyway.
        let _ = sock::set_int_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, RECEIVE_BUFFER);
        sock::set_int_option(&fd, libc::SOL_PACKET, sock::PACKET_AUXDATA, 1)
            .map_err(|e| fail("asking for VLAN data on", e))?;
        // Index 0: every interface, each frame naming its own.
        sock::bind_packet(&fd, 0, libc::ETH_P_ALL as u16).map_err(|e| fail("binding", e))?;
        Ok(CaptureSocket { fd })
    }
}

/// The kernel filter of a run of one probe: see [`filter_program_for`].
pub fn filter_program(markers: &Markers, unwatched: &[u32]) -> Vec<Instruction> {
    filter_program_for(std::slice::from_ref(markers), unwatched, &[])
}

/// The kernel filter: not on an unwatched interface, and IPv4 (no later fragment) from or to
/// a workload's address, an ICMP packet with an echo identifier in the probes' block, or
/// TCP/UDP with a port in the probes' range. Its size grows with the probes' count only (four
/// instructions a workload, at most [`crate::params::MAX_PROBES`]), not with the targets, and
/// every jump is short. Everything it passes is still classified before it is kept.
///
/// `tagged_vlans`: the VLANs of tagged workloads (see `not_ip_block`).
pub fn filter_program_for(
    markers: &[Markers],
    unwatched: &[u32],
    tagged_vlans: &[u16],
) -> Vec<Instruction> {
    let reject = op(BPF_RET | BPF_K, 0);
    let mut program = vec![op(BPF_LD | BPF_W | BPF_ABS, SKF_AD_IFINDEX)];
    for &index in unwatched.iter().take(MAX_FILTERED_INTERFACES) {
        program.extend([jump(BPF_JEQ, index, 0, 1), reject]);
    }
    // Dispatched on the IP version in the packet, not on the link protocol the kernel keeps
    // beside it: a VLAN device that is a bridge port (a QinQ zone's bond0.40) sends with
    // 802.1Q there though the tag is off the frame, and its packets were all dropped here.
    let not_ip = not_ip_block(tagged_vlans);
    let v4_block = v4_filter(markers);
    program.extend([
        op(BPF_LD | BPF_B | BPF_ABS, 0),
        op(BPF_ALU | BPF_AND | BPF_K, 0xf0),
        // Long jumps: the blocks grow with the probes.
        jump(BPF_JEQ, 0x40, 0, 1),
        op(BPF_JMP | BPF_JA, 2 + not_ip.len() as u32),
        jump(BPF_JEQ, 0x60, 0, 1),
        op(BPF_JMP | BPF_JA, (not_ip.len() + v4_block.len()) as u32),
    ]);
    program.extend(not_ip);
    program.extend(v4_block);
    program.extend(v6_filter(markers));
    program
}

/// Neither IPv4 nor IPv6 at the start: a frame with a tagged workload's 802.1Q tag still in it
/// passes whole (the classification reads behind the tag); anything else is dropped. More
/// VLANs than short jumps span: every such frame passes, the classification sorts.
fn not_ip_block(tagged_vlans: &[u16]) -> Vec<Instruction> {
    let (reject, accept) = (op(BPF_RET | BPF_K, 0), op(BPF_RET | BPF_K, ACCEPT));
    let mut vlans = tagged_vlans.to_vec();
    vlans.sort_unstable();
    vlans.dedup();
    if vlans.is_empty() {
        return vec![reject];
    }
    if vlans.len() > MAX_FILTERED_VLANS {
        return vec![accept];
    }
    let mut block = vec![
        op(BPF_LD | BPF_H | BPF_ABS, 0),
        op(BPF_ALU | BPF_AND | BPF_K, 0x0fff),
    ];
    for vlan in vlans {
        block.extend([jump(BPF_JEQ, u32::from(vlan), 0, 1), accept]);
    }
    block.push(reject);
    block
}

/// IPv4 (no later fragment): a workload's address, an echo identifier of the probes, a port
/// of theirs. Ends in a return.
fn v4_filter(markers: &[Markers]) -> Vec<Instruction> {
    let (reject, accept) = (op(BPF_RET | BPF_K, 0), op(BPF_RET | BPF_K, ACCEPT));
    let mut program = vec![
        op(BPF_LD | BPF_B | BPF_ABS, 0),
        op(BPF_ALU | BPF_AND | BPF_K, 0xf0),
        jump(BPF_JEQ, 0x40, 1, 0),
        reject,
        op(BPF_LD | BPF_H | BPF_ABS, 6),
        jump(BPF_JSET, 0x1fff, 0, 1),
        reject,
    ];
    // Source, then destination: a workload's own address.
    for offset in [12, 16] {
        program.push(op(BPF_LD | BPF_W | BPF_ABS, offset));
        for probe in markers {
            if let IpAddr::V4(workload) = probe.workload {
                program.extend([jump(BPF_JEQ, u32::from(workload), 0, 1), accept]);
            }
        }
    }
    // X: the IP header's length; A: the protocol.
    program.extend([
        op(BPF_LDX | BPF_B | BPF_MSH, 0),
        op(BPF_LD | BPF_B | BPF_ABS, 9),
    ]);
    program.extend(markers_tail(markers, 1, |offset| {
        op(BPF_LD | BPF_H | BPF_IND, offset)
    }));
    program
}

/// IPv6 (no extension header: the probes send none): a workload's address, an echo
/// identifier, a port. Ends in a return.
fn v6_filter(markers: &[Markers]) -> Vec<Instruction> {
    let (reject, accept) = (op(BPF_RET | BPF_K, 0), op(BPF_RET | BPF_K, ACCEPT));
    let workloads: Vec<[u32; 4]> = markers
        .iter()
        .filter_map(|m| match m.workload {
            IpAddr::V6(v6) => {
                let o = v6.octets();
                Some(std::array::from_fn(|i| {
                    u32::from_be_bytes([o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]])
                }))
            }
            IpAddr::V4(_) => None,
        })
        .collect();
    if workloads.is_empty() {
        return vec![reject];
    }
    let mut program = vec![
        op(BPF_LD | BPF_B | BPF_ABS, 0),
        op(BPF_ALU | BPF_AND | BPF_K, 0xf0),
        jump(BPF_JEQ, 0x60, 1, 0),
        reject,
    ];
    // Source (bytes 8-23), then destination (24-39): all four words of a workload's address.
    for base in [8, 24] {
        for words in &workloads {
            for (i, word) in words.iter().enumerate() {
                let left = (3 - i) as u8;
                program.push(op(BPF_LD | BPF_W | BPF_ABS, base + 4 * i as u32));
                program.push(jump(BPF_JEQ, *word, 0, 2 * left + 1));
            }
            program.push(accept);
        }
    }
    program.push(op(BPF_LD | BPF_B | BPF_ABS, 6));
    program.extend(markers_tail(markers, 58, |offset| {
        op(BPF_LD | BPF_H | BPF_ABS, 40 + offset)
    }));
    program
}

/// With A holding the transport protocol: an ICMP (`icmp`) echo identifier of the probes, or
/// TCP/UDP with a port in their range (`load` reads the transport header's 16 bits at an
/// offset). Ends in a return.
fn markers_tail(
    markers: &[Markers],
    icmp: u32,
    load: impl Fn(u32) -> Instruction,
) -> Vec<Instruction> {
    let (reject, accept) = (op(BPF_RET | BPF_K, 0), op(BPF_RET | BPF_K, ACCEPT));
    let ids = markers.iter().map(|m| u32::from(m.icmp_id));
    let (id_low, id_high) = (ids.clone().min().unwrap_or(0), ids.max().unwrap_or(0));
    let mut program = vec![
        jump(BPF_JEQ, icmp, 0, 5),
        load(4),
        jump(BPF_JGE, id_low, 0, 2),
        jump(BPF_JGT, id_high, 1, 0),
        accept,
        reject,
    ];
    let ports = markers
        .iter()
        .flat_map(|m| m.local_ports.iter().map(|&(_, port)| u32::from(port)));
    if let (Some(low), Some(high)) = (ports.clone().min(), ports.max()) {
        program.extend([jump(BPF_JEQ, 6, 2, 0), jump(BPF_JEQ, 17, 1, 0), reject]);
        // Source port, then destination port: accept when low <= port <= high.
        for offset in [0, 2] {
            program.extend([
                load(offset),
                jump(BPF_JGE, low, 0, 2),
                jump(BPF_JGT, high, 1, 0),
                accept,
            ]);
        }
    }
    program.push(reject);
    program
}

/// What the capture saw for one probe: its frames per watched interface, and how many frames
/// the kernel dropped because the socket's queue was full (the run's: one socket for all).
#[derive(Debug, Clone)]
pub struct Captured {
    pub captures: Vec<Capture>,
    pub dropped: u64,
}

/// The capture being read.
pub struct Running {
    stop: Arc<AtomicBool>,
    reader: JoinHandle<Result<Vec<Captured>, String>>,
}

/// What the reading thread needs to recognize one probe's frames.
pub struct Recognizer {
    pub watched: Vec<(Interface, Role)>,
    /// A tagged workload's VLAN and its bridge's ports ([`tagged_ports`]).
    pub tagged_ports: Option<(u16, Vec<u32>)>,
    pub targets: Vec<Target>,
    pub markers: Markers,
}

/// Frames the run's capture keeps in all, shared out among its probes (each at most
/// [`MAX_FRAMES`]): 200,000 frames of at most 96 bytes, some 30 MB at most, whatever the
/// probe count.
pub const RUN_FRAME_BUDGET: usize = 200_000;

/// The frames each of `probes` probes may keep, over all its interfaces.
pub fn frame_budget(probes: usize) -> usize {
    (RUN_FRAME_BUDGET / probes.max(1)).min(MAX_FRAMES)
}

/// Starts reading `socket`, keeping each probe's frames on the interfaces it watches: a frame
/// is the first probe's that recognizes it (their markers are disjoint, so at most one does).
pub fn start(socket: CaptureSocket, recognizers: Vec<Recognizer>) -> Running {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let reader = std::thread::spawn(move || read_until(socket, &recognizers, &stopping));
    Running { stop, reader }
}

impl Running {
    /// Reads what is still queued, stops and returns what the capture kept, per probe.
    pub fn finish(self) -> Result<Vec<Captured>, String> {
        // The last replies may still be on their way through the node's queues.
        std::thread::sleep(Duration::from_millis(200));
        self.stop.store(true, Ordering::SeqCst);
        self.reader
            .join()
            .map_err(|_| "the capture thread panicked".to_string())?
    }
}

/// Where `frame` goes among `captures` (the position of its interface) if it is one of the
/// probe's packets on an interface the probe watches, with the workload's VLAN when the frame
/// may carry its tag.
fn recognized(
    positions: &HashMap<u32, usize>,
    recognizer: &Recognizer,
    interface: u32,
    frame: &Frame,
) -> Option<(usize, Option<u16>)> {
    let position = *positions.get(&interface)?;
    let workload_vlan = recognizer
        .tagged_ports
        .as_ref()
        .filter(|(_, ports)| ports.contains(&interface))
        .map(|(vlan, _)| *vlan);
    let bytes = match workload_vlan {
        _ if !frame.is_tagged() => &frame.bytes[..],
        Some(vlan) if frame.is_tagged_only_with(vlan) => &frame.bytes[..],
        Some(vlan) => frame.tagged_in_frame_with(vlan)?.1,
        None => return None,
    };
    Packet::parse(bytes)
        .and_then(|p| classify(&p, &recognizer.targets, &recognizer.markers))
        .map(|_| (position, workload_vlan))
}

/// A recognized frame as its workload sent it: its tag, if any, was the workload's VLAN.
fn as_sent(frame: Frame, vlan: Option<u16>) -> Frame {
    match vlan {
        Some(vlan) => frame.without_tag_of(vlan),
        None => Frame {
            metadata_tag: None,
            ..frame
        },
    }
}

/// Per watched interface: its capture; keeps `frame` if it is one of the probe's packets. The
/// cap counts only those, and reaching it marks the capture overflowed.
pub fn keep(
    captures: &mut [Capture],
    positions: &HashMap<u32, usize>,
    recognizer: &Recognizer,
    interface: u32,
    frame: Frame,
) {
    if let Some((position, vlan)) = recognized(positions, recognizer, interface, &frame) {
        let frame = as_sent(frame, vlan);
        let capture = &mut captures[position];
        if capture.frames.len() < MAX_FRAMES {
            capture.frames.push(frame);
        } else {
            capture.overflowed = true;
        }
    }
}

/// One probe's share of the run's capture.
struct ProbeCapture {
    captures: Vec<Capture>,
    positions: HashMap<u32, usize>,
    kept: usize,
}

/// Gives `frame` to the first probe that recognizes it, within that probe's `budget`.
fn attribute(
    probes: &mut [ProbeCapture],
    recognizers: &[Recognizer],
    budget: usize,
    interface: u32,
    frame: Frame,
) {
    for (probe, recognizer) in probes.iter_mut().zip(recognizers) {
        if let Some((position, vlan)) = recognized(&probe.positions, recognizer, interface, &frame)
        {
            let frame = as_sent(frame, vlan);
            let capture = &mut probe.captures[position];
            if probe.kept < budget {
                probe.kept += 1;
                capture.frames.push(frame);
            } else {
                capture.overflowed = true;
            }
            return;
        }
    }
}

/// An empty capture per watched interface, and where each interface index's is.
pub fn empty_captures(watched: &[(Interface, Role)]) -> (Vec<Capture>, HashMap<u32, usize>) {
    let captures = watched
        .iter()
        .map(|(interface, role)| Capture {
            interface: interface.name.clone(),
            role: *role,
            frames: Vec::new(),
            overflowed: false,
        })
        .collect();
    let positions = watched
        .iter()
        .enumerate()
        .map(|(position, (interface, _))| (interface.index, position))
        .collect();
    (captures, positions)
}

fn read_until(
    socket: CaptureSocket,
    recognizers: &[Recognizer],
    stop: &AtomicBool,
) -> Result<Vec<Captured>, String> {
    let budget = frame_budget(recognizers.len());
    let mut probes: Vec<ProbeCapture> = recognizers
        .iter()
        .map(|recognizer| {
            let (captures, positions) = empty_captures(&recognizer.watched);
            ProbeCapture {
                captures,
                positions,
                kept: 0,
            }
        })
        .collect();
    let fd = socket.fd.as_raw_fd();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let ready = sock::poll(&[fd], libc::POLLIN, Duration::from_millis(50))
            .map_err(|e| format!("waiting for captured frames: {e}"))?;
        if !ready.is_empty() {
            while let Some((interface, frame)) =
                receive(&socket.fd).map_err(|e| format!("reading the capture: {e}"))?
            {
                attribute(&mut probes, recognizers, budget, interface, frame);
            }
        }
        if stopping {
            let dropped =
                drops(&socket.fd).map_err(|e| format!("reading the capture's statistics: {e}"))?;
            return Ok(probes
                .into_iter()
                .map(|probe| Captured {
                    captures: probe.captures,
                    dropped,
                })
                .collect());
        }
    }
}

/// Frames the kernel dropped since the socket was opened (its queue was full).
fn drops(fd: &OwnedFd) -> std::io::Result<u64> {
    sock::packet_drops(fd)
}

/// One queued frame and the index of its interface, or `None` when the queue is empty.
fn receive(fd: &OwnedFd) -> std::io::Result<Option<(u32, Frame)>> {
    let mut buffer = [0u8; 2048];
    let Some(received) = sock::receive_packet(fd, &mut buffer)? else {
        return Ok(None);
    };
    let len = received.len.min(KEEP_BYTES).min(buffer.len());
    Ok(Some((
        received.ifindex,
        Frame {
            protocol: received.protocol,
            packet_type: received.packet_type,
            metadata_tag: received.tag.map(|(_, tci)| tci & 0x0fff),
            bytes: buffer[..len].to_vec(),
        },
    )))
}
