//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]),
//! and the checks to run, the validated [`Request`] ([`Request::from_params`]): addresses
//! parsed, interface names checked, the short form (`vrf`, `dst`, … at the top level) turned
//! into one VRF entry. Every error names the parameter's location, the value and the fix.

use deevnet_runtime::ifname;
use deevnet_runtime::netlink::Family;
use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{choices, CheckModeFindings, Kind, OptionSpec, CHECK_MODE_FINDINGS};
use serde::Deserialize;
use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

/// The VRF name that means the default VRF: the main table, lookups made without a VRF.
pub const DEFAULT_VRF: &str = "default";

/// The range of `settle_timeout`.
pub const SETTLE_TIMEOUT_RANGE: IntRange =
    IntRange::new(0, 600, "a number of seconds").because("0: check once");

/// The keys of one lookup, declared once for a `lookups` entry and for the short form at the
/// top level: `dst` (required only in an entry: the short form may be `vrf` alone), the
/// packet's `src` and the `iif` it arrives by, then what the answer must be, then the workload
/// whose source NAT by the answer's device is predicted.
const fn lookup_keys(dst_required: bool) -> [OptionSpec; 9] {
    let dst = OptionSpec::new("dst", Kind::Str);
    [
        if dst_required { dst.required() } else { dst },
        OptionSpec::new("src", Kind::Str),
        OptionSpec::new("iif", Kind::Str),
        OptionSpec::new("via", Kind::Str),
        OptionSpec::new("dev", Kind::Str),
        OptionSpec::new("not_dev", Kind::Str),
        OptionSpec::new("table", Kind::Str),
        OptionSpec::new("reachable", Kind::Bool),
        OptionSpec::new("snat_src", Kind::Str),
    ]
}

static LOOKUP_OPTIONS: [OptionSpec; 9] = lookup_keys(true);
static LOOKUP: OptionSpec = OptionSpec::new("lookup", Kind::Dict(&LOOKUP_OPTIONS));
static INTERFACE: OptionSpec = OptionSpec::new("interface", Kind::Str);

/// `forwarding` has no default here: it is on for tenant VRFs and off for the default VRF,
/// where giving it is refused.
static VRF_OPTIONS: [OptionSpec; 11] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("default_via", Kind::Str),
    OptionSpec::new("default_dev", Kind::Str),
    OptionSpec::new("ipv6_default_via", Kind::Str),
    OptionSpec::new("ipv6_default_dev", Kind::Str),
    OptionSpec::new("lookups", Kind::List(&LOOKUP)).default(DefaultValue::EmptyList),
    OptionSpec::new("forwarding", Kind::Bool),
    OptionSpec::new("no_fall_through", Kind::Bool).default(DefaultValue::Bool(false)),
    OptionSpec::new("forbidden_interfaces", Kind::List(&INTERFACE))
        .default(DefaultValue::EmptyList),
    OptionSpec::new("asymmetric_returns", Kind::Bool).default(DefaultValue::Bool(false)),
    OptionSpec::new("l3vni_bridge", Kind::Str),
];
static VRF: OptionSpec = OptionSpec::new("vrf", Kind::Dict(&VRF_OPTIONS));

/// Every option of the module, in the order `--argument-spec` prints them: `vrfs`, or the
/// short form: `vrf` with the same keys at the top level; then what applies to the whole node.
/// The short form's `forwarding` and `no_fall_through` have no default here so that giving
/// them next to `vrfs` can be refused.
pub static SPEC: [OptionSpec; 18] = {
    let [dst, src, iif, via, dev, not_dev, table, reachable, snat_src] = lookup_keys(false);
    [
        OptionSpec::new("vrfs", Kind::List(&VRF)),
        OptionSpec::new("vrf", Kind::Str),
        dst,
        src,
        iif,
        via,
        dev,
        not_dev,
        table,
        reachable,
        snat_src,
        OptionSpec::new("default_via", Kind::Str),
        OptionSpec::new("default_dev", Kind::Str),
        OptionSpec::new("forwarding", Kind::Bool),
        OptionSpec::new("no_fall_through", Kind::Bool),
        OptionSpec::new("undeclared_vrfs", Kind::Str)
            .choices(UndeclaredVrfs::CHOICES)
            .default(DefaultValue::Str("ignore")),
        OptionSpec::new("settle_timeout", Kind::Int).default(DefaultValue::Int(0)),
        CHECK_MODE_FINDINGS,
    ]
};

