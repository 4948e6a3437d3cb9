//! One probe session on the node, from the resolved [`Plan`] to the [`Report`]: the address
//! locked and checked free, the workload made, marked and attached, captures started, probes
//! sent from inside, everything removed again.

use crate::capture::{self, CaptureSocket};
use crate::report::{self, Report};
use crate::tenant::{NodeFacts, Plan};
use crate::workload::{self, Mark, Namespace, VethGuard};
use crate::{arp, node, probe};
use deevnet_runtime::file_policy::FileLock;
use deevnet_runtime::netlink::{Netlink, NetlinkError, OperState};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
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
/// is not the node's must.
pub fn check_on_vnet(plan: &Plan, node: &NodeFacts) -> Result<(), Failure> {
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
    let host = plan.address.addr();
    if let Some(owner) = arp::who_has(plan.vnet.index, mac, host)? {
        return Err(Failure::new(format!(
            "address: {host} is in use on {} (answered ARP from {}); give an unused address in \
             the tenant's subnet",
            plan.vnet.name,
            arp::format_mac(owner)
        )));
    }
    if !plan.gateway_is_node && arp::who_has(plan.vnet.index, mac, plan.gateway)?.is_none() {
        return Err(Failure::new(format!(
            "gateway: {} is neither the node's address on {} nor answers ARP there; give the \
             router of the tenant's subnet, or leave gateway out for the node's own address",
            plan.gateway, plan.vnet.name
        )));
    }
    Ok(())
}

/// The probe itself. Every way out removes the veth pair: explicitly on success and on errors
/// (the guard), and by the kernel with the namespace when the process dies.
pub fn probe(
    netlink: &Netlink,
    plan: &Plan,
    node: &NodeFacts,
    mark: &Mark,
) -> Result<(Report, String), Failure> {
    let pid = std::process::id();
    let (node_end, inside_end) = workload::veth_names(pid);
    let namespace = Namespace::new()?;
    node::add_veth(netlink, &node_end, &inside_end, namespace.fd()).map_err(|error| {
        if error.errno() != Some(libc::EEXIST) {
            return Failure::from(error);
        }
        // Not ours, so never deleted: process ids repeat across PID namespaces (containers).
        Failure::new(format!(
            "{node_end} exists already on the node, and this run did not make it (a run with \
             process id {pid} in another PID namespace, or an operator's interface); run the \
             probe again once it is gone, or from the node's own PID namespace"
        ))
    })?;
    let guard = VethGuard::new(netlink, node_end.clone(), mark);
    let node_index = node::link_by_name(netlink, &node_end)?
        .map(|link| link.index)
        .ok_or_else(|| Failure::new(format!("{node_end} vanished right after it was created")))?;
    node::set_alias(netlink, node_index, &mark.alias())?;
    // Like a VM's tap on Proxmox: no IPv6 of the node's own on the port (no DAD, no router
    // solicitation on the tenant's VNet). A /proc/sys that refuses leaves only that noise.
    let _ = SysctlKey::ipv6_conf(&node_end, "disable_ipv6").write("1");
    node::attach(netlink, node_index, plan.vnet.index)
        .map_err(|error| attach_failure(error, plan, node))?;

    let (address, gateway) = (plan.address, plan.gateway);
    let inside = inside_end.clone();
    namespace.run(move || configure_workload(&inside, address, gateway))??;

    let settings = probe::Settings {
        workload: plan.address.addr(),
        count: plan.count,
        timeout: Duration::from_secs(plan.timeout_secs.into()),
    };
    // The echo identifier marks this run's pings, also once SNAT replaced their source; the
    // ports and nonce are chosen now, so the capture recognizes the probe from its first frame.
    let icmp_id = (pid & 0xffff) as u16;
    let identity = probe::identity(&plan.targets, settings, icmp_id)?;
    // The links of the first read (no second dump): the probe's veth is not among them, so it
    // is added to the unwatched ones by its index, first, as it carries every workload frame.
    let watched = capture::watched(plan, &node.links, node_index);
    let mut unwatched = vec![node_index];
    unwatched.extend(capture::unwatched(&node.links, &watched));
    let socket = CaptureSocket::open(&identity.markers, &unwatched)?;
    let captures = capture::start(
        socket,
        capture::Recognizer {
            watched,
            targets: plan.targets.clone(),
            markers: identity.markers.clone(),
        },
    );
    let targets = plan.targets.clone();
    let probing = identity.clone();
    let outcomes = namespace.run(move || probe::run_all(&targets, settings, &probing))?;
    let captured = captures.finish()?;
    guard.remove()?;
    drop(namespace);
    Ok((
        report::build(
            &plan.targets,
            &outcomes,
            &captured.captures,
            captured.dropped,
            &identity.markers,
        ),
        node_end,
    ))
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

fn configure_workload(
    dev: &str,
    address: ipnet::Ipv4Net,
    gateway: std::net::Ipv4Addr,
) -> Result<(), NetlinkError> {
    let netlink = Netlink::connect()?;
    node::configure_inside(&netlink, dev, address, gateway)?;
    let started = Instant::now();
    loop {
        let links = netlink.links()?;
        if links
            .by_name(dev)
            .is_some_and(|link| link.oper_state == OperState::Up)
        {
            return Ok(());
        }
        if started.elapsed() > LINK_UP_WAIT {
            return Err(NetlinkError::other(
                "configuring the workload",
                format!(
                    "its interface did not come up within {}s on the VNet",
                    LINK_UP_WAIT.as_secs()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
