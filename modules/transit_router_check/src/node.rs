//! The node's side, read only: the interfaces and forwarding switches (`/proc/sys`), the
//! ruleset, the policy-routing rules, the routes, the interfaces and their addresses, the tc
//! qdiscs and filters of the transit interface and the kernel's answer for VPC addresses (nft, ip
//! and tc, trusted and bounded), the iptables-legacy tables (`/proc/net`), the reverse-path
//! sysctls, the persisted ruleset loaded in a scratch network namespace, the unit with its
//! drop-ins and nftables.conf.

use crate::checks::{Observed, UnitFiles, VpcLookups};
use crate::interface::{self, Link};
use crate::kernel::{ReversePathSysctls, TransitInterface};
use crate::persisted::Persisted;
use crate::report::Forwarding;
use crate::{gate, routes, unit, Request};
use deevnet_runtime::bounded_command;
use deevnet_runtime::file_policy;
use deevnet_runtime::nft::ranges::Range;
use deevnet_runtime::nft::{self, Ruleset};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::path::Path;
use std::time::Duration;

/// Debian's ip and tc (nft is the runtime's [`nft::NFT`]).
pub const IP: &str = "/usr/sbin/ip";
pub const TC: &str = "/usr/sbin/tc";
/// How long a listing may take, and how much it may print.
const TIME_LIMIT: Duration = Duration::from_secs(10);
const MAX_OUTPUT: u64 = 16 << 20;

/// Everything the checks read; a named interface that does not exist, or a listing that
/// cannot be read, fails the run (the audit cannot judge without it).
pub fn observe(request: &Request) -> Result<Observed, Failure> {
    let transit = interface_forwarding("transit_interface", &request.transit_interface)?;
    interface_forwarding("uplink", &request.uplink)?;
    let ip_forward = SysctlKey::new(&["net", "ipv4", "ip_forward"]).read()?;
    let ruleset = nft::read_ruleset(Path::new(nft::NFT))?;
    let ipv4_rules = gate::parse(&listing(IP, &["-j", "-4", "rule", "show"])?)
        .map_err(|e| format!("{IP} -j -4 rule show printed {e}"))?;
    let ipv6_rules = gate::parse(&listing(IP, &["-j", "-6", "rule", "show"])?)
        .map_err(|e| format!("{IP} -j -6 rule show printed {e}"))?;
    let routes = routes::parse(&listing(
        IP,
        &["-j", "-4", "route", "show", "table", "all"],
    )?)
    .map_err(|e| format!("{IP} -j -4 route show table all printed {e}"))?;
    let mut ipv6_local_routes = routes::parse(&listing(
        IP,
        &["-j", "-6", "route", "show", "table", "local"],
    )?)
    .map_err(|e| format!("{IP} -j -6 route show table local printed {e}"))?;
    // Listing one table, ip leaves its name out.
    for route in &mut ipv6_local_routes {
        route.table = Some("local".into());
    }
    let links = interface::parse_links(&listing(IP, &["-j", "-d", "addr", "show"])?)
        .map_err(|e| format!("{IP} -j -d addr show printed {e}"))?;
    let transit_names = interface::names(&links, &request.transit_interface);
    let rule_dsts: Vec<Range> = ipv4_rules.iter().filter_map(gate::IpRule::dst).collect();
    let probes = routes::probe_points(&request.vpc_ranges, &routes, &rule_dsts);
    Ok(Observed {
        vpc_lookups: vpc_lookups(request, &links, &probes),
        transit_interface: transit_interface(request, &links, &transit_names),
        transit_names,
        legacy_tables: legacy_tables(),
        reverse_path: reverse_path_sysctls(&request.uplink)?,
        ruleset,
        ipv4_rules,
        ipv6_rules,
        routes,
        ipv6_local_routes,
        forwarding: Forwarding {
            ip_forward: ip_forward.as_deref() == Some("1"),
            transit,
        },
        persisted: load_persisted(request),
        unit: unit_files(request),
    })
}

/// The transit interface's master, stacked devices and XDP program (from `ip -j -d addr show`),
/// its tc qdiscs and filters, and the other interfaces in the transit network.
fn transit_interface(request: &Request, links: &[Link], names: &[String]) -> TransitInterface {
    let transit = &request.transit_interface;
    let link = links.iter().find(|l| &l.ifname == transit);
    let tc = |args: &[&str]| {
        let mut all = vec!["-j"];
        all.extend_from_slice(args);
        bounded_command::trusted_output(Path::new(TC), &all, TIME_LIMIT, MAX_OUTPUT)
            .and_then(|json| interface::parse_tc(&json).map_err(|e| format!("{TC} printed {e}")))
    };
    let read = || -> Result<Vec<String>, String> {
        let qdiscs = tc(&["qdisc", "show", "dev", transit])?;
        let ingress = tc(&["filter", "show", "dev", transit, "ingress"])?;
        let egress = tc(&["filter", "show", "dev", transit, "egress"])?;
        Ok(interface::unproven_tc(&qdiscs, &ingress, &egress))
    };
    TransitInterface {
        master: link.and_then(|l| l.master.clone()),
        xdp: link.is_some_and(|l| l.xdp.is_some()),
        tc: read(),
        others_in_network: interface::others_in_transit_network(
            links,
            transit,
            request.transit_network,
        ),
        stacked: interface::stacked_on(links, names),
    }
}