/// The module's arguments, as the runtime validated and coerced them.
#[derive(Debug, Deserialize)]
pub struct Params {
    pub vrfs: Option<Vec<VrfParams>>,
    pub vrf: Option<String>,
    pub dst: Option<String>,
    pub src: Option<String>,
    pub iif: Option<String>,
    pub via: Option<String>,
    pub dev: Option<String>,
    pub not_dev: Option<String>,
    pub table: Option<String>,
    pub reachable: Option<bool>,
    pub snat_src: Option<String>,
    pub default_via: Option<String>,
    pub default_dev: Option<String>,
    pub forwarding: Option<bool>,
    pub no_fall_through: Option<bool>,
    pub undeclared_vrfs: UndeclaredVrfs,
    pub settle_timeout: i64,
    pub check_mode_findings: CheckModeFindings,
}

#[derive(Debug, Deserialize)]
pub struct VrfParams {
    pub name: String,
    pub default_via: Option<String>,
    pub default_dev: Option<String>,
    pub ipv6_default_via: Option<String>,
    pub ipv6_default_dev: Option<String>,
    pub lookups: Vec<LookupParams>,
    pub forwarding: Option<bool>,
    pub no_fall_through: bool,
    pub forbidden_interfaces: Vec<String>,
    pub asymmetric_returns: bool,
    pub l3vni_bridge: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct LookupParams {
    pub dst: String,
    pub src: Option<String>,
    pub iif: Option<String>,
    pub via: Option<String>,
    pub dev: Option<String>,
    pub not_dev: Option<String>,
    pub table: Option<String>,
    pub reachable: Option<bool>,
    pub snat_src: Option<String>,
}

/// Everything the task asks for: the validated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub vrfs: Vec<VrfCheck>,
    pub undeclared_vrfs: UndeclaredVrfs,
    /// How long to re-check before the findings stand (zero: check once).
    pub settle_timeout: Duration,
}

impl Request {
    /// These checks, once, with the VRFs nobody declared left alone.
    pub fn of(vrfs: Vec<VrfCheck>) -> Self {
        Request {
            vrfs,
            undeclared_vrfs: UndeclaredVrfs::Ignore,
            settle_timeout: Duration::ZERO,
        }
    }
}

choices! {
    /// `undeclared_vrfs`: what to do about a VRF of the node that `vrfs` does not list and
    /// whose lookups fall through.
    pub enum UndeclaredVrfs { Fail = "fail", Warn = "warn", Ignore = "ignore" }
}

/// What must hold in one VRF.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VrfCheck {
    pub name: String,
    /// Where the entry's options are (`vrfs[0]`; empty for the short form), for the messages
    /// about them.
    pub location: String,
    /// The usable default routes the VRF's table must have, at most one per family.
    pub defaults: Vec<DefaultExpectation>,
    pub lookups: Vec<LookupCheck>,
    /// Check that the interfaces the checked routes leave by forward.
    pub forwarding: bool,
    /// The VRF's table stops every lookup: a default route or a catch-all, per checked family.
    pub no_fall_through: bool,
    /// Interfaces whose connected prefixes the VRF's lookups must not reach through them.
    pub forbidden_interfaces: Vec<String>,
    /// The entry checks IPv6 (an IPv6 default, gateway or destination), so the family-wide
    /// checks (no_fall_through, forbidden_interfaces, the default VRF's default) cover IPv6.
    pub ipv6: bool,
    /// The interfaces the checked routes leave by accept returns that arrive there although
    /// the VRF routes them (rp_filter 0).
    pub asymmetric_returns: bool,
    /// With `asymmetric_returns`: the VRF's L3VNI bridge, where returns delivered to another
    /// node enter the VRF; it must be the VRF's port and accept them (rp_filter 0). Named, not
    /// guessed: a bridge in the VRF with a VXLAN port and no IPv4 address may also be an L2-only
    /// VNet, whose rp_filter never applies (bridged frames do not reach IP input).
    pub l3vni_bridge: Option<String>,
}

