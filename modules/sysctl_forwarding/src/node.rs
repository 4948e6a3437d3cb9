//! The node's side of one run: the sysctl.d files and `/proc/sys` values read to make the
//! [`Plan`] (the file's desired text, the boot-time winner of every managed key, the runtime
//! values to set), and the runtime values read back for the result. `main.rs` writes.

use crate::boot::{self, BootSetting};
use crate::managed_file::{self, Setting};
use crate::params::{BootConflict, Options, State};
use crate::report::BeforeAfter;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::{Context, Failure};
use std::collections::BTreeMap;

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

/// The desired file, its boot-time precedence and the runtime values to set. Fails on a boot
/// conflict (unless boot_conflict=warn) or a missing interface, before anything changes.
pub fn plan(ctx: &mut Context, options: &Options) -> Result<Plan, Failure> {
    let settings = managed_file::desired_settings(
        options.ipv6,
        &options.interfaces,
        &options.rp_filter,
        &options.src_valid_mark,
    );
    let after_file = match options.state {
        State::Present => {
            boot::check_read_at_boot("path", &options.path)?;
            Some(managed_file::render(&settings))
        }
        State::Absent => None,
    };
    let boot = boot_settings(ctx, options, &settings, after_file.as_deref())?;
    let targets = match options.state {
        State::Present => runtime_targets(options, &settings)?,
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
    options: &Options,
    settings: &[Setting],
    after_file: Option<&str>,
) -> Result<BTreeMap<String, BootSetting>, Failure> {
    if options.state == State::Absent {
        return Ok(BTreeMap::new());
    }
    let (files, unread) = boot::config_files(
        &options.sysctl_dirs,
        (&options.path, after_file),
        options.follow_untrusted_links,
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
                    options.path.display()
                ),
                (Some(file), Some(value)) => format!(
                    "{} = {value} from {}:{} wins at boot over {} from {}",
                    setting.key,
                    file.display(),
                    winner.line.unwrap_or(0),
                    setting.value,
                    options.path.display()
                ),
                (Some(file), None) => format!(
                    "{} is excluded at {}:{}, so {} never applies it at boot",
                    setting.key,
                    file.display(),
                    winner.line.unwrap_or(0),
                    options.path.display()
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
    match options.boot_conflict {
        BootConflict::Warn => {
            ctx.warn(message);
            Ok(report)
        }
        BootConflict::Fail => Err(Failure::new(message).with("boot", &report)),
    }
}

/// Every runtime key this run manages, with its current value. A missing interface fails here,
/// before anything changes.
fn runtime_targets(options: &Options, settings: &[Setting]) -> Result<Vec<RuntimeTarget>, Failure> {
    // The parameter that named a per-interface key, for the message when it is missing.
    let keys: Vec<(SysctlKey, String, &str)> = settings
        .iter()
        .map(|s| {
            let leaf = s.key.components().last().cloned().unwrap_or_default();
            let parameter = match leaf.as_str() {
                "forwarding" => "interfaces",
                managed_file::SRC_VALID_MARK => "src_valid_mark",
                _ => "rp_filter",
            };
            (s.key.clone(), s.value.clone(), parameter)
        })
        .collect();
    let mut targets = Vec::with_capacity(keys.len());
    for (key, desired, parameter) in keys {
        let before = key.read()?;
        if before.is_none() && options.apply {
            let interface = &key.components()[3];
            let why = if managed_file::is_global_conf(interface) {
                format!("{key} does not exist on this kernel (is IPv6 disabled?); set ipv6=false or apply=false")
            } else {
                format!(
                    "{parameter}: interface '{interface}' does not exist on this node (no {}); create it first, fix the name, or remove it",
                    key.proc_path().parent().map(|p| p.display().to_string()).unwrap_or_default()
                )
            };
            return Err(why.into());
        }
        let apply = options.apply && before.as_deref() != Some(desired.as_str());
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
    options: &Options,
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
    if !options.ipv6 {
        let key = SysctlKey::ipv6_conf("all", "forwarding");
        let value = key.read()?;
        if value.as_deref() == Some("1") {
            ctx.warn(format!(
                "IPv6 forwarding is on ({key} = 1) though {switch} is off: IPv6 is routed with no policy from this module; set {switch}=true to manage it, or turn it off",
                switch = options.ipv6_switch_name
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
    if let Some(all) = options.rp_filter.get("all") {
        for (name, mode) in &options.rp_filter {
            if !managed_file::is_global_conf(name) && mode < all {
                ctx.warn(format!(
                    "rp_filter: {name}={mode} has no effect while all={all}: the kernel applies the larger of the two; lower rp_filter.all as well"
                ));
            }
        }
    }
    Ok(report)
}