/// The iptables-legacy tables of this network namespace, IPv4 and IPv6, as the kernel lists them
/// under `/proc/net` (absent: the module is not loaded, no table). Read as the sysctls are:
/// /proc is the kernel's own.
fn legacy_tables() -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for (family, path) in [
        ("ip", "/proc/net/ip_tables_names"),
        ("ip6", "/proc/net/ip6_tables_names"),
    ] {
        match std::fs::read_to_string(path) {
            Ok(text) => names.extend(text.split_whitespace().map(|t| format!("{family} {t}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{path} cannot be read: {e}")),
        }
    }
    Ok(names)
}

fn reverse_path_sysctls(uplink: &str) -> Result<ReversePathSysctls, Failure> {
    let read = |ifname: &str, leaf: &str| -> Result<u8, Failure> {
        let key = SysctlKey::ipv4_conf(ifname, leaf);
        let value = key.read()?;
        Ok(value.and_then(|v| v.parse().ok()).unwrap_or(0))
    };
    Ok(ReversePathSysctls {
        rp_filter_all: read("all", "rp_filter")?,
        rp_filter_uplink: read(uplink, "rp_filter")?,
        src_valid_mark_all: read("all", "src_valid_mark")? != 0,
        src_valid_mark_uplink: read(uplink, "src_valid_mark")? != 0,
    })
}

/// A transit-network address the router holds on no interface: the source of the lookups.
fn transit_source(request: &Request, links: &[Link]) -> Option<u32> {
    let held: Vec<u32> = interface::ipv4_addresses(links)
        .map(|(_, a, _)| a)
        .collect();
    let network = request.transit_network;
    let hosts = network.first.saturating_add(1)..network.last;
    hosts
        .chain([network.first])
        .take(1024)
        .find(|a| !held.contains(a))
}

/// An Internet address outside every range the options name: the route the table's private
/// drop stands in front of.
fn internet_address(request: &Request) -> Option<u32> {
    let known: Vec<Range> = [request.transit_network]
        .into_iter()
        .chain(request.vpc_ranges.iter().copied())
        .chain(request.private_ranges.iter().copied())
        .chain(request.loadbalancer_ranges.iter().copied())
        .collect();
    [[1, 1, 1, 1], [8, 8, 8, 8], [9, 9, 9, 9], [193, 0, 14, 129]]
        .into_iter()
        .map(|octets| u32::from(std::net::Ipv4Addr::from(octets)))
        .find(|a| !known.iter().any(|r| r.first <= *a && *a <= r.last))
}

/// `ip -j route get fibmatch <address> from <source> iif <transit> mark <gate_mark>` for each
/// probed VPC address and for an Internet address: what a marked transit packet meets.
fn vpc_lookups(request: &Request, links: &[Link], probes: &[u32]) -> Result<VpcLookups, String> {
    if probes.len() > routes::MAX_PROBES {
        return Err(format!(
            "{} addresses would be asked, more than {}",
            probes.len(),
            routes::MAX_PROBES
        ));
    }
    let source = transit_source(request, links)
        .map(|a| std::net::Ipv4Addr::from(a).to_string())
        .ok_or("the router holds every address of the transit network")?;
    let mark = format!("{:#x}", request.gate_mark);
    let ask = |address: u32| {
        let address = std::net::Ipv4Addr::from(address).to_string();
        let args = [
            "-j",
            "route",
            "get",
            "fibmatch",
            &address,
            "from",
            &source,
            "iif",
            &request.transit_interface,
            "mark",
            &mark,
        ];
        let answer = bounded_command::trusted_output(Path::new(IP), &args, TIME_LIMIT, MAX_OUTPUT);
        (address.clone(), routes::read_lookup(&answer))
    };
    Ok(VpcLookups {
        internet: internet_address(request).map(ask),
        vpc: probes.iter().map(|a| ask(*a)).collect(),
        source,
    })
}

/// Whether the interface forwards; an error naming the option when it does not exist.
fn interface_forwarding(parameter: &str, name: &str) -> Result<bool, Failure> {
    match SysctlKey::ipv4_conf(name, "forwarding").read()? {
        Some(value) => Ok(value == "1"),
        None => Err(Failure::new(format!(
            "{parameter}: '{name}' does not exist on this node (no IPv4 interface of that name), so the audit cannot judge it; give the interface as `ip link` shows it"
        ))),
    }
}