impl VrfCheck {
    /// A VRF that must exist, with nothing else to check but forwarding.
    pub fn new(name: &str) -> Self {
        VrfCheck {
            name: name.to_string(),
            location: String::new(),
            defaults: Vec::new(),
            lookups: Vec::new(),
            forwarding: true,
            no_fall_through: false,
            forbidden_interfaces: Vec::new(),
            ipv6: false,
            asymmetric_returns: false,
            l3vni_bridge: None,
        }
    }

    /// The default VRF: the main table, lookups without a VRF.
    pub fn is_default_vrf(&self) -> bool {
        self.name == DEFAULT_VRF
    }

    /// The families the family-wide checks cover.
    pub fn families(&self) -> Vec<Family> {
        if self.ipv6 {
            vec![Family::V4, Family::V6]
        } else {
            vec![Family::V4]
        }
    }
}

/// The VRF's own table has a usable default route of this family through these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultExpectation {
    pub family: Family,
    pub via: Option<IpAddr>,
    pub dev: Option<String>,
}

/// One destination resolved as the kernel does for traffic in the VRF, or, with `iif`, for a
/// packet arriving by that interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupCheck {
    pub dst: IpAddr,
    /// The packet's source (`from SRC`), of `dst`'s family.
    pub src: Option<IpAddr>,
    /// The interface the packet arrives by (`iif DEV`): the lookup is made on the input path,
    /// in the VRF of that interface, and never pinned to the VRF device. Always with `src`.
    pub iif: Option<String>,
    pub via: Option<IpAddr>,
    pub dev: Option<String>,
    pub not_dev: Option<String>,
    /// The table the answer must come from; without it, the VRF's own table (anything else is
    /// fall-through).
    pub table: Option<ExpectedTable>,
    pub reachable: Option<bool>,
    /// The IPv4 address of a workload whose packets take the answer: the check's `actual`
    /// says whether the node's NAT chains source-translate them leaving by its device.
    pub snat_src: Option<Ipv4Addr>,
}

/// `table`: the one the answer must come from, or any (fall-through is reported, not failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedTable {
    Id(u32),
    Any,
}

impl LookupCheck {
    /// A lookup with no expectation but the VRF's own table.
    pub fn of(dst: IpAddr) -> Self {
        LookupCheck {
            dst,
            src: None,
            iif: None,
            via: None,
            dev: None,
            not_dev: None,
            table: None,
            reachable: None,
            snat_src: None,
        }
    }
}

impl Request {
    /// The checks the arguments ask for, or the message that says what to fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        let settle_timeout =
            SETTLE_TIMEOUT_RANGE.seconds("settle_timeout", params.settle_timeout)?;
        let undeclared_vrfs = params.undeclared_vrfs;
        let vrfs = vrf_checks(params)?;
        Ok(Request {
            vrfs,
            undeclared_vrfs,
            settle_timeout,
        })
    }
}

fn vrf_checks(params: Params) -> Result<Vec<VrfCheck>, String> {
    match (params.vrfs.is_some(), params.vrf.is_some()) {
        (true, true) => Err(
            "vrf and vrfs are mutually exclusive: give one VRF with vrf (the short form, with \
             dst, via, dev, …), or a list of VRFs with vrfs"
                .into(),
        ),
        // Only the node-wide inspection: every VRF is undeclared.
        (false, false) if params.undeclared_vrfs != UndeclaredVrfs::Ignore => Ok(Vec::new()),
        (false, false) => Err(
            "nothing to check: give vrfs (a list of VRFs, each with name and its checks), vrf \
             (one VRF, the short form: vrf=vrf_tdemo dst=10.20.99.5 dev=vmbr0.50) or \
             undeclared_vrfs=fail to inspect every VRF of the node"
                .into(),
        ),
        (true, false) => {
            let short_form_keys = short_form_keys_given(&params);
            if let Some(key) = short_form_keys.first() {
                return Err(format!(
                    "{key} belongs to the short form (with vrf); with vrfs, put it inside the \
                     entry ({})",
                    match *key {
                        "default_via" | "default_dev" | "forwarding" | "no_fall_through" =>
                            format!("vrfs[].{key}"),
                        _ => format!("vrfs[].lookups[].{key}"),
                    }
                ));
            }
            let entries = params.vrfs.unwrap_or_default();
            let mut seen = HashSet::new();
            let mut checks = Vec::with_capacity(entries.len());
            for (i, entry) in entries.into_iter().enumerate() {
                let location = format!("vrfs[{i}]");
                if !seen.insert(entry.name.clone()) {
                    return Err(format!(
                        "{location}.name: {} is declared twice; merge its checks into one entry",
                        entry.name
                    ));
                }
                checks.push(vrf_check(&location, entry)?);
            }
            Ok(checks)
        }
        (false, true) => short_form(params).map(|check| vec![check]),
    }
}

