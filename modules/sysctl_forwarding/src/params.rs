//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the validated [`Request`] they make once each is checked on its own
//! ([`Request::from_params`], before any file or `/proc/sys` value is read).

use crate::boot::DEFAULT_SEARCH_DIRS;
use crate::managed_file;
use deevnet_runtime::file_policy;
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{choices, Kind, OptionSpec};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

static INTERFACE_NAME: OptionSpec = OptionSpec::new("interface", Kind::Str);
static SEARCH_DIR: OptionSpec = OptionSpec::new("folder", Kind::Path);
static RP_FILTER_MODE: OptionSpec = OptionSpec::new("mode", Kind::Int).choices(&["0", "1", "2"]);

/// Every option of the module, in the order `--argument-spec` prints them; serde builds
/// [`Params`] from the validated arguments.
pub static SPEC: [OptionSpec; 13] = [
    OptionSpec::new("path", Kind::Path).default(DefaultValue::Str(
        "/etc/sysctl.d/90-deevnet-tenant-fabric.conf",
    )),
    OptionSpec::new("state", Kind::Str)
        .choices(State::CHOICES)
        .default(DefaultValue::Str("present")),
    OptionSpec::new("ipv6", Kind::Bool).default(DefaultValue::Bool(false)),
    // What the IPv6 warning tells the operator to set: a role passes its own variable's name.
    OptionSpec::new("ipv6_switch_name", Kind::Str).default(DefaultValue::Str("ipv6")),
    OptionSpec::new("interfaces", Kind::List(&INTERFACE_NAME))
        .default(DefaultValue::EmptyList)
        .aliases(&["interface"]),
    OptionSpec::new("rp_filter", Kind::Map(&RP_FILTER_MODE)).default(DefaultValue::EmptyMap),
    OptionSpec::new("src_valid_mark", Kind::List(&INTERFACE_NAME)).default(DefaultValue::EmptyList),
    OptionSpec::new("apply", Kind::Bool).default(DefaultValue::Bool(true)),
    file_policy::BACKUP,
    OptionSpec::new("boot_conflict", Kind::Str)
        .choices(BootConflict::CHOICES)
        .default(DefaultValue::Str("fail")),
    OptionSpec::new("sysctl_dirs", Kind::List(&SEARCH_DIR))
        .default(DefaultValue::StrList(DEFAULT_SEARCH_DIRS)),
    file_policy::LOCK_TIMEOUT,
    file_policy::FOLLOW_UNTRUSTED_LINKS,
];

choices! {
    /// `state`: the file written and the values applied, or the file removed.
    pub enum State { Present = "present", Absent = "absent" }
}

choices! {
    /// `boot_conflict`: what a different value winning at boot does: fail the task, or warn.
    pub enum BootConflict { Fail = "fail", Warn = "warn" }
}

/// The module's parameters, as the argument spec validated them.
#[derive(Deserialize)]
pub struct Params {
    #[serde(flatten)]
    pub options: Options,
    pub lock_timeout: i64,
}

/// Every option but `lock_timeout`, whose type validation does not change.
#[derive(Deserialize)]
pub struct Options {
    pub path: PathBuf,
    pub state: State,
    pub ipv6: bool,
    pub ipv6_switch_name: String,
    pub interfaces: Vec<String>,
    pub rp_filter: BTreeMap<String, u8>,
    /// Interfaces (or `all`, `default`) whose reverse-path lookup carries the packet's mark.
    pub src_valid_mark: Vec<String>,
    pub apply: bool,
    pub backup: bool,
    pub boot_conflict: BootConflict,
    pub sysctl_dirs: Vec<PathBuf>,
    pub follow_untrusted_links: bool,
}

/// The validated options: interface names safe in `/proc/sys` paths and sysctl.d lines, the
/// lock timeout in range.
pub struct Request {
    pub options: Options,
    pub lock_timeout: Duration,
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    /// Interface names reach `/proc/sys` paths: they are checked by the kernel's rules first.
    pub fn from_params(params: Params) -> Result<Request, String> {
        let options = params.options;
        for name in &options.interfaces {
            managed_file::check_interface_name("interfaces", name)?;
        }
        for name in options.rp_filter.keys() {
            managed_file::check_interface_name("rp_filter", name)?;
        }
        for name in &options.src_valid_mark {
            managed_file::check_interface_name("src_valid_mark", name)?;
        }
        let lock_timeout = file_policy::lock_timeout(params.lock_timeout)?;
        Ok(Request {
            options,
            lock_timeout,
        })
    }
}
