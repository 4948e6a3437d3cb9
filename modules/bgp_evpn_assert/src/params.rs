//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]),
//! and the validated [`Request`] ([`Request::from_params`], pure: nothing is run before it
//! passes). Every error names the parameter's location, the value and the fix.

use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{
    choices, CheckModeFindings, Findings, Kind, OptionSpec, CHECK_MODE_FINDINGS, FINDINGS,
};
use serde::Deserialize;
use std::collections::HashSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Where Debian's and Proxmox's FRR package installs vtysh.
pub const DEFAULT_VTYSH: &str = "/usr/bin/vtysh";
/// The VRF of `router bgp <AS>` without `vrf`.
pub const DEFAULT_VRF: &str = "default";
/// Enough for a full table of a core peer's routes in JSON.
pub const DEFAULT_MAX_OUTPUT_BYTES: i64 = 16 * 1024 * 1024;

pub const TIMEOUT_RANGE: IntRange = IntRange::new(1, 600, "a number of seconds");
pub const SETTLE_TIMEOUT_RANGE: IntRange =
    IntRange::new(0, 600, "a number of seconds").because("0: check once");
pub const MAX_OUTPUT_RANGE: IntRange = IntRange::new(4096, 1 << 30, "a number of bytes")
    .because("4 KiB to 1 GiB: one vtysh run's output");
/// AS numbers are 4 octets (RFC 6793); 0 is reserved (RFC 7607).
pub const REMOTE_AS_RANGE: IntRange = IntRange::new(1, 4_294_967_295, "an AS number");
/// A VNI is 24 bits; 0 is not used by EVPN.
pub const VNI_RANGE: IntRange = IntRange::new(1, 16_777_215, "a VNI");

choices! {
    /// An address family as FRR negotiates it with a neighbor.
    pub enum AddressFamily {
        Ipv4Unicast = "ipv4_unicast",
        Ipv6Unicast = "ipv6_unicast",
        L2vpnEvpn = "l2vpn_evpn",
    }
}

choices! {
    /// A family whose default route must be received.
    pub enum DefaultFamily { Ipv4 = "ipv4", Ipv6 = "ipv6" }
}

choices! {
    /// `advertises`: what the node may advertise to the peer.
    pub enum Advertises { AggregatesOnly = "aggregates_only", Any = "any" }
}

impl AddressFamily {
    /// The key FRR uses for it in JSON (`addressFamilyInfo`, `multiprotocolExtensions`).
    pub fn frr_json_key(self) -> &'static str {
        match self {
            AddressFamily::Ipv4Unicast => "ipv4Unicast",
            AddressFamily::Ipv6Unicast => "ipv6Unicast",
            AddressFamily::L2vpnEvpn => "l2VpnEvpn",
        }
    }

    /// Its words in FRR's configuration: `address-family ipv4 unicast`.
    pub fn frr_config(self) -> &'static str {
        match self {
            AddressFamily::Ipv4Unicast => "ipv4 unicast",
            AddressFamily::Ipv6Unicast => "ipv6 unicast",
            AddressFamily::L2vpnEvpn => "l2vpn evpn",
        }
    }

    pub const ALL: [AddressFamily; 3] = [
        AddressFamily::Ipv4Unicast,
        AddressFamily::Ipv6Unicast,
        AddressFamily::L2vpnEvpn,
    ];
}

impl DefaultFamily {
    pub fn unicast(self) -> AddressFamily {
        match self {
            DefaultFamily::Ipv4 => AddressFamily::Ipv4Unicast,
            DefaultFamily::Ipv6 => AddressFamily::Ipv6Unicast,
        }
    }

    /// The default route's prefix, as FRR keys it.
    pub fn default_prefix(self) -> &'static str {
        match self {
            DefaultFamily::Ipv4 => "0.0.0.0/0",
            DefaultFamily::Ipv6 => "::/0",
        }
    }

    pub const BOTH: [DefaultFamily; 2] = [DefaultFamily::Ipv4, DefaultFamily::Ipv6];
}

static ADDRESS_FAMILY: OptionSpec =
    OptionSpec::new("address_family", Kind::Str).choices(AddressFamily::CHOICES);
static DEFAULT_FAMILY: OptionSpec =
    OptionSpec::new("family", Kind::Str).choices(DefaultFamily::CHOICES);
