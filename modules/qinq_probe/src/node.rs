//! The node's side: the uplink and zone bridge the request names, found in the node's links
//! ([`resolve`], bad input refused before anything changes); the sender's probe port and its
//! frames ([`send`]); the receiver's capture on every slave ([`Capture`]) and its fdb read
//! ([`read_fdb`]).

use crate::frame::{self, Payload, RunKey, Tag, TPID_8021AD, TPID_8021Q};
use crate::params::Request;
use crate::report::{Sent, SlaveReport};
use crate::tally::Tally;
use deevnet_probe_port::bpf::{
    self, jump, op, Instruction, BPF_ABS, BPF_H, BPF_JEQ, BPF_LD, BPF_RET,
};
use deevnet_probe_port::mark::Mark;
use deevnet_probe_port::namespace::Namespace;
use deevnet_probe_port::sock;
use deevnet_probe_port::veth;
use deevnet_runtime::netlink::ethtool::Ethtool;
use deevnet_runtime::netlink::rtnetlink::LinkUnspec;
use deevnet_runtime::netlink::{
    BondRole, Link, Links, Netlink, NetlinkError, OperState, VlanProtocol,
};
use deevnet_runtime::Failure;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// The uplink and bridge of the request, as found on the node.
#[derive(Debug, Clone)]
pub struct Uplink {
    pub bridge: Link,
    /// The zone bridge filters VLANs.
    pub vlan_aware: bool,
    /// The outer VLAN id, and its protocol when the uplink is a VLAN device (`None`: the uplink
    /// is the NIC itself, and the outer tag is put on past it).
    pub outer: (u16, Option<u16>),
    /// The NICs the uplink leaves by: a bond's slaves with their roles, or the NIC itself.
    pub slaves: Vec<(Link, Option<BondRole>)>,
}

/// Finds the bridge and the uplink; refuses what is not there, with the fix.
pub fn resolve(request: &Request, links: &Links) -> Result<Uplink, String> {
    let missing = |parameter: &str, name: &str| {
        format!("{parameter}: there is no interface {name} on this node; check the name with `ip link`, or create it first")
    };
    let bridge = links
        .by_name(&request.bridge)
        .ok_or_else(|| missing("bridge", &request.bridge))?;
    if bridge.kind.as_deref() != Some("bridge") {
        return Err(format!(
            "bridge: {} is not a bridge (kind {}); give the zone bridge the uplink VLAN device is a port of, e.g. vmbr1",
            bridge.name,
            bridge.kind.as_deref().unwrap_or("none")
        ));
    }
    let uplink = links
        .by_name(&request.uplink)
        .ok_or_else(|| missing("uplink", &request.uplink))?;
    let (parent, outer) = match (uplink.kind.as_deref(), uplink.vlan) {
        (Some("vlan"), Some(vlan)) => {
            if vlan.id != request.uplink_vlan {
                return Err(format!(
                    "uplink_vlan: {} is VLAN {} on its parent, not {}; give uplink_vlan: {} or the uplink VLAN device of VLAN {}",
                    uplink.name, vlan.id, request.uplink_vlan, vlan.id, request.uplink_vlan
                ));
            }
            let tpid = match vlan.protocol {
                Some(VlanProtocol::Dot1Ad) => TPID_8021AD,
                _ => TPID_8021Q,
            };
            let parent = uplink
                .parent
                .and_then(|index| links.by_index(index))
                .ok_or_else(|| format!("uplink: {}'s parent device is not in this namespace; run the module where the uplink's NICs are", uplink.name))?;
            (parent, (vlan.id, Some(tpid)))
        }
        // A NIC that is the uplink itself (the outer tag is put on past it).
        _ => (uplink, (request.uplink_vlan, None)),
    };
    if uplink.controller != Some(bridge.index) {
        return Err(format!(
            "uplink: {} is not a port of {}; give the uplink VLAN device that is a port of the zone bridge (bond0.40 in vmbr1)",
            uplink.name, bridge.name
        ));
    }
    let slaves = if parent.kind.as_deref() == Some("bond") {
        let active = parent.bond.as_ref().and_then(|b| b.active_port);
        links
            .ports_of(parent.index)
            .map(|slave| {
                let role = slave.bond_port.as_ref().and_then(|p| p.role).or_else(|| {
                    active.map(|a| {
                        if a == slave.index {
                            BondRole::Active
                        } else {
                            BondRole::Backup
                        }
                    })
                });
                (slave.clone(), role)
            })
            .collect()
    } else {
        vec![(parent.clone(), None)]
    };
    Ok(Uplink {
        bridge: bridge.clone(),
        vlan_aware: bridge
            .bridge
            .and_then(|b| b.vlan_filtering)
            .unwrap_or(false),
        outer,
        slaves,
    })
}

