//! One probe session on the node, from the resolved [`Plan`] to the [`Report`]: the address
//! locked and checked free, the workload made, marked and attached, captures started, probes
//! sent from inside, everything removed again.

use crate::capture::{self, CaptureSocket};
use crate::report::{self, Report, Start};
use crate::tenant::{NodeFacts, Plan};
use crate::{all_targets, arp, node, probe};
use deevnet_probe_port::mark::Mark;
use deevnet_probe_port::namespace::{join, Namespace};
use deevnet_probe_port::veth::{self, VethGuard};
use deevnet_runtime::file_policy::FileLock;
use deevnet_runtime::netlink::{Netlink, NetlinkError, OperState};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

/// How long the workload's interface may take to come up.
const LINK_UP_WAIT: Duration = Duration::from_secs(3);

/// The lock on the plan's address on its VNet (in this network namespace), held for the whole
/// run: two runs probing one address at once would be two hosts with one address, and one
/// of them would misread the other's replies. The second run is refused, not queued.
pub fn lock_address(plan: &Plan) -> Result<FileLock, Failure> {
    let namespace = std::fs::metadata("/proc/self/ns/net")
        .map(|meta| meta.ino())
        .map_err(|e| {
            Failure::new(format!(
                "identifying this network namespace (/proc/self/ns/net): {e}"
            ))
        })?;
    let name = format!(
        "egress_probe netns={namespace} vnet={} address={}",
        plan.vnet.index,
        plan.address.addr()
    );
    match FileLock::try_acquire_named(&name) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Failure::new(format!(
            "address: another egress_probe run is probing {} on {} now; run the probes one \
             after another, or give each its own address",
            plan.address.addr(),
            plan.vnet.name
        ))),
        Err(e) => Err(Failure::new(format!(
            "locking address {} on {}: {e:#}",
            plan.address.addr(),
            plan.vnet.name
        ))),
    }
}

/// The last refusals, which need the VNet: the address must not answer ARP, and a gateway that
/// is not the node's must. The MAC that answered for such a gateway, which the workload then
/// pins (see [`gateway_macs`]).
pub fn check_on_vnet(plan: &Plan, node: &NodeFacts) -> Result<Option<[u8; 6]>, Failure> {
    let link = node
        .links
        .by_index(plan.vnet.index)
        .ok_or_else(|| Failure::new(format!("vnet: {} vanished while checking", plan.vnet.name)))?;
    let mac = link
        .mac
        .as_deref()
        .and_then(arp::parse_mac)
        .ok_or_else(|| {
            Failure::new(format!(
                "vnet: {} has no Ethernet address to send the ARP check from; give a bridge",
                plan.vnet.name
            ))
        })?;
    // IPv6 workloads check their address by their own DAD (see `wait_for_dad`).
    let (IpAddr::V4(host), IpAddr::V4(gateway)) = (plan.address.addr(), plan.gateway) else {
        return Ok(None);
    };
    if let Some(owner) = arp::who_has(plan.vnet.index, mac, host)? {
        return Err(Failure::new(format!(
            "address: {host} is in use on {} (answered ARP from {}); give an unused address in \
             the tenant's subnet",
            plan.vnet.name,
            arp::format_mac(owner)
        )));
    }
    if plan.gateway_is_node {
        return Ok(None);
    }
    match arp::who_has(plan.vnet.index, mac, gateway)? {
        Some(router) => Ok(Some(router)),
        None => Err(Failure::new(format!(
            "gateway: {} is neither the node's address on {} nor answers ARP there; give the \
             router of the tenant's subnet, or leave gateway out for the node's own address",
            plan.gateway, plan.vnet.name
        ))),
    }
}

