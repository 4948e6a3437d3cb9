//! The node's side, read only: the interfaces and forwarding switches (`/proc/sys`), the
//! ruleset, the policy-routing rules and the routes (nft and ip, trusted and bounded), the
//! persisted ruleset loaded in a scratch network namespace, the unit and nftables.conf.

use crate::checks::{Observed, UnitFiles};
use crate::nft::Ruleset;
use crate::persisted::Persisted;
use crate::report::Forwarding;
use crate::{gate, routes, unit, Request};
use deevnet_runtime::bounded_command;
use deevnet_runtime::file_policy;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::path::Path;
use std::time::Duration;

/// Debian's nft and ip.
pub const NFT: &str = "/usr/sbin/nft";
pub const IP: &str = "/usr/sbin/ip";
/// How long a listing may take, and how much it may print.
const TIME_LIMIT: Duration = Duration::from_secs(10);
const MAX_OUTPUT: u64 = 16 << 20;

/// Everything the checks read; a named interface that does not exist, or a listing that
/// cannot be read, fails the run (the audit cannot judge without it).
pub fn observe(request: &Request) -> Result<Observed, Failure> {
    let transit = interface_forwarding("transit_interface", &request.transit_interface)?;
    interface_forwarding("uplink", &request.uplink)?;
    let ip_forward = SysctlKey::new(&["net", "ipv4", "ip_forward"]).read()?;
    let ruleset = Ruleset::parse(&listing(NFT, &["-j", "list", "ruleset"])?)
        .map_err(|e| format!("{NFT} -j list ruleset printed {e}"))?;
    let ipv4_rules = gate::parse(&listing(IP, &["-j", "-4", "rule", "show"])?)
        .map_err(|e| format!("{IP} -j -4 rule show printed {e}"))?;
    let ipv6_rules = gate::parse(&listing(IP, &["-j", "-6", "rule", "show"])?)
        .map_err(|e| format!("{IP} -j -6 rule show printed {e}"))?;
    let routes = routes::parse(&listing(
        IP,
        &["-j", "-4", "route", "show", "table", "all"],
    )?)
    .map_err(|e| format!("{IP} -j -4 route show table all printed {e}"))?;
    Ok(Observed {
        ruleset,
        ipv4_rules,
        ipv6_rules,
        routes,
        forwarding: Forwarding {
            ip_forward: ip_forward.as_deref() == Some("1"),
            transit,
        },
        persisted: load_persisted(request),
        unit: unit_files(request),
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

fn nft(args: &[&str]) -> Result<String, String> {
    bounded_command::trusted_output(Path::new(NFT), args, TIME_LIMIT, MAX_OUTPUT)
}

/// The persisted file, read by the file policy, then loaded by nft in a network namespace
/// of its own and listed there: the host's ruleset never changes.
fn load_persisted(request: &Request) -> Persisted {
    let path = &request.ruleset_path;
    match file_policy::read_trusted("ruleset_path", path) {
        Err(e) => return Persisted::Refused(format!("{e:#}")),
        Ok(None) => return Persisted::Missing,
        Ok(Some(_)) => {}
    }
    let Some(file) = path.to_str() else {
        return Persisted::Refused(format!("{} is not UTF-8", path.display()));
    };
    let table = request.table.clone();
    let file = file.to_string();
    // A network namespace is a thread's own: this thread leaves the host's for a new, empty one,
    // and the nft it starts inherit it. The namespace goes away with the thread.
    let scratch = std::thread::spawn(move || {
        nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| format!("a scratch network namespace cannot be made: {e}"))?;
        nft(&["-f", &file])?;
        nft(&["-j", "list", "table", "inet", &table])
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
    }
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