/// Each NIC with its driver (ethtool netlink); a NIC ethtool cannot name keeps `null`.
pub fn slave_reports(uplink: &Uplink) -> Result<Vec<SlaveReport>, Failure> {
    let ethtool = Ethtool::connect()?;
    let mut reports = Vec::new();
    for (link, role) in &uplink.slaves {
        reports.push(SlaveReport {
            name: link.name.clone(),
            driver: ethtool.driver(&link.name).ok().flatten(),
            role: role.map(|r| r.name()),
        });
    }
    Ok(reports)
}

/// The NIC(s) the frames leave by, as the frames name them: the active slave where the bond
/// says, else every slave (the bond's hash picks one).
pub fn leaving_by(slaves: &[SlaveReport]) -> (String, String) {
    let active: Vec<&SlaveReport> = slaves.iter().filter(|s| s.role == Some("active")).collect();
    let chosen = if active.is_empty() {
        slaves.iter().collect()
    } else {
        active
    };
    let names: Vec<&str> = chosen.iter().map(|s| s.name.as_str()).collect();
    let drivers: Vec<&str> = chosen
        .iter()
        .map(|s| s.driver.as_deref().unwrap_or("unknown"))
        .collect();
    (names.join(","), drivers.join(","))
}

/// How long the probe port may take to come up.
const LINK_UP_WAIT: Duration = Duration::from_secs(3);
/// Between two frames.
const FRAME_GAP: Duration = Duration::from_millis(20);

/// The sender: a probe port plugged into the zone bridge like a guest's (a veth whose node end
/// is a port of the bridge, in the inner VLANs when the bridge filters VLANs, and whose other
/// end sits in a namespace of this process), and `count` frames per VLAN sent from it with the
/// inner tag, so they cross the bridge, the uplink VLAN device and the NIC as a guest's do.
/// Every way out removes the port (see `deevnet_probe_port`: marked alias, the kernel
/// removes the pair with the namespace after kill -9, the next run sweeps a dead run's).
pub fn send(
    netlink: &Netlink,
    request: &Request,
    uplink: &Uplink,
    mark: &Mark,
    slaves: &[SlaveReport],
    key: &RunKey,
) -> Result<Vec<Sent>, Failure> {
    let (node_end, inside_end) = veth::veth_names(std::process::id());
    // IPv6 off inside: the port sends the probe frames and nothing else.
    let namespace = Namespace::new(false)?;
    let (guard, node_index) = veth::plug(netlink, (&node_end, &inside_end), &namespace, mark)?;
    // The bridge's own MTU, so the port does not lower it.
    let mtu = uplink.bridge.mtu.unwrap_or(1500);
    veth::attach(netlink, node_index, uplink.bridge.index, mtu)?;
    // Only a bridge port has VLANs: the kernel refuses them (EOPNOTSUPP) before the attach.
    if uplink.vlan_aware {
        for &vlan in &request.vlans {
            netlink.bridge_port_vlan_add_tagged(node_index, vlan)?;
        }
    }
    let source = frame::sender_mac(&request.run_id, &request.name);
    let (slave, driver) = leaving_by(slaves);
    let frames: Vec<(u16, Vec<u8>)> = request
        .vlans
        .iter()
        .flat_map(|&vlan| {
            let (name, slave, driver) = (request.name.clone(), slave.clone(), driver.clone());
            let nonce = key.nonce();
            (0..request.count).map(move |seq| {
                let payload = Payload {
                    nonce,
                    vlan,
                    seq,
                    total: 0,
                    sender: name.clone(),
                    slave: slave.clone(),
                    driver: driver.clone(),
                };
                (vlan, payload)
            })
        })
        .map(|(vlan, mut payload)| {
            payload.total = request.count;
            (vlan, frame::build(source, &payload, key))
        })
        .collect();
    let inside = inside_end.clone();
    let sent = namespace.run(move || send_inside(&inside, &frames))??;
    guard.remove()?;
    drop(namespace);
    Ok(request
        .vlans
        .iter()
        .map(|&vlan| Sent {
            vlan,
            frames: sent.iter().filter(|&&v| v == vlan).count() as u16,
        })
        .collect())
}