/// The ARP checks of every probe ([`check_on_vnet`]) at once, each on a thread of its own:
/// 3 s in all, whatever the probe count. The first refusal, `name`d by `label`; else the MAC
/// that answered for each probe's gateway that is not the node's ([`gateway_macs`]).
pub fn check_all_on_vnet(
    plans: &[Plan],
    node: &NodeFacts,
    label: impl Fn(usize) -> String,
) -> Result<Vec<Option<[u8; 6]>>, Failure> {
    std::thread::scope(|scope| {
        let checks: Vec<_> = plans
            .iter()
            .map(|plan| {
                scope.spawn(move || {
                    // A tagged workload's VLAN is not the bridge's own: it asks from inside;
                    // an IPv6 workload's address is checked by its own DAD.
                    if plan.vlan.is_some() || plan.address.addr().is_ipv6() {
                        Ok(None)
                    } else {
                        check_on_vnet(plan, node)
                    }
                })
            })
            .collect();
        let mut answered = Vec::with_capacity(plans.len());
        for (i, check) in checks.into_iter().enumerate() {
            answered.push(
                check
                    .join()
                    .map_err(|_| Failure::new("an ARP check's thread panicked"))?
                    .map_err(|e| Failure::new(format!("{}{}", label(i), e.msg)))?,
            );
        }
        Ok(answered)
    })
}

/// The gateway's MAC each workload pins in its neighbour table, so that a host on the VNet
/// answering ARP in the gateway's name (and passing only some of the probes on) cannot
/// become the workload's router: the VNet bridge's own MAC for a gateway of the node's (the
/// anycast gateway of an EVPN zone is the bridge's address too), the MAC that answered the
/// ARP check for another router, none for an IPv6 gateway (left to neighbour discovery, which
/// is also how the node learns the workload), and a tagged workload's is pinned from its own
/// check inside. `links`
/// are asked for once every workload is attached, one lookup per VNet (no dump of the node): a
/// bridge without a MAC of its own takes its lowest port's, so attaching may change it.
pub fn gateway_macs(
    netlink: &Netlink,
    plans: &[Plan],
    answered: &[Option<[u8; 6]>],
) -> Result<Vec<Option<[u8; 6]>>, Failure> {
    let mut bridges: Vec<(u32, Option<[u8; 6]>)> = Vec::new();
    let mut pins = Vec::with_capacity(plans.len());
    for (plan, answered) in plans.iter().zip(answered) {
        pins.push(if plan.gateway.is_ipv6() {
            // Neighbour discovery is how the node (and an EVPN zone) learns the workload:
            // the workload must ask for its gateway.
            None
        } else if plan.gateway_is_node {
            match bridges.iter().find(|(index, _)| *index == plan.vnet.index) {
                Some((_, mac)) => *mac,
                None => {
                    let mac = veth::link_by_name(netlink, &plan.vnet.name)?
                        .and_then(|link| link.mac.as_deref().and_then(arp::parse_mac));
                    bridges.push((plan.vnet.index, mac));
                    mac
                }
            }
        } else {
            *answered
        });
    }
    Ok(pins)
}

/// One probe's workload while it exists.
struct Workload<'a> {
    namespace: Namespace,
    guard: VethGuard<'a>,
    node_end: String,
    inside_end: String,
    index: u32,
}

/// What one probe found, and the node end of its veth (gone by now).
pub struct Probed {
    pub report: Report,
    pub interface: String,
}

/// How the run is laid out: the `probes` form (veth names per probe), and the instant its
/// probing starts (seconds since the epoch).
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub listed: bool,
    pub start_at: Option<f64>,
}

