//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the validated [`Request`] ([`Request::from_params`], before any file is read).

use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{choices, Kind, OptionSpec};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Where Proxmox VE keeps the SDN configuration applied to the cluster (`pvesh set /cluster/sdn`).
pub const DEFAULT_RUNNING_CONFIG: &str = "/etc/pve/sdn/.running-config";
/// Where Proxmox VE keeps the SDN's section-config files (`zones.cfg`, …): changes not applied.
pub const DEFAULT_CONFIG_DIR: &str = "/etc/pve/sdn";
/// What the node generated from the running configuration, with its `#version:N` line.
pub const DEFAULT_INTERFACES_SDN: &str = "/etc/network/interfaces.d/sdn";
/// The node's own network configuration: its addresses pick the local VTEP.
pub const DEFAULT_INTERFACES: &str = "/etc/network/interfaces";

/// Every option of the module, in the order `--argument-spec` prints them; serde builds
/// [`Params`] from the validated arguments.
pub static SPEC: [OptionSpec; 7] = [
    OptionSpec::new("node", Kind::Str),
    OptionSpec::new("running_config", Kind::Path)
        .default(DefaultValue::Str(DEFAULT_RUNNING_CONFIG)),
    OptionSpec::new("config_dir", Kind::Path).default(DefaultValue::Str(DEFAULT_CONFIG_DIR)),
    OptionSpec::new("interfaces_sdn", Kind::Path)
        .default(DefaultValue::Str(DEFAULT_INTERFACES_SDN)),
    OptionSpec::new("interfaces", Kind::Path).default(DefaultValue::Str(DEFAULT_INTERFACES)),
    OptionSpec::new("kernel", Kind::Bool).default(DefaultValue::Bool(true)),
    OptionSpec::new("drift", Kind::Str)
        .choices(DriftPolicy::CHOICES)
        .default(DefaultValue::Str("fail")),
];

choices! {
    /// `drift`: what a finding does to the task: fail it, or only warn.
    pub enum DriftPolicy { Fail = "fail", Warn = "warn" }
}

/// The options as the argument spec validated them (types, defaults, choices).
#[derive(Debug, Clone, Deserialize)]
pub struct Params {
    pub node: Option<String>,
    #[serde(flatten)]
    pub files: Files,
    pub kernel: bool,
    pub drift: DriftPolicy,
}

/// The files the module reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Files {
    pub running_config: PathBuf,
    pub config_dir: PathBuf,
    pub interfaces_sdn: PathBuf,
    pub interfaces: PathBuf,
}

/// The validated options: a node name Proxmox could have, absolute paths.
#[derive(Debug, Clone)]
pub struct Request {
    /// The node the intent is for; `None`: this host's short name.
    pub node: Option<String>,
    pub files: Files,
    pub kernel: bool,
    pub drift: DriftPolicy,
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        if let Some(node) = &params.node {
            check_node_name(node)?;
        }
        let files = &params.files;
        for (parameter, path) in [
            ("running_config", &files.running_config),
            ("config_dir", &files.config_dir),
            ("interfaces_sdn", &files.interfaces_sdn),
            ("interfaces", &files.interfaces),
        ] {
            check_absolute(parameter, path)?;
        }
        Ok(Request {
            node: params.node,
            files: params.files,
            kernel: params.kernel,
            drift: params.drift,
        })
    }
}

/// A Proxmox node name is a host name without its domain (`pve-node`: letters, digits and
/// `-`, not starting or ending with `-`, at most 63 bytes).
fn check_node_name(node: &str) -> Result<(), String> {
    let valid = !node.is_empty()
        && node.len() <= 63
        && !node.starts_with('-')
        && !node.ends_with('-')
        && node.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "node: '{node}' is not a Proxmox node name (letters, digits and '-', no domain); give the name `pvecm nodes` shows, e.g. hv02, or leave node out for this host"
        ))
    }
}

/// The files are read as root: a relative path would depend on where Ansible runs the module.
fn check_absolute(parameter: &str, path: &Path) -> Result<(), String> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(format!(
            "{parameter}: '{}' is not an absolute path; give the full path, e.g. {}",
            path.display(),
            match parameter {
                "running_config" => DEFAULT_RUNNING_CONFIG,
                "config_dir" => DEFAULT_CONFIG_DIR,
                "interfaces_sdn" => DEFAULT_INTERFACES_SDN,
                _ => DEFAULT_INTERFACES,
            }
        ))
    }
}
