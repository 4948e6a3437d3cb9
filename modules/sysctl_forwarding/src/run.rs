//! One run of `sysctl_forwarding`, apart from the binary's protocol: the typed parameters and
//! the checks types cannot make, the plan (the file's desired text, the boot-time winner of
//! every managed key, the runtime values to set), and the result's reports and summary.

use crate::boot::{self, BootSetting, DEFAULT_SEARCH_DIRS};
use crate::managed_file::{self, Setting};
use deevnet_runtime::file_policy;
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::{Context, Failure, Kind, OptionSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

static INTERFACE_NAME: OptionSpec = OptionSpec::new("interface", Kind::Str);
static SEARCH_DIR: OptionSpec = OptionSpec::new("folder", Kind::Path);
static RP_FILTER_MODE: OptionSpec = OptionSpec::new("mode", Kind::Int).choices(&["0", "1", "2"]);

/// Every option of the module, in the order `--argument-spec` prints them; serde builds
/// [`Params`] from the validated arguments.
pub static SPEC: [OptionSpec; 12] = [
    OptionSpec::new("path", Kind::Path).default(DefaultValue::Str(
        "/etc/sysctl.d/90-deevnet-tenant-fabric.conf",
    )),
    OptionSpec::new("state", Kind::Str)
        .choices(&["present", "absent"])
        .default(DefaultValue::Str("present")),
    OptionSpec::new("ipv6", Kind::Bool).default(DefaultValue::Bool(false)),
    // What the IPv6 warning tells the operator to set: a role passes its own variable's name.
    OptionSpec::new("ipv6_switch_name", Kind::Str).default(DefaultValue::Str("ipv6")),
    OptionSpec::new("interfaces", Kind::List(&INTERFACE_NAME))
        .default(DefaultValue::EmptyList)
        .aliases(&["interface"]),
    OptionSpec::new("rp_filter", Kind::Map(&RP_FILTER_MODE)).default(DefaultValue::EmptyMap),
    OptionSpec::new("apply", Kind::Bool).default(DefaultValue::Bool(true)),
    file_policy::BACKUP,
    OptionSpec::new("boot_conflict", Kind::Str)
        .choices(&["fail", "warn"])
        .default(DefaultValue::Str("fail")),
    OptionSpec::new("sysctl_dirs", Kind::List(&SEARCH_DIR))
        .default(DefaultValue::StrList(DEFAULT_SEARCH_DIRS)),
    file_policy::LOCK_TIMEOUT,
    file_policy::FOLLOW_UNTRUSTED_LINKS,
];

#[derive(Deserialize, PartialEq, Eq, Clone, Copy, Debug)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Present,
    Absent,
}

/// What a different value winning at boot does: fail the task, or only warn.
#[derive(Deserialize, PartialEq, Eq, Clone, Copy, Debug)]
#[serde(rename_all = "lowercase")]
pub enum BootConflict {
    Fail,
    Warn,
}

/// The module's parameters, as the argument spec validated them.
#[derive(Deserialize)]
pub struct Params {
    pub path: PathBuf,
    pub state: State,
    pub ipv6: bool,
    pub ipv6_switch_name: String,
    pub interfaces: Vec<String>,
    pub rp_filter: BTreeMap<String, u8>,
    pub apply: bool,
    pub backup: bool,
    pub boot_conflict: BootConflict,
    pub sysctl_dirs: Vec<PathBuf>,
    pub lock_timeout: i64,
    pub follow_untrusted_links: bool,
}

