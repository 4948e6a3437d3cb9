//! One probe on the node, from the resolved [`Plan`] to the [`Report`]: the workload made and
//! attached, captures started, probes sent from inside, everything removed again.

use crate::capture::{self, CaptureSocket};
use crate::report::{self, Report};
use crate::tenant::{NodeFacts, Plan};
use crate::workload::{self, Namespace, VethGuard};
use crate::{arp, node, probe};
use deevnet_runtime::netlink::{Netlink, OperState};
use deevnet_runtime::sysctl::SysctlKey;
use std::time::{Duration, Instant};

/// How long the workload's interface may take to come up.
const LINK_UP_WAIT: Duration = Duration::from_secs(3);

/// The last refusals, which need the VNet: the address must not answer ARP, and a gateway that
/// is not the node's must.
pub fn check_on_vnet(plan: &Plan, node: &NodeFacts) -> Result<(), String> {
    let link = node
        .links
        .by_index(plan.vnet.index)
        .ok_or_else(|| format!("vnet: {} vanished while checking", plan.vnet.name))?;
    let mac = link
        .mac
        .as_deref()
        .and_then(arp::parse_mac)
        .ok_or_else(|| {
            format!(
                "vnet: {} has no Ethernet address to send the ARP check from; give a bridge",
                plan.vnet.name
            )
        })?;
    let host = plan.address.addr();
    if let Some(owner) = arp::who_has(plan.vnet.index, mac, host)? {
        return Err(format!(
            "address: {host} is in use on {} (answered ARP from {}); give an unused address in \
             the tenant's subnet",
            plan.vnet.name,
            arp::format_mac(owner)
        ));
    }
    if !plan.gateway_is_node && arp::who_has(plan.vnet.index, mac, plan.gateway)?.is_none() {
        return Err(format!(
            "gateway: {} is neither the node's address on {} nor answers ARP there; give the \
             router of the tenant's subnet, or leave gateway out for the node's own address",
            plan.gateway, plan.vnet.name
        ));
    }
    Ok(())
}

/// The probe itself. Every way out removes the veth pair: explicitly on success and on errors
/// (the guard), and by the kernel with the namespace when the process dies.
pub fn probe(netlink: &Netlink, plan: &Plan) -> Result<(Report, String), String> {
    let pid = std::process::id();
    let (node_end, inside_end) = workload::veth_names(pid);
    let namespace = Namespace::new()?;
    node::add_veth(netlink, &node_end, &inside_end, namespace.fd()).map_err(|e| e.to_string())?;
    let guard = VethGuard::new(netlink, node_end.clone());
    let links = netlink.links().map_err(|e| e.to_string())?;
    let node_index = links
        .by_name(&node_end)
        .map(|link| link.index)
        .ok_or_else(|| format!("{node_end} vanished right after it was created"))?;
    // Like a VM's tap on Proxmox: no IPv6 of the node's own on the port (no DAD, no router
    // solicitation on the tenant's VNet). A /proc/sys that refuses leaves only that noise.
    let _ = SysctlKey::ipv6_conf(&node_end, "disable_ipv6").write("1");
    node::attach(netlink, node_index, plan.vnet.index).map_err(|e| e.to_string())?;

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
    let watched = capture::watched(plan, &links, node_index);
    let socket = CaptureSocket::open(&identity.markers, &capture::unwatched(&links, &watched))?;
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
    guard.remove().map_err(|e| e.to_string())?;
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

fn configure_workload(
    dev: &str,
    address: ipnet::Ipv4Net,
    gateway: std::net::Ipv4Addr,
) -> Result<(), String> {
    let netlink = Netlink::connect().map_err(|e| e.to_string())?;
    node::configure_inside(&netlink, dev, address, gateway).map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        let links = netlink.links().map_err(|e| e.to_string())?;
        if links
            .by_name(dev)
            .is_some_and(|link| link.oper_state == OperState::Up)
        {
            return Ok(());
        }
        if started.elapsed() > LINK_UP_WAIT {
            return Err(format!(
                "the workload's interface did not come up within {}s on the VNet",
                LINK_UP_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