static VTEP: OptionSpec = OptionSpec::new("vtep", Kind::Str);

static PEER_OPTIONS: [OptionSpec; 6] = [
    OptionSpec::new("peer", Kind::Str).required(),
    OptionSpec::new("vrf", Kind::Str).default(DefaultValue::Str(DEFAULT_VRF)),
    OptionSpec::new("remote_as", Kind::Int),
    OptionSpec::new("address_families", Kind::List(&ADDRESS_FAMILY))
        .default(DefaultValue::EmptyList),
    OptionSpec::new("receives_default", Kind::List(&DEFAULT_FAMILY))
        .default(DefaultValue::EmptyList),
    OptionSpec::new("advertises", Kind::Str)
        .choices(Advertises::CHOICES)
        .default(DefaultValue::Str("any")),
];
static PEER: OptionSpec = OptionSpec::new("peer", Kind::Dict(&PEER_OPTIONS));

static VNI_OPTIONS: [OptionSpec; 2] = [
    OptionSpec::new("vni", Kind::Int).required(),
    OptionSpec::new("remote_vteps", Kind::List(&VTEP)),
];
static VNI: OptionSpec = OptionSpec::new("vni", Kind::Dict(&VNI_OPTIONS));

/// Every option of the module, in the order `--argument-spec` prints them.
pub static SPEC: [OptionSpec; 9] = [
    OptionSpec::new("vtysh", Kind::Path).default(DefaultValue::Str(DEFAULT_VTYSH)),
    OptionSpec::new("timeout", Kind::Int).default(DefaultValue::Int(10)),
    OptionSpec::new("settle_timeout", Kind::Int).default(DefaultValue::Int(0)),
    OptionSpec::new("max_output_bytes", Kind::Int)
        .default(DefaultValue::Int(DEFAULT_MAX_OUTPUT_BYTES)),
    OptionSpec::new("fabric_ipv6_only", Kind::Bool).default(DefaultValue::Bool(false)),
    OptionSpec::new("peers", Kind::List(&PEER)).default(DefaultValue::EmptyList),
    OptionSpec::new("vnis", Kind::List(&VNI)).default(DefaultValue::EmptyList),
    FINDINGS,
    CHECK_MODE_FINDINGS,
];

/// The module's arguments, as the runtime validated and coerced them.
#[derive(Debug, Deserialize)]
pub struct Params {
    pub vtysh: PathBuf,
    pub timeout: i64,
    pub settle_timeout: i64,
    pub max_output_bytes: i64,
    pub fabric_ipv6_only: bool,
    pub peers: Vec<PeerParams>,
    pub vnis: Vec<VniParams>,
    pub findings: Findings,
    pub check_mode_findings: CheckModeFindings,
}

#[derive(Debug, Deserialize)]
pub struct PeerParams {
    pub peer: String,
    pub vrf: String,
    pub remote_as: Option<i64>,
    pub address_families: Vec<AddressFamily>,
    pub receives_default: Vec<DefaultFamily>,
    pub advertises: Advertises,
}

#[derive(Debug, Deserialize)]
pub struct VniParams {
    pub vni: i64,
    pub remote_vteps: Option<Vec<String>>,
}

/// Everything the task asks for, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub vtysh: PathBuf,
    pub timeout: Duration,
    pub settle_timeout: Duration,
    pub max_output_bytes: u64,
    pub fabric_ipv6_only: bool,
    pub peers: Vec<PeerExpectation>,
    pub vnis: Vec<VniExpectation>,
}

/// One `peers` entry: a neighbor or a peer group, in a VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerExpectation {
    /// `peers[0]`, for messages about the entry.
    pub location: String,
    pub peer: String,
    pub vrf: String,
    pub remote_as: Option<u32>,
    pub address_families: Vec<AddressFamily>,
    pub receives_default: Vec<DefaultFamily>,
    pub advertises: Advertises,
}

