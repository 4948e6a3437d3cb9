//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and,
//! each checked on its own, the validated [`Request`] ([`Request::from_params`]).

use crate::vlan_set::{self, VlanSet};
use crate::{MIN_MTU, TAG_LEN};
use deevnet_runtime::ifname;
use deevnet_runtime::spec::DefaultValue;
use deevnet_runtime::{Kind, OptionSpec};
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

static INTERFACE_NAME: OptionSpec = OptionSpec::new("interface", Kind::Str);
static VLAN_RANGE: OptionSpec = OptionSpec::new("vlans", Kind::Str);
static PEER_OPTIONS: [OptionSpec; 2] = [
    OptionSpec::new("mac", Kind::Str).required(),
    OptionSpec::new("vlan", Kind::Int).required(),
];
static PEER: OptionSpec = OptionSpec::new("peer", Kind::Dict(&PEER_OPTIONS));

/// Every option of the module, in the order `--argument-spec` prints them; serde builds
/// [`Params`] from the validated arguments.
pub static SPEC: [OptionSpec; 11] = [
    // `parent` reads right for a single-NIC uplink (`parent: eno1`).
    OptionSpec::new("bond", Kind::Str)
        .required()
        .aliases(&["parent"]),
    OptionSpec::new("uplink_vlan", Kind::Int).required(),
    OptionSpec::new("bridge", Kind::Str).required(),
    OptionSpec::new("vlans", Kind::List(&VLAN_RANGE)).required(),
    OptionSpec::new("zone_mtu", Kind::Int),
    OptionSpec::new("trunk_interfaces", Kind::List(&INTERFACE_NAME))
        .default(DefaultValue::EmptyList),
    OptionSpec::new("peers", Kind::List(&PEER)).default(DefaultValue::EmptyList),
    OptionSpec::new("fix_txvlan", Kind::Bool).default(DefaultValue::Bool(false)),
    OptionSpec::new("interfaces_file", Kind::Path)
        .default(DefaultValue::Str(DEFAULT_INTERFACES_FILE)),
    OptionSpec::new("guest_ports", Kind::Str)
        .choices(GuestPortsPolicy::CHOICES)
        .default(DefaultValue::Str("fail")),
    OptionSpec::new("guest_vlan_guard", Kind::Bool).default(DefaultValue::Bool(false)),
];

/// Where ifupdown2 (Proxmox VE's network configuration) keeps the bond's configured slaves.
pub const DEFAULT_INTERFACES_FILE: &str = "/etc/network/interfaces";

/// A far host whose MAC must be learned through the uplink in its own inner VLAN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub mac: String,
    pub vlan: u16,
}

/// The validated options.
#[derive(Debug, Clone)]
pub struct Request {
    pub bond: String,
    pub uplink_vlan: u16,
    pub bridge: String,
    pub vlans: VlanSet,
    pub zone_mtu: Option<u32>,
    pub trunk_interfaces: Vec<String>,
    pub peers: Vec<Peer>,
    pub fix_txvlan: bool,
    pub interfaces_file: PathBuf,
    pub guest_ports: GuestPortsPolicy,
    pub guest_vlan_guard: bool,
}

/// The options as the argument spec validated them (types and defaults), before the checks
/// types cannot make.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Params {
    pub bond: String,
    pub uplink_vlan: i64,
    pub bridge: String,
    pub vlans: Vec<String>,
    pub zone_mtu: Option<i64>,
    pub trunk_interfaces: Vec<String>,
    /// (mac, vlan) of each `peers` entry.
    #[serde(deserialize_with = "mac_vlan_pairs")]
    pub peers: Vec<(String, i64)>,
    pub fix_txvlan: bool,
    pub interfaces_file: PathBuf,
    pub guest_ports: GuestPortsPolicy,
    pub guest_vlan_guard: bool,
}