/// The short form's lookup keys, `dst` first, each with whether it is given.
fn lookup_keys_given(params: &Params) -> [(&'static str, bool); 9] {
    [
        ("dst", params.dst.is_some()),
        ("src", params.src.is_some()),
        ("iif", params.iif.is_some()),
        ("via", params.via.is_some()),
        ("dev", params.dev.is_some()),
        ("not_dev", params.not_dev.is_some()),
        ("table", params.table.is_some()),
        ("reachable", params.reachable.is_some()),
        ("snat_src", params.snat_src.is_some()),
    ]
}

fn short_form_keys_given(params: &Params) -> Vec<&'static str> {
    let vrf_keys = [
        ("default_via", params.default_via.is_some()),
        ("default_dev", params.default_dev.is_some()),
        ("forwarding", params.forwarding.is_some()),
        ("no_fall_through", params.no_fall_through.is_some()),
    ];
    lookup_keys_given(params)
        .into_iter()
        .chain(vrf_keys)
        .filter(|(_, is_given)| *is_given)
        .map(|(key, _)| key)
        .collect()
}

fn short_form(params: Params) -> Result<VrfCheck, String> {
    let lookups = match params.dst {
        Some(dst) => vec![LookupParams {
            dst,
            src: params.src,
            iif: params.iif,
            via: params.via,
            dev: params.dev,
            not_dev: params.not_dev,
            table: params.table,
            reachable: params.reachable,
            snat_src: params.snat_src,
        }],
        None => {
            refuse_lookup_keys_without_dst(&params)?;
            Vec::new()
        }
    };
    let entry = VrfParams {
        name: params.vrf.unwrap_or_default(),
        default_via: params.default_via,
        default_dev: params.default_dev,
        ipv6_default_via: None,
        ipv6_default_dev: None,
        lookups,
        forwarding: params.forwarding,
        no_fall_through: params.no_fall_through.unwrap_or(false),
        forbidden_interfaces: Vec::new(),
        asymmetric_returns: false,
        l3vni_bridge: None,
    };
    // Short-form keys sit at the top level: name them so.
    vrf_check_at(String::new(), entry, |field| match field {
        "name" => "vrf".to_string(),
        "lookups[0].dst" => "dst".to_string(),
        other => other.trim_start_matches("lookups[0].").to_string(),
    })
}

/// The short form's lookup keys mean nothing without `dst`.
fn refuse_lookup_keys_without_dst(params: &Params) -> Result<(), String> {
    let orphan = lookup_keys_given(params)
        .into_iter()
        .find(|(key, given)| *given && *key != "dst");
    let Some((key, _)) = orphan else {
        return Ok(());
    };
    let what = match key {
        "src" | "iif" => {
            "the packet whose destination dst is (its source, the interface it arrives by)"
        }
        "snat_src" => "the workload whose packets to dst take the answer's device",
        _ => "an expectation about the lookup of dst in vrf",
    };
    Err(format!(
        "{key} needs dst: it is {what}; add dst=ADDRESS, or use default_via/default_dev for the \
         VRF's default route"
    ))
}

fn vrf_check(location: &str, entry: VrfParams) -> Result<VrfCheck, String> {
    vrf_check_at(location.to_string(), entry, |field| {
        format!("{location}.{field}")
    })
}