impl PeerExpectation {
    /// An entry for `peer` in the default VRF that only has to be Established.
    pub fn new(peer: &str) -> Self {
        PeerExpectation {
            location: "peers[0]".into(),
            peer: peer.into(),
            vrf: DEFAULT_VRF.into(),
            remote_as: None,
            address_families: Vec::new(),
            receives_default: Vec::new(),
            advertises: Advertises::Any,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VniExpectation {
    pub location: String,
    pub vni: u32,
    /// `None`: any remote VTEPs; otherwise exactly these (order free).
    pub remote_vteps: Option<Vec<IpAddr>>,
}

impl Request {
    /// Checks every option; the error names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        if !params.vtysh.is_absolute() {
            return Err(format!(
                "vtysh: '{}' is not an absolute path; give the full path of FRR's vtysh, e.g. {DEFAULT_VTYSH}",
                params.vtysh.display()
            ));
        }
        if params.peers.is_empty() && params.vnis.is_empty() {
            return Err("peers and vnis are both empty: there is nothing to assert; give at least one peer (peers: [{peer: NAME}]) or one VNI (vnis: [{vni: N}])".into());
        }
        let timeout = TIMEOUT_RANGE.seconds("timeout", params.timeout)?;
        let settle_timeout =
            SETTLE_TIMEOUT_RANGE.seconds("settle_timeout", params.settle_timeout)?;
        let max_output_bytes = MAX_OUTPUT_RANGE
            .check("max_output_bytes", params.max_output_bytes)?
            .unsigned_abs();
        let mut seen = HashSet::new();
        let peers = params
            .peers
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let peer = peer_expectation(format!("peers[{i}]"), p)?;
                if !seen.insert((peer.vrf.clone(), peer.peer.clone())) {
                    return Err(format!(
                        "{}.peer: '{}' in VRF {} is listed twice; list each peer once per VRF",
                        peer.location, peer.peer, peer.vrf
                    ));
                }
                Ok(peer)
            })
            .collect::<Result<Vec<_>, String>>()?;
        let mut seen = HashSet::new();
        let vnis = params
            .vnis
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let vni = vni_expectation(format!("vnis[{i}]"), v)?;
                if !seen.insert(vni.vni) {
                    return Err(format!(
                        "{}.vni: {} is listed twice; list each VNI once",
                        vni.location, vni.vni
                    ));
                }
                Ok(vni)
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Request {
            vtysh: params.vtysh,
            timeout,
            settle_timeout,
            max_output_bytes,
            fabric_ipv6_only: params.fabric_ipv6_only,
            peers,
            vnis,
        })
    }
}

fn peer_expectation(location: String, p: PeerParams) -> Result<PeerExpectation, String> {
    check_word(
        &format!("{location}.peer"),
        &p.peer,
        "an interface (swp1), an address (10.20.50.1, fe80::1) or a peer group (bgpv6)",
    )?;
    check_word(
        &format!("{location}.vrf"),
        &p.vrf,
        "a VRF name (vrf_tdemo) or default",
    )?;
    let remote_as = p
        .remote_as
        .map(|asn| REMOTE_AS_RANGE.check(&format!("{location}.remote_as"), asn))
        .transpose()?
        .map(|asn| asn as u32);
    Ok(PeerExpectation {
        location,
        peer: p.peer,
        vrf: p.vrf,
        remote_as,
        address_families: dedup(p.address_families),
        receives_default: dedup(p.receives_default),
        advertises: p.advertises,
    })
}

fn vni_expectation(location: String, v: VniParams) -> Result<VniExpectation, String> {
    let vni = VNI_RANGE.check(&format!("{location}.vni"), v.vni)? as u32;
    let remote_vteps = v
        .remote_vteps
        .map(|vteps| {
            let mut addresses = vteps
                .iter()
                .map(|vtep| {
                    vtep.parse::<IpAddr>().map(|a| a.to_canonical()).map_err(|_| {
                        format!(
                            "{location}.remote_vteps: '{vtep}' is not an IP address; give each remote VTEP's address, e.g. 10.20.51.21 or fd00:51::21"
                        )
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            addresses.sort();
            addresses.dedup();
            Ok::<_, String>(addresses)
        })
        .transpose()?;
    Ok(VniExpectation {
        location,
        vni,
        remote_vteps,
    })
}

/// A name that goes into a vtysh command line as one word: vtysh splits `-c` text on spaces,
/// so a space (or anything outside FRR's names) would add words to the command.
fn check_word(parameter: &str, value: &str, what: &str) -> Result<(), String> {
    let valid = !value.is_empty()
        && value.len() <= 64
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '%'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{parameter}: '{value}' is not a name FRR could show (letters, digits, '.', '_', '-', ':', at most 64); give {what}"
        ))
    }
}

fn dedup<T: PartialEq + Copy>(items: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}