deevnet_runtime::choices! {
    /// `guest_ports`: what an exposed guest port does to the run.
    pub enum GuestPortsPolicy { Fail = "fail", Warn = "warn", Ignore = "ignore" }
}

impl Default for GuestPortsPolicy {
    /// A guest that can tag onto the uplink breaks tenant isolation: the run fails unless told.
    fn default() -> Self {
        GuestPortsPolicy::Fail
    }
}

/// `peers` entries (`{mac, vlan}`) as (mac, vlan) pairs.
fn mac_vlan_pairs<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, i64)>, D::Error> {
    #[derive(Deserialize)]
    struct PeerEntry {
        mac: String,
        vlan: i64,
    }
    let entries = Vec::<PeerEntry>::deserialize(deserializer)?;
    Ok(entries.into_iter().map(|p| (p.mac, p.vlan)).collect())
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        ifname::validate("bond", &params.bond)?;
        ifname::validate("bridge", &params.bridge)?;
        for name in &params.trunk_interfaces {
            ifname::validate("trunk_interfaces", name)?;
        }
        let uplink_vlan = vlan_id("uplink_vlan", params.uplink_vlan)?;
        let vlans = VlanSet::parse("vlans", &params.vlans)?;
        // The outer VLAN among the inner ones is legal (the tags live on different layers),
        // but a zone of nothing but the outer VLAN is a slip.
        if vlans.len() == 1 && vlans.contains(uplink_vlan) {
            return Err(format!(
                "vlans: {vlans} is the outer VLAN (uplink_vlan={uplink_vlan}) itself; give the zone's inner VLANs, e.g. \"199-299\""
            ));
        }
        let zone_mtu = match params.zone_mtu {
            None => None,
            Some(mtu) if (i64::from(MIN_MTU)..=65535 - i64::from(TAG_LEN)).contains(&mtu) => {
                Some(mtu as u32)
            }
            Some(mtu) => {
                return Err(format!(
                    "zone_mtu: {mtu} is outside {MIN_MTU}-{}; give the MTU the zone's guests use, e.g. 8996 on a 9000-byte uplink",
                    65535 - TAG_LEN
                ))
            }
        };
        let mut peers = Vec::with_capacity(params.peers.len());
        for (i, (mac, vlan)) in params.peers.iter().enumerate() {
            peers.push(Peer {
                mac: normalise_mac(&format!("peers[{i}].mac"), mac)?,
                vlan: vlan_id(&format!("peers[{i}].vlan"), *vlan)?,
            });
        }
        Ok(Request {
            bond: params.bond,
            uplink_vlan,
            bridge: params.bridge,
            vlans,
            zone_mtu,
            trunk_interfaces: params.trunk_interfaces,
            peers,
            fix_txvlan: params.fix_txvlan,
            interfaces_file: params.interfaces_file,
            guest_ports: params.guest_ports,
            guest_vlan_guard: params.guest_vlan_guard,
        })
    }
}

fn vlan_id(parameter: &str, value: i64) -> Result<u16, String> {
    if (i64::from(vlan_set::MIN_VID)..=i64::from(vlan_set::MAX_VID)).contains(&value) {
        Ok(value as u16)
    } else {
        Err(format!(
            "{parameter}: VLAN {value} is outside 1-4094 (0 and 4095 are reserved); give a VLAN id from 1 to 4094"
        ))
    }
}

/// `aa:bb:cc:dd:ee:ff` in lower case, from any case and `-` or `:` separators.
fn normalise_mac(parameter: &str, text: &str) -> Result<String, String> {
    let octets: Vec<&str> = text.split([':', '-']).collect();
    let valid = octets.len() == 6
        && octets
            .iter()
            .all(|o| o.len() == 2 && o.chars().all(|c| c.is_ascii_hexdigit()));
    if !valid {
        return Err(format!(
            "{parameter}: '{text}' is not a MAC address; write it as 02:00:00:00:02:01"
        ));
    }
    Ok(octets.join(":").to_ascii_lowercase())
}