/// Every probe of the run at once. Every way out removes every veth pair: explicitly on
/// success and on errors (the guards), and by the kernel with the namespaces when the
/// process dies. Messages name a probe by `label`. With `start_at`, the probing starts then
/// (at once when the workloads were ready later), and every workload stays up until
/// `start_at` + count × timeout, for the peers that probe it meanwhile.
pub fn probe(
    netlink: &Netlink,
    plans: &[Plan],
    gateways_answered: &[Option<[u8; 6]>],
    node: &NodeFacts,
    mark: &Mark,
    layout: Layout,
    label: impl Fn(usize) -> String,
) -> Result<(Vec<Probed>, Start), Failure> {
    let listed = layout.listed;
    let named = |i: usize, failure: Failure| Failure::new(format!("{}{}", label(i), failure.msg));
    let makers: Vec<Netlink> = (0..WORKLOAD_MAKERS.min(plans.len()))
        .map(|_| Netlink::connect())
        .collect::<Result<_, _>>()?;
    let workloads = make_all(&makers, plans, node, mark, listed).map_err(|(i, e)| named(i, e))?;
    let pins = gateway_macs(netlink, plans, gateways_answered)?;
    configure_all(&workloads, plans, &pins, &named)?;

    let settings: Vec<probe::Settings> = plans
        .iter()
        .map(|plan| probe::Settings {
            workload: plan.address.addr(),
            count: plan.count,
            timeout: Duration::from_secs(plan.timeout_secs.into()),
            mtu: plan.mtu.min(u32::from(u16::MAX)) as u16,
        })
        .collect();
    // The echo identifiers mark this run's pings, also once SNAT replaced their source; the
    // ports and nonce are chosen now, so the capture recognizes the probes from their first
    // frame.
    let per_probe: Vec<(&[crate::params::Target], probe::Settings)> = plans
        .iter()
        .zip(&settings)
        .map(|(plan, settings)| (&plan.targets[..], *settings))
        .collect();
    let icmp_id = (std::process::id() & 0xffff) as u16;
    let identities = probe::identities(&per_probe, icmp_id)?;
    let captures = start_captures(plans, &workloads, &identities, node)?;
    let start = Start {
        start_at: layout.start_at,
        start_late_secs: layout.start_at.map(wait_for_start),
    };
    let probing: Vec<_> = workloads
        .iter()
        .zip(plans)
        .zip(settings.iter().zip(&identities))
        .map(|((workload, plan), (settings, identity))| {
            let (targets, settings, identity) = (plan.targets.clone(), *settings, identity.clone());
            workload
                .namespace
                .spawn(move || all_targets::run(&targets, settings, &identity))
        })
        .collect::<Result<_, _>>()?;
    let mut outcomes = Vec::with_capacity(plans.len());
    for (i, handle) in probing.into_iter().enumerate() {
        outcomes.push(join(handle).map_err(|e| named(i, e))?);
    }
    let captured = captures.finish()?;
    if let Some(start_at) = layout.start_at {
        stay_up_until(start_at + window_secs(plans));
    }
    let interfaces = remove_all(netlink, workloads)?;
    let node_addresses: Vec<IpAddr> = node.addresses.iter().map(|a| a.net.addr()).collect();
    let mut probed = Vec::with_capacity(plans.len());
    for (((interface, plan), outcomes), (captured, identity)) in interfaces
        .into_iter()
        .zip(plans)
        .zip(outcomes)
        .zip(captured.into_iter().zip(&identities))
    {
        probed.push(Probed {
            report: report::build_on_node(
                &plan.targets,
                &outcomes,
                &captured.captures,
                captured.dropped,
                &identity.markers,
                &node_addresses,
            ),
            interface,
        });
    }
    Ok((probed, start))
}