/// A runtime value before and after the run.
#[derive(Serialize, Clone, Debug)]
pub struct BeforeAfter {
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A runtime key this run may set.
pub struct RuntimeTarget {
    pub key: SysctlKey,
    pub desired: String,
    pub before: Option<String>,
    /// This run sets it: apply=true and the value differs.
    pub apply: bool,
}

/// What this run changes, computed before any change.
pub struct Plan {
    /// The managed file's text after the run; `None`: removed.
    pub after_file: Option<String>,
    /// The boot-time winner of every managed key, after the file change.
    pub boot: BTreeMap<String, BootSetting>,
    /// Every runtime key this run manages.
    pub targets: Vec<RuntimeTarget>,
}

impl Plan {
    /// The runtime keys this run sets.
    pub fn to_apply(&self) -> impl Iterator<Item = &RuntimeTarget> {
        self.targets.iter().filter(|t| t.apply)
    }
}

/// Interface names reach `/proc/sys` paths: check them by the kernel's rules first.
pub fn validate_names(params: &Params) -> Result<(), Failure> {
    for name in &params.interfaces {
        managed_file::check_interface_name("interfaces", name).map_err(Failure::new)?;
    }
    for name in params.rp_filter.keys() {
        managed_file::check_interface_name("rp_filter", name).map_err(Failure::new)?;
    }
    file_policy::lock_timeout(params.lock_timeout).map_err(Failure::from)?;
    Ok(())
}

/// The desired file, its boot-time precedence and the runtime values to set. Fails on a boot
/// conflict (unless boot_conflict=warn) or a missing interface, before anything changes.
pub fn plan(ctx: &mut Context, params: &Params) -> Result<Plan, Failure> {
    let settings =
        managed_file::desired_settings(params.ipv6, &params.interfaces, &params.rp_filter);
    let after_file = match params.state {
        State::Present => {
            boot::check_read_at_boot("path", &params.path).map_err(Failure::new)?;
            Some(managed_file::render(&settings))
        }
        State::Absent => None,
    };
    let boot = boot_settings(ctx, params, &settings, after_file.as_deref())?;
    let targets = match params.state {
        State::Present => runtime_targets(params, &settings)?,
        State::Absent => Vec::new(),
    };
    Ok(Plan {
        after_file,
        boot,
        targets,
    })
}

/// The boot-time winner of every managed key, after this run's file change. A different value
/// winning at boot fails the task (or warns, with boot_conflict=warn) before anything changes.
fn boot_settings(
    ctx: &mut Context,
    params: &Params,
    settings: &[Setting],
    after_file: Option<&str>,
) -> Result<BTreeMap<String, BootSetting>, Failure> {
    if params.state == State::Absent {
        return Ok(BTreeMap::new());
    }
    let (files, unread) = boot::config_files(
        &params.sysctl_dirs,
        (&params.path, after_file),
        params.follow_untrusted_links,
    );
    for problem in unread {
        ctx.warn(format!(
            "{problem}; it was left out of the boot check, whose answer may be incomplete"
        ));
    }
    let mut report = BTreeMap::new();
    let mut conflicts = Vec::new();
    for setting in settings {
        let winner = boot::setting_of(&files, &setting.key);
        if winner.value.as_deref() != Some(setting.value.as_str()) {
            conflicts.push(match (&winner.file, &winner.value) {
                (None, _) => format!(
                    "{} is set by no file that systemd-sysctl reads (is path={} inside sysctl_dirs?)",
                    setting.key,
                    params.path.display()
                ),
                (Some(file), Some(value)) => format!(
                    "{} = {value} from {}:{} wins at boot over {} from {}",
                    setting.key,
                    file.display(),
                    winner.line.unwrap_or(0),
                    setting.value,
                    params.path.display()
                ),
                (Some(file), None) => format!(
                    "{} is excluded at {}:{}, so {} never applies it at boot",
                    setting.key,
                    file.display(),
                    winner.line.unwrap_or(0),
                    params.path.display()
                ),
            });
        }
        report.insert(setting.key.to_string(), winner);
    }
    if conflicts.is_empty() {
        return Ok(report);
    }
    let message = format!(
        "at boot another file would undo this module: {}. Remove or change that file, give path a name that sorts after it, or set boot_conflict=warn",
        conflicts.join("; ")
    );
    match params.boot_conflict {
        BootConflict::Warn => {
            ctx.warn(message);
            Ok(report)
        }
        BootConflict::Fail => Err(Failure::new(message).with("boot", &report)),
    }
}

/// Every runtime key this run manages, with its current value. A missing interface fails here,
/// before anything changes.
fn runtime_targets(params: &Params, settings: &[Setting]) -> Result<Vec<RuntimeTarget>, Failure> {
    // The parameter that named a per-interface key, for the message when it is missing.
    let keys: Vec<(SysctlKey, String, &str)> = settings
        .iter()
        .map(|s| {
            let leaf = s.key.components().last().cloned().unwrap_or_default();
            let parameter = if leaf == "forwarding" {
                "interfaces"
            } else {
                "rp_filter"
            };
            (s.key.clone(), s.value.clone(), parameter)
        })
        .collect();
    let mut targets = Vec::with_capacity(keys.len());
    for (key, desired, parameter) in keys {
        let before = key.read()?;
        if before.is_none() && params.apply {
            let interface = &key.components()[3];
            let why = if managed_file::is_global_conf(interface) {
                format!("{key} does not exist on this kernel (is IPv6 disabled?); set ipv6=false or apply=false")
            } else {
                format!(
                    "{parameter}: interface '{interface}' does not exist on this node (no {}); create it first, fix the name, or remove it",
                    key.proc_path().parent().map(|p| p.display().to_string()).unwrap_or_default()
                )
            };
            return Err(Failure::new(why));
        }
        let apply = params.apply && before.as_deref() != Some(desired.as_str());
        targets.push(RuntimeTarget {
            key,
            desired,
            before,
            apply,
        });
    }
    Ok(targets)
}

/// `runtime`: each managed key before and after; with ipv6=false, IPv6 forwarding as observed.
pub fn runtime_report(
    ctx: &mut Context,
    params: &Params,
    targets: &[RuntimeTarget],
) -> Result<BTreeMap<String, BeforeAfter>, Failure> {
    let mut report = BTreeMap::new();
    for target in targets {
        let after = if ctx.check_mode {
            if targets.iter().any(|a| a.apply && a.key == target.key) {
                Some(target.desired.clone())
            } else {
                target.before.clone()
            }
        } else {
            target.key.read()?
        };
        report.insert(
            target.key.to_string(),
            BeforeAfter {
                before: target.before.clone(),
                after,
            },
        );
    }
    if !params.ipv6 {
        let key = SysctlKey::ipv6_conf("all", "forwarding");
        let value = key.read()?;
        if value.as_deref() == Some("1") {
            ctx.warn(format!(
                "IPv6 forwarding is on ({key} = 1) though {switch} is off: IPv6 is routed with no policy from this module; set {switch}=true to manage it, or turn it off",
                switch = params.ipv6_switch_name
            ));
        }
        report.insert(
            key.to_string(),
            BeforeAfter {
                before: value.clone(),
                after: value,
            },
        );
    }
    if let Some(all) = params.rp_filter.get("all") {
        for (name, mode) in &params.rp_filter {
            if !managed_file::is_global_conf(name) && mode < all {
                ctx.warn(format!(
                    "rp_filter: {name}={mode} has no effect while all={all}: the kernel applies the larger of the two; lower rp_filter.all as well"
                ));
            }
        }
    }
    Ok(report)
}

/// `interfaces`: each listed interface's IPv4 forwarding before and after.
pub fn interfaces_report(
    params: &Params,
    runtime: &BTreeMap<String, BeforeAfter>,
) -> BTreeMap<String, BeforeAfter> {
    params
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
pub fn summary(params: &Params, file_changed: bool, applied: usize, check_mode: bool) -> String {
    let would = if check_mode { "would be " } else { "" };
    let file = match (file_changed, params.state) {
        (false, _) => format!("{} unchanged", params.path.display()),
        (true, State::Present) => format!("{} {would}written", params.path.display()),
        (true, State::Absent) => format!("{} {would}removed", params.path.display()),
    };
    format!("{file}; {applied} runtime value(s) {would}set")
}
