//! The module's options, declared once: [`SPEC`] (what the runtime validates and
//! `--argument-spec` prints; the documentation and the fuzz targets are held to it) and the
//! typed [`Params`] serde builds from the validated arguments.

use crate::stanza::Stanza;
use deevnet_runtime::file_policy::{self, FOLLOW_UNTRUSTED_LINKS};
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{Kind, OptionSpec};
use serde::Deserialize;
use std::path::PathBuf;

static LINE: OptionSpec = OptionSpec::new("element", Kind::Str);
static STATE: OptionSpec = OptionSpec::new("state", Kind::Str)
    .choices(&["present", "absent"])
    .default(DefaultValue::Str("present"));
static MODE: OptionSpec = OptionSpec::new("mode", Kind::Str)
    .choices(&["exact", "merge"])
    .default(DefaultValue::Str("exact"));
static STANZA: OptionSpec = OptionSpec::new("element", Kind::Dict(&STANZA_OPTIONS));
static STANZA_OPTIONS: [OptionSpec; 5] = [
    // `vrf vrf_tdemo`, `router bgp 45689`, `ip prefix-list L seq 5 deny 0.0.0.0/0`.
    OptionSpec::new("header", Kind::Str).required(),
    OptionSpec::new("lines", Kind::List(&LINE)).default(DefaultValue::EmptyList),
    // The address-families of a `router bgp`; Proxmox's merge nests no deeper, so a child
    // has the same options but no children of its own.
    OptionSpec::new("children", Kind::List(&CHILD)).default(DefaultValue::EmptyList),
    STATE,
    MODE,
];
static CHILD: OptionSpec = OptionSpec::new("element", Kind::Dict(&CHILD_OPTIONS));
static CHILD_OPTIONS: [OptionSpec; 4] = [
    OptionSpec::new("header", Kind::Str).required(),
    OptionSpec::new("lines", Kind::List(&LINE)).default(DefaultValue::EmptyList),
    STATE,
    MODE,
];
/// Where owners' records live unless `owner_record` says otherwise: outside `/etc/frr`, whose
/// files Proxmox's merge reads.
pub const OWNER_RECORD: &str = "/var/lib/deevnet.net/frr-local-owners.json";

/// Every option of the module, in the order `--argument-spec` prints them.
pub static SPEC: [OptionSpec; 10] = [
    OptionSpec::new("path", Kind::Path).default(DefaultValue::Str("/etc/frr/frr.conf.local")),
    OptionSpec::new("stanzas", Kind::List(&STANZA)),
    OptionSpec::new("lint", Kind::Str)
        .choices(&["error", "warn", "off"])
        .default(DefaultValue::Str("error")),
    OptionSpec::new("asn", Kind::Int),
    OptionSpec::new("validate", Kind::Str),
    // Who owns the stanzas of this call (see crate::ownership), and where that is recorded.
    OptionSpec::new("owner", Kind::Str),
    OptionSpec::new("owner_record", Kind::Path).default(DefaultValue::Str(OWNER_RECORD)),
    file_policy::BACKUP,
    file_policy::LOCK_TIMEOUT,
    FOLLOW_UNTRUSTED_LINKS,
];

/// The options as serde builds them from the validated arguments.
#[derive(Deserialize)]
pub struct Params {
    pub path: PathBuf,
    pub stanzas: Option<Vec<Stanza>>,
    pub lint: LintLevel,
    pub asn: Option<i64>,
    pub validate: Option<String>,
    pub owner: Option<String>,
    pub owner_record: PathBuf,
    pub backup: bool,
    pub lock_timeout: i64,
    pub follow_untrusted_links: bool,
}

/// `lint`: how findings count.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
pub enum LintLevel {
    Error,
    Warn,
    Off,
}