/// Every workload configured from inside its namespace, all at once (their links come up
/// together: one wait, not one per probe): address, route, the gateway checked and pinned,
/// an announcement. `pins`: the gateway's MAC per probe, where known already.
fn configure_all(
    workloads: &[Workload<'_>],
    plans: &[Plan],
    pins: &[Option<[u8; 6]>],
    named: &impl Fn(usize, Failure) -> Failure,
) -> Result<(), Failure> {
    let configuring: Vec<_> = workloads
        .iter()
        .zip(plans.iter().zip(pins))
        .map(|(workload, (plan, gateway_mac))| {
            let (address, gateway, mtu) = (plan.address, plan.gateway, plan.mtu);
            let (inside, tagged) = (workload.inside_end.clone(), plan.vlan.is_some());
            let mut gateway_mac = *gateway_mac;
            workload.namespace.spawn(move || -> Result<(), Failure> {
                let inside = configure_workload(&inside, address, gateway, mtu)?;
                match (address.addr(), gateway) {
                    (IpAddr::V6(host), _) => wait_for_dad(&inside, host)?,
                    (IpAddr::V4(host), IpAddr::V4(gateway)) if tagged => {
                        gateway_mac = Some(check_from_inside(&inside, host, gateway)?)
                    }
                    _ => {}
                }
                if let Some(mac) = gateway_mac {
                    node::pin_neighbour(&inside.netlink, inside.index, gateway, mac)?;
                }
                if let (IpAddr::V4(host), IpAddr::V4(gateway)) = (address.addr(), gateway) {
                    arp::announce(inside.index, inside.mac, host, gateway)?;
                }
                Ok(())
            })
        })
        .collect::<Result<_, _>>()?;
    for (i, handle) in configuring.into_iter().enumerate() {
        join(handle)
            .map_err(|e| named(i, e))?
            .map_err(|e| named(i, e))?;
    }
    Ok(())
}

/// The run's one capture, started before any probe is sent. The links of the first read (no
/// second dump): the probes' veths are not among them, so none is watched, and each is added
/// to the unwatched ones by its index, first, as it carries every frame of its workload.
fn start_captures(
    plans: &[Plan],
    workloads: &[Workload<'_>],
    identities: &[probe::Identity],
    node: &NodeFacts,
) -> Result<capture::Running, Failure> {
    let recognizers: Vec<capture::Recognizer> = plans
        .iter()
        .zip(workloads)
        .zip(identities)
        .map(|((plan, workload), identity)| capture::Recognizer {
            watched: capture::watched(plan, &node.links, workload.index),
            tagged_ports: capture::tagged_ports(plan, &node.links, workload.index),
            targets: plan.targets.clone(),
            markers: identity.markers.clone(),
        })
        .collect();
    let mut unwatched: Vec<u32> = workloads.iter().map(|w| w.index).collect();
    unwatched.extend(node.links.iter().map(|link| link.index).filter(|index| {
        !recognizers
            .iter()
            .any(|r| r.watched.iter().any(|(i, _)| i.index == *index))
    }));
    let markers: Vec<_> = identities.iter().map(|i| i.markers.clone()).collect();
    let tagged_vlans: Vec<u16> = plans.iter().filter_map(|plan| plan.vlan).collect();
    let socket = CaptureSocket::open(&markers, &unwatched, &tagged_vlans)?;
    Ok(capture::start(socket, recognizers))
}

/// Seconds since the epoch, by the node's clock.
fn epoch_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64())
}

/// Waits until `start_at` (at most the 300 s `params::check_start_at` allowed when the run
/// began); how late the workloads were for it, 0 when they waited.
fn wait_for_start(start_at: f64) -> f64 {
    let ahead = start_at - epoch_now();
    if ahead > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(ahead));
        0.0
    } else {
        -ahead
    }
}

/// The seconds a workload may probe: the run's count × timeout (every target's attempts
/// follow one another, each waiting at most the timeout).
fn window_secs(plans: &[Plan]) -> f64 {
    plans
        .iter()
        .map(|plan| f64::from(plan.count) * f64::from(plan.timeout_secs))
        .fold(0.0, f64::max)
}

/// Keeps the workloads (answering, by their kernel) until `until`, seconds since the epoch:
/// the end of the window in which the proof's peers on other nodes probe them.
fn stay_up_until(until: f64) {
    let left = until - epoch_now();
    if left > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(left));
    }
}

/// How long the kernel may take to tear the workloads' namespaces down before their veths are
/// deleted one by one.
const TEARDOWN_WAIT: Duration = Duration::from_secs(5);