fn vrf_check_at(
    location: String,
    entry: VrfParams,
    at: impl Fn(&str) -> String,
) -> Result<VrfCheck, String> {
    let is_default_vrf = entry.name == DEFAULT_VRF;
    if !is_default_vrf {
        ifname::validate(&at("name"), &entry.name)?;
    }
    let l3vni_bridge = interface(&at, "l3vni_bridge", &entry.l3vni_bridge)?;
    if let (Some(bridge), false) = (&l3vni_bridge, entry.asymmetric_returns) {
        return Err(format!(
            "{}: {bridge} is checked only with asymmetric_returns (its rp_filter must let in the \
             returns other nodes deliver); set asymmetric_returns: true in this entry, or remove \
             l3vni_bridge",
            at("l3vni_bridge")
        ));
    }
    let mut defaults = default_expectations(&at, &entry)?;
    let lookups = entry
        .lookups
        .into_iter()
        .enumerate()
        .map(|(i, lookup)| lookup_check(|name| at(&format!("lookups[{i}].{name}")), lookup))
        .collect::<Result<Vec<_>, String>>()?;
    let forbidden_interfaces = forbidden_interfaces(
        &at("forbidden_interfaces"),
        entry.forbidden_interfaces,
        &defaults,
        &lookups,
    )?;
    let ipv6 =
        defaults.iter().any(|d| d.family == Family::V6) || lookups.iter().any(|l| l.dst.is_ipv6());
    if is_default_vrf {
        refuse_for_default_vrf(
            &at,
            [
                ("no_fall_through", entry.no_fall_through),
                ("forbidden_interfaces", !forbidden_interfaces.is_empty()),
                ("forwarding", entry.forwarding == Some(true)),
                ("asymmetric_returns", entry.asymmetric_returns),
            ],
        )?;
        expect_the_default_vrfs_defaults(&mut defaults, ipv6);
    }
    Ok(VrfCheck {
        name: entry.name,
        location,
        defaults,
        lookups,
        forwarding: entry.forwarding.unwrap_or(!is_default_vrf),
        no_fall_through: entry.no_fall_through,
        forbidden_interfaces,
        ipv6,
        asymmetric_returns: entry.asymmetric_returns,
        l3vni_bridge,
    })
}

/// An interface name at `field`, checked.
fn interface(
    at: &impl Fn(&str) -> String,
    field: &str,
    value: &Option<String>,
) -> Result<Option<String>, String> {
    value
        .as_ref()
        .map(|name| ifname::validate(&at(field), name).map(|()| name.clone()))
        .transpose()
}

/// The option at `field` parsed by `parse` (which gets its location and text), when given.
fn parsed<T>(
    at: &impl Fn(&str) -> String,
    field: &str,
    value: &Option<String>,
    parse: impl Fn(&str, &str) -> Result<T, String>,
) -> Result<Option<T>, String> {
    value
        .as_deref()
        .map(|text| parse(&at(field), text))
        .transpose()
}

/// The usable default routes the entry expects, at most one per family.
fn default_expectations(
    at: &impl Fn(&str) -> String,
    entry: &VrfParams,
) -> Result<Vec<DefaultExpectation>, String> {
    let default_via = parsed(at, "default_via", &entry.default_via, address)?;
    let default_dev = interface(at, "default_dev", &entry.default_dev)?;
    let ipv6_default_via = parsed(
        at,
        "ipv6_default_via",
        &entry.ipv6_default_via,
        ipv6_address,
    )?;
    let ipv6_default_dev = interface(at, "ipv6_default_dev", &entry.ipv6_default_dev)?;
    let mut defaults = Vec::new();
    if default_via.is_some() || default_dev.is_some() {
        let family = default_via.as_ref().map(Family::of).unwrap_or(Family::V4);
        if family == Family::V6 && (ipv6_default_via.is_some() || ipv6_default_dev.is_some()) {
            return Err(format!(
                "{}: '{}' is an IPv6 gateway, and the IPv6 default is already given by \
                 ipv6_default_via/ipv6_default_dev; give the IPv4 gateway here, or move the \
                 IPv6 one to ipv6_default_via",
                at("default_via"),
                entry.default_via.as_deref().unwrap_or_default()
            ));
        }
        defaults.push(DefaultExpectation {
            family,
            via: default_via,
            dev: default_dev,
        });
    }
    if ipv6_default_via.is_some() || ipv6_default_dev.is_some() {
        defaults.push(DefaultExpectation {
            family: Family::V6,
            via: ipv6_default_via,
            dev: ipv6_default_dev,
        });
    }
    Ok(defaults)
}

