//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the validated [`Request`] ([`Request::from_params`]).

use deevnet_runtime::ifname;
use deevnet_runtime::nft::ranges::{self, Range};
use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{Kind, OptionSpec};
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;

static CIDR: OptionSpec = OptionSpec::new("cidr", Kind::Str);

/// The private ranges the role drops by default (RFC 1918, shared address space, link-local):
/// its defaults/main.yml, which a test holds this list to.
pub const DEFAULT_PRIVATE_RANGES: &[&str] = &[
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "169.254.0.0/16",
];

/// Every option of the module, in the order `--argument-spec` prints them; serde builds
/// [`Params`] from the validated arguments.
pub static SPEC: [OptionSpec; 15] = [
    OptionSpec::new("transit_interface", Kind::Str).required(),
    OptionSpec::new("transit_network", Kind::Str).required(),
    OptionSpec::new("uplink", Kind::Str).required(),
    OptionSpec::new("loadbalancer_ranges", Kind::List(&CIDR)).required(),
    OptionSpec::new("dns_servers", Kind::Raw).default(DefaultValue::Str(ANY)),
    OptionSpec::new("ntp_servers", Kind::Raw).default(DefaultValue::Str(ANY)),
    OptionSpec::new("vpc_ranges", Kind::List(&CIDR)).required(),
    OptionSpec::new("private_ranges", Kind::List(&CIDR)).required(),
    OptionSpec::new("table", Kind::Str).default(DefaultValue::Str("deevnet_transit")),
    OptionSpec::new("forward_priority", Kind::Int).default(DefaultValue::Int(-200)),
    OptionSpec::new("gate_mark", Kind::Int).default(DefaultValue::Int(0x0040_0000)),
    OptionSpec::new("gate_priority", Kind::Int).default(DefaultValue::Int(100)),
    OptionSpec::new("ruleset_path", Kind::Path).default(DefaultValue::Str(
        "/etc/nftables.d/deevnet-transit-router.nft",
    )),
    OptionSpec::new("unit_path", Kind::Path).default(DefaultValue::Str(
        "/etc/systemd/system/deevnet-transit-router.service",
    )),
    OptionSpec::new("nftables_conf_path", Kind::Path)
        .default(DefaultValue::Str("/etc/nftables.conf")),
];

/// `dns_servers` / `ntp_servers`: any destination.
pub const ANY: &str = "any";

/// The range of `gate_priority`: after rule 0 (`lookup local`), before 32766 (`lookup main`).
const GATE_PRIORITY_RANGE: IntRange = IntRange::new(1, 32765, "a rule priority");
/// nftables chain priorities are signed 32-bit.
const FORWARD_PRIORITY_RANGE: IntRange =
    IntRange::new(-2_147_483_648, 2_147_483_647, "a chain priority");

/// The options as the argument spec validated them, before the checks types cannot make.
#[derive(Debug, Clone, Deserialize)]
pub struct Params {
    pub transit_interface: String,
    pub transit_network: String,
    pub uplink: String,
    pub loadbalancer_ranges: Vec<String>,
    pub dns_servers: Value,
    pub ntp_servers: Value,
    pub vpc_ranges: Vec<String>,
    pub private_ranges: Vec<String>,
    pub table: String,
    pub forward_priority: i64,
    pub gate_mark: i64,
    pub gate_priority: i64,
    pub ruleset_path: PathBuf,
    pub unit_path: PathBuf,
    pub nftables_conf_path: PathBuf,
}

/// The validated options.
#[derive(Debug, Clone)]
pub struct Request {
    pub transit_interface: String,
    pub transit_network: Range,
    pub uplink: String,
    pub loadbalancer_ranges: Vec<Range>,
    /// `None`: any destination (`any`).
    pub dns_servers: Option<Vec<Range>>,
    pub ntp_servers: Option<Vec<Range>>,
    pub vpc_ranges: Vec<Range>,
    pub private_ranges: Vec<Range>,
    pub table: String,
    pub forward_priority: i64,
    pub gate_mark: u32,
    pub gate_priority: i64,
    pub ruleset_path: PathBuf,
    pub unit_path: PathBuf,
    pub nftables_conf_path: PathBuf,
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        ifname::validate("transit_interface", &params.transit_interface)?;
        ifname::validate("uplink", &params.uplink)?;
        if params.uplink == params.transit_interface {
            return Err(format!(
                "uplink: '{}' is the transit interface itself; give the interface toward the Internet, e.g. eth1",
                params.uplink
            ));
        }
        let cidr = Some(params.transit_network.trim()).filter(|t| t.contains('/'));
        let transit_network = cidr.and_then(Range::parse_cidr).ok_or_else(|| {
            format!(
                "transit_network: '{}' is not an IPv4 CIDR; write it as 198.51.100.0/24",
                params.transit_network
            )
        })?;
        let table = table_name(&params.table)?;
        let gate_mark = single_bit(params.gate_mark)?;
        GATE_PRIORITY_RANGE.check("gate_priority", params.gate_priority)?;
        FORWARD_PRIORITY_RANGE.check("forward_priority", params.forward_priority)?;
        Ok(Request {
            transit_interface: params.transit_interface,
            transit_network,
            uplink: params.uplink,
            loadbalancer_ranges: ranges::parse_list(
                "loadbalancer_ranges",
                &params.loadbalancer_ranges,
            )?,
            dns_servers: servers("dns_servers", &params.dns_servers)?,
            ntp_servers: servers("ntp_servers", &params.ntp_servers)?,
            vpc_ranges: ranges::parse_list("vpc_ranges", &params.vpc_ranges)?,
            private_ranges: ranges::parse_list("private_ranges", &params.private_ranges)?,
            table,
            forward_priority: params.forward_priority,
            gate_mark,
            gate_priority: params.gate_priority,
            ruleset_path: params.ruleset_path,
            unit_path: params.unit_path,
            nftables_conf_path: params.nftables_conf_path,
        })
    }
}

/// A table name nft takes unquoted: a letter, then letters, digits, `_`, `-`, `.`.
fn table_name(name: &str) -> Result<String, String> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && name.len() <= 255;
    if valid {
        Ok(name.to_string())
    } else {
        Err(format!(
            "table: '{name}' is not an nftables table name; give a letter followed by letters, digits or _, e.g. deevnet_transit"
        ))
    }
}

fn single_bit(mark: i64) -> Result<u32, String> {
    match u32::try_from(mark) {
        Ok(bit) if bit.is_power_of_two() => Ok(bit),
        _ => Err(format!(
            "gate_mark: {mark} is not a single bit of the 32-bit packet mark; give a power of two no other tool uses, e.g. 4194304 (0x400000)"
        )),
    }
}

/// `any`, or a list of CIDRs or addresses.
fn servers(parameter: &str, value: &Value) -> Result<Option<Vec<Range>>, String> {
    match value {
        Value::String(text) if text == ANY => Ok(None),
        Value::Array(items) => {
            let texts: Option<Vec<String>> = items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect();
            match texts {
                Some(texts) => ranges::parse_list(parameter, &texts).map(Some),
                None => Err(format!(
                    "{parameter}: {value} holds a value that is not a string; give a list of IPv4 addresses or CIDRs, or the string any"
                )),
            }
        }
        other => Err(format!(
            "{parameter}: {other} is neither the string any nor a list; give a list of IPv4 addresses or CIDRs, e.g. [192.0.2.53], or any"
        )),
    }
}
