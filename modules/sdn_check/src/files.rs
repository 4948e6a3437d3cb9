//! The files sdn_check reads, each through the runtime's file policy as another tool's file
//! (`file_policy::read_trusted`: only root may have written it, links only when trusted) and
//! capped at [`MAX_CONFIG_BYTES`]; then parsed by the pure modules. Every error names the
//! option, the path, what is wrong and the fix.

use crate::interfaces::{self, OwnInterfaces};
use crate::params::Files;
use crate::running_config::{self, ObjectKind, Objects, RunningConfig};
use crate::section_config;
use deevnet_runtime::file_policy;
use deevnet_runtime::Failure;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The largest SDN or network file sdn_check reads: a cluster's SDN of thousands of VNets is
/// a few hundred KiB.
pub const MAX_CONFIG_BYTES: usize = 4 * 1024 * 1024;

/// Everything the files say, parsed.
#[derive(Debug, Clone)]
pub struct Sources {
    pub running: RunningConfig,
    /// The `.cfg` files' sections by kind (a missing file: none of that kind).
    pub pending: BTreeMap<ObjectKind, Objects>,
    /// The `#version:N` of interfaces_sdn; `None` when the file does not exist.
    pub applied: Option<u64>,
    /// The devices interfaces_sdn declares (none when the file does not exist).
    pub applied_devices: BTreeSet<String>,
    pub own: OwnInterfaces,
}

/// `parameter=path`, as the file policy names files.
fn named(parameter: &str, path: &Path) -> String {
    format!("{parameter}={}", path.display())
}

/// Reads one file by the policy; `None` when it does not exist.
pub fn read(parameter: &str, path: &Path) -> Result<Option<String>, Failure> {
    let text = file_policy::read_trusted(parameter, path)?;
    if let Some(text) = &text {
        if text.len() > MAX_CONFIG_BYTES {
            return Err(Failure::new(format!(
                "{} is {} bytes, more than the {} MiB an SDN or network file holds; give the right {parameter}; nothing was read from it",
                named(parameter, path),
                text.len(),
                MAX_CONFIG_BYTES / (1024 * 1024)
            )));
        }
    }
    Ok(text)
}

/// Reads a file that must exist.
fn read_required(parameter: &str, path: &Path, what: &str) -> Result<String, Failure> {
    read(parameter, path)?
        .ok_or_else(|| Failure::new(format!("{} does not exist: {what}", named(parameter, path))))
}

/// Why the SDN's running configuration is absent, when it is: the file, or a folder above it,
/// does not exist. Proxmox writes it when the SDN is applied, into its cluster file system
/// (/etc/pve, mounted by pve-cluster), whose folders are never made by hand: the fix is to apply
/// the SDN, or not to read it.
pub fn running_config_absent(path: &Path) -> Option<String> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let mut missing = path;
    while let Some(parent) = missing.parent() {
        if parent.as_os_str().is_empty() || std::fs::symlink_metadata(parent).is_ok() {
            break;
        }
        missing = parent;
    }
    let why = if missing == path {
        "the SDN was never applied on this cluster (Proxmox writes the file when it applies the SDN)".to_string()
    } else {
        format!(
            "nor does {}: no SDN was ever applied on this cluster, or this is not a Proxmox VE node (/etc/pve is Proxmox's cluster file system, mounted by pve-cluster; its folders are never created by hand)",
            missing.display()
        )
    };
    Some(format!(
        "{} does not exist: {why}; apply the SDN in Proxmox (Datacenter > SDN > Apply, or `pvesh set /cluster/sdn`), or, on a node without Proxmox's SDN, do not read it (the role deevnet.net.proxmox_node_network: proxmox_node_network_sdn: ignore), or give the right running_config",
        named("running_config", path)
    ))
}

/// Reads and parses every file the request names. An absent running configuration fails with
/// `sdn_applied: false`, so a caller can tell it from any other failure.
pub fn read_sources(request: &Files) -> Result<Sources, Failure> {
    if let Some(why) = running_config_absent(&request.running_config) {
        return Err(Failure::new(why)
            .with("changed", false)
            .with("sdn_applied", false));
    }
    let text = read_required(
        "running_config",
        &request.running_config,
        "no SDN configuration was applied on this cluster (`pvesh set /cluster/sdn` writes it), or this is not a Proxmox VE node; give the right running_config",
    )?;
    let running = running_config::parse(&text, &named("running_config", &request.running_config))?;

    let mut pending = BTreeMap::new();
    for kind in ObjectKind::ALL {
        let path = request.config_dir.join(kind.file_name());
        // Proxmox writes a .cfg file with the first object of its kind: none is no object.
        if let Some(text) = read("config_dir", &path)? {
            pending.insert(
                kind,
                section_config::parse(&text, &named("config_dir", &path))?,
            );
        }
    }

    let (applied, applied_devices) = match read("interfaces_sdn", &request.interfaces_sdn)? {
        Some(text) => (
            Some(interfaces::applied_version(
                &text,
                &named("interfaces_sdn", &request.interfaces_sdn),
            )?),
            interfaces::generated_devices(&text),
        ),
        None => (None, BTreeSet::new()),
    };

    let text = read_required(
        "interfaces",
        &request.interfaces,
        "the node's own addresses (which pick its VTEP) are read from it; give the node's network configuration file",
    )?;
    let own = interfaces::own_interfaces(&text, &named("interfaces", &request.interfaces))?;
    Ok(Sources {
        running,
        pending,
        applied,
        applied_devices,
        own,
    })
}

/// This host's short name (Proxmox's node name: the host name up to its first dot).
pub fn host_name() -> Result<String, Failure> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").map_err(|e| {
        Failure::new(format!(
            "cannot read this host's name from /proc/sys/kernel/hostname ({e}); give node"
        ))
    })?;
    let short = name
        .trim()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_string();
    if short.is_empty() {
        return Err(Failure::new(
            "this host has no name (/proc/sys/kernel/hostname is empty); give node",
        ));
    }
    Ok(short)
}