/// In the default VRF, the defaults themselves are the assertion: "the IPv4 default is here"
/// (and the IPv6 one when the entry checks IPv6), whatever their gateway.
fn expect_the_default_vrfs_defaults(defaults: &mut Vec<DefaultExpectation>, ipv6: bool) {
    let mut families = vec![Family::V4];
    if ipv6 {
        families.push(Family::V6);
    }
    for family in families {
        if !defaults.iter().any(|d| d.family == family) {
            defaults.push(DefaultExpectation {
                family,
                via: None,
                dev: None,
            });
        }
    }
    defaults.sort_by_key(|d| d.family);
}

/// One lookup entry, validated; `at` names its keys where the operator gave them.
fn lookup_check(at: impl Fn(&str) -> String, lookup: LookupParams) -> Result<LookupCheck, String> {
    let dst = address(&at("dst"), &lookup.dst)?;
    let src = parsed(&at, "src", &lookup.src, |at, text| source(at, text, dst))?;
    let iif = interface(&at, "iif", &lookup.iif)?;
    if let (Some(iif), None) = (&iif, src) {
        return Err(format!(
            "{}: {iif} needs src: a packet that arrives by an interface has a source, and the \
             kernel checks it (rp_filter) before it forwards the packet (without one it \
             refuses the lookup); add src, the packet's source address (for a return, the \
             address that answers, such as 203.0.113.8)",
            at("iif")
        ));
    }
    Ok(LookupCheck {
        dst,
        src,
        iif,
        via: parsed(&at, "via", &lookup.via, address)?,
        dev: interface(&at, "dev", &lookup.dev)?,
        not_dev: interface(&at, "not_dev", &lookup.not_dev)?,
        table: parsed(&at, "table", &lookup.table, table)?,
        reachable: lookup.reachable,
        snat_src: parsed(&at, "snat_src", &lookup.snat_src, |at, text| {
            snat_source(at, text, dst)
        })?,
    })
}

/// The workload whose source NAT is predicted: one IPv4 address (the NAT chains walked are
/// IPv4's), for an IPv4 destination.
fn snat_source(location: &str, text: &str, dst: IpAddr) -> Result<Ipv4Addr, String> {
    match (address(location, text)?, dst) {
        (IpAddr::V4(src), IpAddr::V4(_)) => Ok(src),
        (IpAddr::V6(_), _) => Err(format!(
            "{location}: '{text}' is an IPv6 address; the prediction walks the IPv4 NAT chains \
             (families ip and inet): give the workload's IPv4 address, such as 10.20.129.250"
        )),
        (IpAddr::V4(_), _) => Err(format!(
            "{location}: '{text}' is an IPv4 address and dst {dst} is IPv6; the prediction is \
             for IPv4 packets: give snat_src with an IPv4 dst only"
        )),
    }
}

/// The packet's source: one address, of the destination's family.
fn source(location: &str, text: &str, dst: IpAddr) -> Result<IpAddr, String> {
    let src = address(location, text)?;
    if Family::of(&src) == Family::of(&dst) {
        return Ok(src);
    }
    Err(format!(
        "{location}: '{text}' is an {} address and dst {dst} is {}; give a source of dst's \
         family (a packet has both of one family)",
        Family::of(&src).name(),
        Family::of(&dst).name()
    ))
}