fn listing(program: &str, args: &[&str]) -> Result<String, Failure> {
    bounded_command::trusted_output(Path::new(program), args, TIME_LIMIT, MAX_OUTPUT)
        .map_err(Failure::new)
}

/// The persisted file, read once by the file policy, its content then loaded by nft (`nft -f
/// -`, so that nft opens no path the policy did not check) in a network namespace of its own
/// and listed there: the host's ruleset never changes.
fn load_persisted(request: &Request) -> Persisted {
    let path = &request.ruleset_path;
    let content = match file_policy::read_trusted("ruleset_path", path) {
        Err(e) => return Persisted::Refused(format!("{e:#}")),
        Ok(None) => return Persisted::Missing,
        Ok(Some(content)) => content,
    };
    let table = request.table.clone();
    // A network namespace is a thread's own: this thread leaves the host's for a new, empty one,
    // and the nft it starts inherit it. The namespace goes away with the thread.
    let scratch = std::thread::spawn(move || {
        nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| format!("a scratch network namespace cannot be made: {e}"))?;
        let nft_path = Path::new(nft::NFT);
        nft::run_with_input(nft_path, &["-f", "-"], Some(content.as_bytes()))?;
        nft::run(nft_path, &["-j", "list", "table", "inet", &table])
    });
    let loaded = scratch
        .join()
        .unwrap_or_else(|_| Err("the scratch namespace's thread ended early".into()));
    match loaded.and_then(|json| Ruleset::parse(&json)) {
        Ok(ruleset) => Persisted::Loaded(ruleset),
        Err(why) => Persisted::Refused(format!(
            "{} does not load in a scratch network namespace: {why}",
            path.display()
        )),
    }
}

/// The unit, the `<target>.wants/` link next to it that enables it, and nftables.conf.
fn unit_files(request: &Request) -> UnitFiles {
    let read = |parameter: &str, path: &Path| {
        file_policy::read_trusted(parameter, path).map_err(|e| format!("{e:#}"))
    };
    let unit_text = read("unit_path", &request.unit_path);
    let enabled_by = match &unit_text {
        Ok(Some(text)) => enabling_link(&request.unit_path, text),
        _ => None,
    };
    UnitFiles {
        unit: unit_text,
        enabled_by,
        nftables_conf: read("nftables_conf_path", &request.nftables_conf_path),
        dropins: dropins(&request.unit_path),
        shadowed_by: shadowed_by(&request.unit_path),
    }
}

/// The drop-ins systemd applies to the unit, each read by the file policy.
fn dropins(unit_path: &Path) -> Vec<unit::DropIn> {
    let mut found = Vec::new();
    for folder in unit::dropin_folders(unit_path) {
        if let Ok(entries) = std::fs::read_dir(&folder) {
            let mut names: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            names.sort();
            found.extend(names);
        }
    }
    unit::effective_dropins(&found)
        .into_iter()
        .map(|path| unit::DropIn {
            path: path.display().to_string(),
            text: match file_policy::read_trusted("unit_path", &path) {
                Ok(Some(text)) => Ok(text),
                Ok(None) => Err("it went away while read".into()),
                Err(e) => Err(format!("{e:#}")),
            },
        })
        .collect()
}

/// Unit files of the unit's name in the folders systemd reads ahead of the unit's own.
fn shadowed_by(unit_path: &Path) -> Vec<String> {
    let (Some(name), Some(own)) = (unit_path.file_name(), unit_path.parent()) else {
        return Vec::new();
    };
    unit::UNIT_FOLDERS
        .iter()
        .map(Path::new)
        .take_while(|folder| *folder != own)
        .map(|folder| folder.join(name))
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .map(|path| path.display().to_string())
        .collect()
}

/// `sysinit.target.wants/<unit>` or a `WantedBy=` target's, in the unit's folder, when it is a
/// link to the unit.
fn enabling_link(unit_path: &Path, text: &str) -> Option<String> {
    let folder = file_policy::parent_of(unit_path);
    let name = unit_path.file_name()?;
    let wanted = std::fs::canonicalize(unit_path).ok()?;
    let mut targets = vec!["sysinit.target".to_string()];
    targets.extend(unit::wanted_by(text));
    targets.into_iter().find_map(|target| {
        let link = folder.join(format!("{target}.wants")).join(name);
        let is_link = std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink());
        let leads_to_unit = std::fs::canonicalize(&link).is_ok_and(|real| real == wanted);
        (is_link && leads_to_unit).then(|| link.display().to_string())
    })
}