/// Removes every workload; the node ends' names. The namespaces go first: the kernel
/// unregisters all their veths in one batch, where deleting them one by one costs a
/// network-wide RCU wait each (some 35 ms: 3.5 s for 100 probes). Then the run waits until
/// the node lists none of them, and deletes whatever is still there and carries its mark.
fn remove_all(netlink: &Netlink, workloads: Vec<Workload>) -> Result<Vec<String>, Failure> {
    let mut guards = Vec::with_capacity(workloads.len());
    let mut names = Vec::with_capacity(workloads.len());
    for workload in workloads {
        drop(workload.namespace);
        names.push(workload.node_end);
        guards.push(workload.guard);
    }
    let started = Instant::now();
    while started.elapsed() < TEARDOWN_WAIT {
        let links = netlink.links()?;
        if names.iter().all(|name| links.by_name(name).is_none()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for guard in guards {
        guard.remove()?;
    }
    Ok(names)
}

/// Workloads made side by side: the kernel makes namespaces in parallel, and a run of 100
/// probes under emulation spent 165 ms on each made one after another.
const WORKLOAD_MAKERS: usize = 4;

/// Every probe's workload, made by the `makers` (one rtnetlink connection each) side by side,
/// each taking every n-th probe; the first failure by probe index, after every workload made
/// is removed again (their guards).
fn make_all<'a>(
    makers: &'a [Netlink],
    plans: &[Plan],
    node: &NodeFacts,
    mark: &Mark,
    listed: bool,
) -> Result<Vec<Workload<'a>>, (usize, Failure)> {
    let pid = std::process::id();
    let names = |i: usize| {
        if listed {
            veth::probe_veth_names(pid, i)
        } else {
            veth::veth_names(pid)
        }
    };
    let mut made: Vec<(usize, Result<Workload<'a>, Failure>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = makers
            .iter()
            .enumerate()
            .map(|(k, netlink)| {
                scope.spawn(move || {
                    (k..plans.len())
                        .step_by(makers.len())
                        .map(|i| (i, make_workload(netlink, &plans[i], node, mark, names(i))))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    vec![(0, Err(Failure::new("a thread making workloads panicked")))]
                })
            })
            .collect()
    });
    made.sort_by_key(|(i, _)| *i);
    let mut workloads = Vec::with_capacity(plans.len());
    for (i, workload) in made {
        workloads.push(workload.map_err(|e| (i, e))?);
    }
    Ok(workloads)
}

/// One probe's namespace and veth, marked and attached to its VNet.
fn make_workload<'a>(
    netlink: &'a Netlink,
    plan: &Plan,
    node: &NodeFacts,
    mark: &Mark,
    (node_end, inside_end): (String, String),
) -> Result<Workload<'a>, Failure> {
    let namespace = Namespace::new(plan.address.addr().is_ipv6())?;
    let (guard, index) = veth::plug(netlink, (&node_end, &inside_end), &namespace, mark)?;
    // Like a VM's tap on Proxmox: no IPv6 of the node's own on the port (no DAD, no router
    // solicitation on the tenant's VNet). A /proc/sys that refuses leaves only that noise.
    let _ = SysctlKey::ipv6_conf(&node_end, "disable_ipv6").write("1");
    veth::attach(netlink, index, plan.vnet.index, plan.mtu)
        .map_err(|error| attach_failure(error, plan, node))?;
    if let Some(vlan) = plan.vlan {
        tag_port(netlink, index, vlan)?;
    }
    Ok(Workload {
        namespace,
        guard,
        node_end,
        inside_end,
        index,
    })
}

/// Makes the workload's port an untagged member of `vlan` only (its PVID), as Proxmox does
/// with a VM's `tag=VLAN` NIC: the bridge's default PVID the port got on attach goes.
fn tag_port(netlink: &Netlink, port: u32, vlan: u16) -> Result<(), Failure> {
    let defaults: Vec<u16> = netlink
        .bridge_vlans()?
        .iter()
        .filter(|p| p.index == port)
        .flat_map(|p| p.vlans.iter().flat_map(|v| v.start..=v.end))
        .filter(|vid| *vid != vlan)
        .collect();
    for vid in defaults {
        netlink.bridge_port_vlan_del(port, vid)?;
    }
    netlink.bridge_port_vlan_add_pvid(port, vlan)?;
    Ok(())
}