/// The checks that are about tenant traffic leaving the node mean nothing for the default VRF.
/// `given` says, for each of these options, whether the entry sets it.
fn refuse_for_default_vrf(
    at: &impl Fn(&str) -> String,
    given: [(&str, bool); 4],
) -> Result<(), String> {
    let why = |key: &str| match key {
        "no_fall_through" => {
            "the default VRF is the main table, where the lookups of other VRFs fall through to; \
             there is nothing further to fall through to"
        }
        "forbidden_interfaces" => {
            "the node's own traffic reaches the prefixes connected on an interface by that \
             interface"
        }
        "forwarding" => {
            "the node's own traffic is not forwarded; tenant traffic is, so check forwarding in \
             the tenant VRF whose routes leave by the default VRF's interfaces"
        }
        _ => {
            "returns of the node's own traffic are not forwarded; set it on the tenant VRF whose \
             routes leave by the default VRF's interfaces"
        }
    };
    match given.into_iter().find(|(_, is_given)| *is_given) {
        Some((key, _)) => Err(format!(
            "{}: not for the default VRF ({} is the main table): {}; remove {key} from this \
             entry",
            at(key),
            DEFAULT_VRF,
            why(key)
        )),
        None => Ok(()),
    }
}

/// The forbidden interfaces, each a valid name, given once, and not also an interface that
/// the entry expects its traffic to leave by.
fn forbidden_interfaces(
    location: &str,
    names: Vec<String>,
    defaults: &[DefaultExpectation],
    lookups: &[LookupCheck],
) -> Result<Vec<String>, String> {
    let mut seen = HashSet::new();
    for (i, name) in names.iter().enumerate() {
        ifname::validate(&format!("{location}[{i}]"), name)?;
        if !seen.insert(name) {
            return Err(format!(
                "{location}[{i}]: {name} is listed twice; list each interface once"
            ));
        }
        let expected_exit = defaults
            .iter()
            .map(|d| (d.dev.as_ref(), "a default_dev"))
            .chain(lookups.iter().map(|l| (l.dev.as_ref(), "a lookup's dev")))
            .find(|(dev, _)| *dev == Some(name));
        if let Some((_, what)) = expected_exit {
            return Err(format!(
                "{location}[{i}]: {name} is also {what} of this entry: tenant traffic cannot \
                 both leave by it and never leave by it; remove it from one of them"
            ));
        }
    }
    Ok(names)
}

/// One IPv4 or IPv6 address; a prefix or a name is refused with what to give instead.
pub(crate) fn address(location: &str, text: &str) -> Result<IpAddr, String> {
    let trimmed = text.trim();
    if let Ok(address) = trimmed.parse::<IpAddr>() {
        return Ok(address);
    }
    if let Some((base, length)) = trimmed.split_once('/') {
        if base.parse::<IpAddr>().is_ok() && length.parse::<u8>().is_ok() {
            return Err(format!(
                "{location}: '{text}' is a prefix; give one address (for a lookup, an address \
                 inside it, such as {base})"
            ));
        }
    }
    Err(format!(
        "{location}: '{text}' is not an IP address; give one IPv4 or IPv6 address, such as \
         10.20.99.5 or 2001:db8::5"
    ))
}

fn ipv6_address(location: &str, text: &str) -> Result<IpAddr, String> {
    match address(location, text)? {
        IpAddr::V4(_) => Err(format!(
            "{location}: '{text}' is an IPv4 address; give the IPv6 gateway (such as \
             fe80::1 or 2001:db8:50::1), or use default_via for the IPv4 default"
        )),
        v6 => Ok(v6),
    }
}

/// A routing table: `main`, `local`, `default` or its number, as in `ip route show table`, or
/// `any`.
pub(crate) fn table(location: &str, text: &str) -> Result<ExpectedTable, String> {
    match text.trim() {
        "any" => Ok(ExpectedTable::Any),
        "main" => Ok(ExpectedTable::Id(254)),
        "local" => Ok(ExpectedTable::Id(255)),
        "default" => Ok(ExpectedTable::Id(253)),
        number => match number.parse::<u32>() {
            Ok(id) if id > 0 => Ok(ExpectedTable::Id(id)),
            _ => Err(format!(
                "{location}: '{text}' is not a routing table; give main, local, default or a \
                 table number from 1 to 4294967295, such as 1001, or any to accept an answer \
                 from any table"
            )),
        },
    }
}
