//! The module's options, declared once: [`SPEC`] (what the runtime validates and
//! `--argument-spec` prints; the documentation and the fuzz targets are held to it), the
//! typed [`Params`] serde builds from the validated arguments, and the [`Request`] they make
//! once checked: everything that can be refused without reading a file is refused here.

use crate::ownership;
use crate::stanza::{self, Checks, Mode, Stanza, State};
use crate::validate::Validator;
use deevnet_runtime::file_policy::{self, FOLLOW_UNTRUSTED_LINKS};
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{Failure, Kind, OptionSpec};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

static LINE: OptionSpec = OptionSpec::new("element", Kind::Str);
static STATE: OptionSpec = OptionSpec::new("state", Kind::Str)
    .choices(State::CHOICES)
    .default(DefaultValue::Str("present"));
static MODE: OptionSpec = OptionSpec::new("mode", Kind::Str)
    .choices(Mode::CHOICES)
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

/// Every option of the module, in the order `--argument-spec` prints them.
pub static SPEC: [OptionSpec; 10] = [
    OptionSpec::new("path", Kind::Path).default(DefaultValue::Str("/etc/frr/frr.conf.local")),
    OptionSpec::new("stanzas", Kind::List(&STANZA)),
    OptionSpec::new("lint", Kind::Str)
        .choices(LintLevel::CHOICES)
        .default(DefaultValue::Str("error")),
    OptionSpec::new("asn", Kind::Int),
    OptionSpec::new("validate", Kind::Str),
    // Who owns the stanzas of this call (see crate::ownership), and where that is recorded.
    OptionSpec::new("owner", Kind::Str),
    OptionSpec::new("owner_record", Kind::Path)
        .default(DefaultValue::Str(ownership::DEFAULT_RECORD)),
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

deevnet_runtime::choices! {
/// `lint`: how findings count.
pub enum LintLevel {
    Error = "error",
    Warn = "warn",
    Off = "off",
}
}

/// The task, checked.
pub struct Request {
    pub path: PathBuf,
    /// Checked and normalised, as declared (before an owner's take-back).
    pub stanzas: Vec<Stanza>,
    pub lint: LintLevel,
    /// The ASN of the router Proxmox generates, when given.
    pub asn: Option<String>,
    pub validator: Option<Validator>,
    pub owner: Option<Owner>,
    pub backup: bool,
    pub lock_timeout: Duration,
    pub follow_untrusted_links: bool,
}

/// `owner` and where its claims are recorded (`owner_record`).
pub struct Owner {
    pub name: String,
    pub record: PathBuf,
}

impl Request {
    /// Checks the options: every refusal names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, Failure> {
        let asn = check_asn(params.asn)?;
        let lock_timeout = file_policy::lock_timeout(params.lock_timeout)?;
        let stanzas = stanza::check(
            params.stanzas.as_deref().unwrap_or_default(),
            Checks {
                refuse_unrecognised_headers: params.lint == LintLevel::Error,
                asn: asn.as_deref(),
            },
        )?;
        let validator = params
            .validate
            .as_deref()
            .map(Validator::parse)
            .transpose()?;
        let owner = match params.owner {
            Some(name) => {
                check_owner(&name)?;
                ownership::check_owned(&stanzas)?;
                Some(Owner {
                    name,
                    record: params.owner_record,
                })
            }
            None => None,
        };
        Ok(Request {
            path: params.path,
            stanzas,
            lint: params.lint,
            asn,
            validator,
            owner,
            backup: params.backup,
            lock_timeout,
            follow_untrusted_links: params.follow_untrusted_links,
        })
    }
}

/// `asn`: a BGP AS number, as the text headers hold it.
fn check_asn(asn: Option<i64>) -> Result<Option<String>, String> {
    match asn {
        None => Ok(None),
        Some(asn @ 1..=4_294_967_295) => Ok(Some(asn.to_string())),
        Some(other) => Err(format!(
            "asn={other} is not a BGP AS number; give the ASN of the router Proxmox generates (1 to 4294967295), e.g. the EVPN controller's"
        )),
    }
}

/// `owner`: a name, one line of text (it keys the record).
fn check_owner(owner: &str) -> Result<(), String> {
    if owner.trim().is_empty() || owner.chars().any(char::is_control) {
        return Err(format!(
            "owner={owner:?} is not a name; give one line of text that names who writes these stanzas, such as deevnet.net.proxmox_node_network"
        ));
    }
    Ok(())
}