/// The attach error in the operator's words: a full bridge says `Exchange full` (EXFULL).
fn attach_failure(error: NetlinkError, plan: &Plan, node: &NodeFacts) -> Failure {
    if error.errno() != Some(libc::EXFULL) {
        return error.into();
    }
    Failure::new(format!(
        "vnet: {} is full: a Linux bridge takes at most {BRIDGE_MAX_PORTS} ports and it has {}, \
         so the workload cannot plug in as a VM would not either; free a port on it, or probe \
         from another VNet of the tenant",
        plan.vnet.name,
        node.links.ports_of(plan.vnet.index).count()
    ))
}

/// BR_MAX_PORTS − 1: port number 0 is reserved.
const BRIDGE_MAX_PORTS: usize = 1023;

/// How long an IPv6 workload's duplicate address detection may take (one solicitation, a
/// second's wait, as the workload's sysctls set it).
const DAD_WAIT: Duration = Duration::from_secs(4);

/// An IPv6 workload's address-in-use check: its own duplicate address detection (a neighbor
/// solicitation from ::, which any owner of the address answers), ND's ARP probe.
fn wait_for_dad(inside: &Inside, host: std::net::Ipv6Addr) -> Result<(), Failure> {
    let started = Instant::now();
    loop {
        match node::dad_outcome(&inside.netlink, inside.index, host.into())? {
            Some(true) => {
                return Err(Failure::new(format!(
                    "address: {host} is in use on the VNet (duplicate address detection: \
                     another host answered the neighbor solicitation); give an unused address \
                     in the tenant's subnet"
                )))
            }
            Some(false) => return Ok(()),
            None if started.elapsed() > DAD_WAIT => {
                return Err(Failure::new(format!(
                    "address: duplicate address detection of {host} did not finish within {}s",
                    DAD_WAIT.as_secs()
                )))
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// A tagged workload's refusals, asked from inside: its address must not answer ARP, its
/// gateway must; the gateway's MAC, which the workload pins.
fn check_from_inside(
    inside: &Inside,
    address: std::net::Ipv4Addr,
    gateway: std::net::Ipv4Addr,
) -> Result<[u8; 6], Failure> {
    if let Some(owner) = arp::who_has(inside.index, inside.mac, address)? {
        return Err(Failure::new(format!(
            "address: {address} is in use on the VLAN (answered ARP from {}); give an unused \
             address in the tenant's subnet",
            arp::format_mac(owner)
        )));
    }
    arp::who_has(inside.index, inside.mac, gateway)?.ok_or_else(|| {
        Failure::new(format!(
            "gateway: {gateway} does not answer ARP on the VLAN; give the tenant's router there"
        ))
    })
}

/// The workload's interface once configured and up: its connection, index and MAC, read once
/// for everything the workload then does on it.
struct Inside {
    netlink: Netlink,
    index: u32,
    mac: [u8; 6],
}

fn configure_workload(
    dev: &str,
    address: ipnet::IpNet,
    gateway: IpAddr,
    mtu: u32,
) -> Result<Inside, Failure> {
    let netlink = Netlink::connect()?;
    node::configure_inside(&netlink, dev, address, gateway, mtu)?;
    let started = Instant::now();
    loop {
        let links = netlink.links()?;
        if let Some(link) = links
            .by_name(dev)
            .filter(|link| link.oper_state == OperState::Up)
        {
            let mac = link
                .mac
                .as_deref()
                .and_then(arp::parse_mac)
                .ok_or_else(|| {
                    Failure::new(format!("{dev} has no Ethernet address in the workload"))
                })?;
            let index = link.index;
            return Ok(Inside {
                netlink,
                index,
                mac,
            });
        }
        if started.elapsed() > LINK_UP_WAIT {
            return Err(NetlinkError::other(
                "configuring the workload",
                format!(
                    "its interface did not come up within {}s on the VNet",
                    LINK_UP_WAIT.as_secs()
                ),
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