/// Inside the namespace: the probe's end up, then the frames on a raw packet socket. The VLANs
/// of the frames that went out.
fn send_inside(dev: &str, frames: &[(u16, Vec<u8>)]) -> Result<Vec<u16>, Failure> {
    let netlink = Netlink::connect()?;
    let index = netlink
        .links()?
        .by_name(dev)
        .map(|l| l.index)
        .ok_or_else(|| Failure::new(format!("{dev} did not arrive in the probe's namespace")))?;
    netlink
        .block_on(
            netlink
                .handle()
                .link()
                .set(LinkUnspec::new_with_index(index).up().build())
                .execute(),
        )
        .map_err(|e| NetlinkError::from_rtnetlink("setting the probe port up", e))?;
    let started = Instant::now();
    while netlink.links()?.by_index(index).map(|l| l.oper_state) != Some(OperState::Up) {
        if started.elapsed() > LINK_UP_WAIT {
            return Err(Failure::new(format!(
                "the probe port did not come up within {} s on the zone bridge",
                LINK_UP_WAIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let fd = packet_socket()
        .map_err(|e| Failure::new(format!("opening the probe's packet socket: {e}")))?;
    sock::bind_packet(&fd, index, 0)
        .map_err(|e| Failure::new(format!("binding the probe's packet socket: {e}")))?;
    let mut sent = Vec::new();
    for (vlan, bytes) in frames {
        // SAFETY: bytes is valid for its length.
        let written = unsafe {
            libc::send(
                fd.as_raw_fd(),
                bytes.as_ptr() as *const libc::c_void,
                bytes.len(),
                0,
            )
        };
        if written < 0 {
            return Err(Failure::new(format!(
                "sending a probe frame on VLAN {vlan}: {}",
                std::io::Error::last_os_error()
            )));
        }
        sent.push(*vlan);
        std::thread::sleep(FRAME_GAP);
    }
    Ok(sent)
}

fn packet_socket() -> std::io::Result<OwnedFd> {
    // Protocol 0 receives nothing until bound.
    sock::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)
}

/// The kernel filter: the probe's ethertype, behind up to two tags still in the frame (the
/// outer one is usually in the packet's metadata by then). Everything it passes is still
/// recognized by its nonce and authenticated before it counts.
fn filter_program() -> Vec<Instruction> {
    const LDH: u16 = BPF_LD | BPF_H | BPF_ABS;
    let probe = u32::from(frame::ETHERTYPE);
    let (q, ad) = (u32::from(TPID_8021Q), u32::from(TPID_8021AD));
    vec![
        op(LDH, 12),
        jump(BPF_JEQ, probe, 9, 0),
        jump(BPF_JEQ, q, 1, 0),
        jump(BPF_JEQ, ad, 0, 6),
        op(LDH, 16),
        jump(BPF_JEQ, probe, 5, 0),
        jump(BPF_JEQ, q, 1, 0),
        jump(BPF_JEQ, ad, 0, 2),
        op(LDH, 20),
        jump(BPF_JEQ, probe, 1, 0),
        op(BPF_RET, 0),
        op(BPF_RET, bpf::ACCEPT),
    ]
}

/// One capture socket on one slave, filtered before it is bound (nothing unfiltered queues).
fn open_capture(index: u32) -> std::io::Result<OwnedFd> {
    let fd = packet_socket()?;
    bpf::attach_filter(&fd, &filter_program())?;
    sock::set_int_option(&fd, libc::SOL_PACKET, sock::PACKET_AUXDATA, 1)?;
    sock::bind_packet(&fd, index, libc::ETH_P_ALL as u16)?;
    Ok(fd)
}

/// The receiver's capture, open: one socket per slave.
pub struct Capture {
    sockets: Vec<(String, OwnedFd)>,
}

impl Capture {
    /// Opens the capture on every slave (active and backup, or the single NIC): before the
    /// senders send, so none of their frames is missed.
    pub fn open(uplink: &Uplink) -> Result<Capture, Failure> {
        let mut sockets = Vec::new();
        for (link, _) in &uplink.slaves {
            let fd = open_capture(link.index)
                .map_err(|e| Failure::new(format!("opening the capture on {}: {e}", link.name)))?;
            sockets.push((link.name.clone(), fd));
        }
        Ok(Capture { sockets })
    }

    /// Reads this run's frames into `tally` until `deadline`, or until every expected frame is
    /// in; the kernel's drop count.
    pub fn read(self, key: &RunKey, tally: &mut Tally, deadline: Instant) -> Result<u64, Failure> {
        let mut polls: Vec<libc::pollfd> = self
            .sockets
            .iter()
            .map(|(_, fd)| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let millis = left.as_millis().min(200) as i32;
            // SAFETY: polls is a valid array of its length.
            let ready =
                unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, millis) };
            if ready < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Failure::new(format!(
                    "waiting for captured frames: {error}"
                )));
            }
            for (slave, fd) in &self.sockets {
                while let Some((bytes, stripped, outgoing)) = receive(fd)
                    .map_err(|e| Failure::new(format!("reading the capture on {slave}: {e}")))?
                {
                    if outgoing {
                        continue;
                    }
                    if let Some(recognized) = frame::recognize(&bytes, stripped, key) {
                        tally.add(slave, recognized);
                    }
                }
            }
            if tally.all_in() {
                break;
            }
        }
        let mut dropped = 0;
        for (slave, fd) in &self.sockets {
            dropped += sock::packet_drops(fd).map_err(|e| {
                Failure::new(format!("reading the capture's statistics on {slave}: {e}"))
            })?;
        }
        Ok(dropped)
    }
}

/// A queued frame: its bytes, the tag the kernel took out of it, and whether this host sent it.
type Queued = (Vec<u8>, Option<Tag>, bool);

/// One queued frame: its bytes, the tag the kernel took out of it, and whether this host sent
/// it; `None` when the queue is empty.
fn receive(fd: &OwnedFd) -> std::io::Result<Option<Queued>> {
    let mut buffer = [0u8; 2048];
    let Some(received) = sock::receive_packet(fd, &mut buffer)? else {
        return Ok(None);
    };
    let len = received.len.min(buffer.len());
    Ok(Some((
        buffer[..len].to_vec(),
        received.tag.map(|(tpid, tci)| Tag {
            tpid,
            vid: tci & 0x0fff,
        }),
        received.packet_type == libc::PACKET_OUTGOING,
    )))
}

/// The zone bridge's fdb: each learned MAC with its VLAN.
pub fn read_fdb(netlink: &Netlink, uplink: &Uplink) -> Result<Vec<(String, Option<u16>)>, Failure> {
    Ok(netlink
        .fdb(uplink.bridge.index)?
        .into_iter()
        .map(|entry| (entry.mac, entry.vlan))
        .collect())
}
