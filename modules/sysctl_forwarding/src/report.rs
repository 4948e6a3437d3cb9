//! What the module reports ([`Report`]: every result key besides `changed` and `msg`, declared
//! once for success and failure) and its summary line. Pure.

use crate::boot::BootSetting;
use crate::params::{Options, State};
use deevnet_runtime::sysctl::SysctlKey;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A runtime value before and after the run.
#[derive(Serialize, Clone, Debug)]
pub struct BeforeAfter {
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The result's keys (the module's RETURN documentation), for success.
#[derive(Serialize)]
pub struct Report {
    pub path: PathBuf,
    /// The boot-time winner of every managed key, after the file change.
    pub boot: BTreeMap<String, BootSetting>,
    /// Each managed key before and after; with ipv6=false, IPv6 forwarding as observed.
    pub runtime: BTreeMap<String, BeforeAfter>,
    /// Each listed interface's IPv4 forwarding before and after.
    pub interfaces: BTreeMap<String, BeforeAfter>,
    /// The backup of the file replaced or removed, when backup=true made one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_file: Option<PathBuf>,
}

/// `interfaces`: each listed interface's IPv4 forwarding before and after.
pub fn interfaces_report(
    options: &Options,
    runtime: &BTreeMap<String, BeforeAfter>,
) -> BTreeMap<String, BeforeAfter> {
    options
        .interfaces
        .iter()
        .filter_map(|name| {
            let key = SysctlKey::ipv4_conf(name, "forwarding").to_string();
            runtime
                .get(&key)
                .map(|values| (name.clone(), values.clone()))
        })
        .collect()
}

/// `msg`: what happened to the file and how many runtime values were set.
pub fn summary(options: &Options, file_changed: bool, applied: usize, check_mode: bool) -> String {
    let would = if check_mode { "would be " } else { "" };
    let file = match (file_changed, options.state) {
        (false, _) => format!("{} unchanged", options.path.display()),
        (true, State::Present) => format!("{} {would}written", options.path.display()),
        (true, State::Absent) => format!("{} {would}removed", options.path.display()),
    };
    format!("{file}; {applied} runtime value(s) {would}set")
}
