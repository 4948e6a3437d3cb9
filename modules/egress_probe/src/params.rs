//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the [`Request`] they make once each is checked on its own (no kernel needed). Checks against
//! the node (does the VRF exist, is the address free) are in `tenant.rs`.

use deevnet_runtime::ifname;
use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{CheckModeFindings, Kind, OptionSpec, CHECK_MODE_FINDINGS};
use ipnet::IpNet;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Probes per target, and the bound on them: the module sends only this much.
pub const COUNT_RANGE: IntRange = IntRange::new(1, 20, "a number of probes per target")
    .because("the probe stays short and bounded");
/// Seconds to wait for each reply.
pub const TIMEOUT_RANGE: IntRange = IntRange::new(1, 30, "a number of seconds per reply")
    .because("the probe stays short and bounded");
/// Targets per run.
pub const MAX_TARGETS: usize = 32;
/// The `vrf` value for VNets in the main table (a Proxmox `simple` zone has no VRF device).
pub const DEFAULT_VRF: &str = "default";
/// The port a `udp` target gets without one: the probe is a DNS query.
pub const DNS_PORT: u16 = 53;
/// How far ahead of the node's clock `start_at` may be: the run waits that long at most
/// before probing.
pub const MAX_START_AHEAD_SECS: f64 = 300.0;

static TARGET_OPTIONS: [OptionSpec; 7] = [
    OptionSpec::new("address", Kind::Str).required(),
    OptionSpec::new("proto", Kind::Str)
        .choices(Proto::CHOICES)
        .default(DefaultValue::Str("icmp")),
    OptionSpec::new("port", Kind::Int),
    OptionSpec::new("expect", Kind::Str)
        .choices(Expect::CHOICES)
        .default(DefaultValue::Str("reply")),
    OptionSpec::new("size", Kind::Str),
    OptionSpec::new("peer", Kind::Bool).default(DefaultValue::Bool(false)),
    OptionSpec::new("via", Kind::Str),
];
static TARGET: OptionSpec = OptionSpec::new("target", Kind::Dict(&TARGET_OPTIONS));
static INTERFACE_NAME: OptionSpec = OptionSpec::new("interface", Kind::Str);

static PROBE_OPTIONS: [OptionSpec; 10] = [
    OptionSpec::new("name", Kind::Str).required(),
    OptionSpec::new("vrf", Kind::Str),
    OptionSpec::new("bridge", Kind::Str),
    OptionSpec::new("vlan", Kind::Int),
    OptionSpec::new("vnet", Kind::Str),
    OptionSpec::new("address", Kind::Str).required(),
    OptionSpec::new("gateway", Kind::Str),
    OptionSpec::new("expect_egress_interface", Kind::Str),
    OptionSpec::new("forbidden_interfaces", Kind::List(&INTERFACE_NAME)),
    OptionSpec::new("targets", Kind::List(&TARGET)).required(),
];
static PROBE: OptionSpec = OptionSpec::new("probe", Kind::Dict(&PROBE_OPTIONS));

/// Every option of the module, in the order `--argument-spec` prints them. `vrf`, `address`
/// and `targets` (one probe) or `probes` (many): `Run::from_params` requires one form.
pub static SPEC: [OptionSpec; 12] = [
    OptionSpec::new("vrf", Kind::Str),
    OptionSpec::new("address", Kind::Str),
    OptionSpec::new("targets", Kind::List(&TARGET)),
    OptionSpec::new("probes", Kind::List(&PROBE)),
    OptionSpec::new("vnet", Kind::Str),
    OptionSpec::new("gateway", Kind::Str),
    OptionSpec::new("count", Kind::Int).default(DefaultValue::Int(3)),
    OptionSpec::new("timeout", Kind::Int).default(DefaultValue::Int(2)),
    OptionSpec::new("forbidden_interfaces", Kind::List(&INTERFACE_NAME)),
    OptionSpec::new("expect_egress_interface", Kind::Str),
    OptionSpec::new("start_at", Kind::Float),
    CHECK_MODE_FINDINGS,
];

/// The module's arguments, as the runtime validated and coerced them.
#[derive(Debug, Clone, Deserialize)]
pub struct Params {
    /// Empty when not given (the `probes` form).
    #[serde(deserialize_with = "null_as_default")]
    pub vrf: String,
    #[serde(deserialize_with = "null_as_default")]
    pub address: String,
    #[serde(deserialize_with = "null_as_default")]
    pub targets: Vec<TargetParams>,
    pub probes: Option<Vec<ProbeParams>>,
    pub vnet: Option<String>,
    pub gateway: Option<String>,
    pub count: i64,
    pub timeout: i64,
    pub forbidden_interfaces: Option<Vec<String>>,
    pub expect_egress_interface: Option<String>,
    /// Seconds since the epoch: when the run's probing starts (the run's, in both forms).
    #[serde(default)]
    pub start_at: Option<f64>,
    pub check_mode_findings: CheckModeFindings,
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Debug, Clone, Deserialize)]
pub struct TargetParams {
    pub address: String,
    pub proto: Proto,
    pub port: Option<i64>,
    pub expect: Expect,
    #[serde(default)]
    pub size: Option<String>,
    /// Another workload of the same proof, on another node, in the workload's own subnet.
    #[serde(default)]
    pub peer: bool,
    /// The node's interface the target's requests must be seen leaving by.
    #[serde(default)]
    pub via: Option<String>,
}

/// One entry of `probes`: one tenant's workload.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProbeParams {
    pub name: String,
    pub vrf: Option<String>,
    pub bridge: Option<String>,
    pub vlan: Option<i64>,
    pub vnet: Option<String>,
    pub address: String,
    pub gateway: Option<String>,
    pub expect_egress_interface: Option<String>,
    pub forbidden_interfaces: Option<Vec<String>>,
    pub targets: Vec<TargetParams>,
}

deevnet_runtime::choices! {
#[derive(Hash)]
pub enum Proto {
    /// Echo request, echo reply.
    Icmp = "icmp",
    /// A completed handshake.
    Tcp = "tcp",
    /// A DNS query answered.
    Udp = "udp",
}
}

deevnet_runtime::choices! {
pub enum Expect {
    /// The target must answer.
    Reply = "reply",
    /// A leak probe: only where its packets go is judged.
    None = "none",
    /// Isolation: the target must not answer, and the probe must not leave the node.
    Blocked = "blocked",
}
}

/// One destination to probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub address: IpAddr,
    pub proto: Proto,
    /// `None` for ICMP.
    pub port: Option<u16>,
    pub expect: Expect,
    /// A DF probe of this IP packet size (ICMP only); `None`: the small probe.
    pub size: Option<Size>,
    /// Another workload of the same proof on another node, in the workload's own subnet (an
    /// ICMP target that must reply, with `via`): the one target the subnet may hold.
    pub peer: bool,
    /// The node's interface its requests must be seen leaving by (a reply target's).
    pub via: Option<String>,
}

/// A full-size probe's IP packet size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Size {
    Bytes(u16),
    /// The workload's MTU (its VNet's).
    Mtu,
}

/// The smallest full-size probe: an IPv4 header, the echo header, the payload and the nonce.
pub const MIN_SIZE: u16 = 20 + 8 + 24 + 16;
/// The smallest IPv6 full-size probe: its 40-byte header instead of IPv4's 20.
pub const MIN_SIZE_V6: u16 = MIN_SIZE + 20;
/// The largest: an IPv4 packet's.
pub const MAX_SIZE: u16 = 65_535;

impl Target {
    /// Whether `other` sends the same probes (`peer` and `via` only judge them): the capture
    /// could not tell the two apart.
    pub fn probes_like(&self, other: &Target) -> bool {
        (self.address, self.proto, self.port, self.expect, self.size)
            == (
                other.address,
                other.proto,
                other.port,
                other.expect,
                other.size,
            )
    }

    /// `203.0.113.8 tcp/443`, `203.0.113.8 icmp`: how messages name it.
    pub fn label(&self) -> String {
        match self.port {
            Some(port) => format!("{} {}/{port}", self.address, self.proto),
            None => format!("{} {}", self.address, self.proto),
        }
    }
}

/// Probes one run takes at most: each is a namespace, a veth and a thread for the run's
/// length, all running at once.
pub const MAX_PROBES: usize = 128;

/// The whole run: one probe (the `vrf`/`address`/`targets` form) or many (`probes`), run at
/// once.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// `(name, request)` per probe; the single form's name is its VRF.
    pub probes: Vec<(String, Request)>,
    /// The `probes` form: results per probe only (`probes` in the result).
    pub listed: bool,
    /// Seconds since the epoch: when every workload of the run starts probing.
    pub start_at: Option<f64>,
}

impl Run {
    /// Checks the options, each probe on its own, then the probes together, and `start_at`
    /// against the node's clock.
    pub fn from_params(params: Params) -> Result<Run, String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |since| since.as_secs_f64());
        let start_at = params
            .start_at
            .map(|start_at| check_start_at(start_at, now))
            .transpose()?;
        let mut run = Run::of_probes(params)?;
        run.start_at = start_at;
        if start_at.is_none() {
            check_peers_have_a_start(&run)?;
        }
        Ok(run)
    }

    fn of_probes(mut params: Params) -> Result<Run, String> {
        let Some(probes) = params.probes.take() else {
            if params.vrf.is_empty() && params.address.is_empty() && params.targets.is_empty() {
                return Err("vrf, address and targets (one probe) or probes (many) are \
                            missing: give one of the two forms"
                    .into());
            }
            let name = params.vrf.clone();
            return Ok(Run {
                probes: vec![(name, Request::from_params(params)?)],
                listed: false,
                start_at: None,
            });
        };
        for (given, option) in [
            (!params.vrf.is_empty(), "vrf"),
            (!params.address.is_empty(), "address"),
            (!params.targets.is_empty(), "targets"),
            (params.vnet.is_some(), "vnet"),
            (params.gateway.is_some(), "gateway"),
            (
                params.expect_egress_interface.is_some(),
                "expect_egress_interface",
            ),
        ] {
            if given {
                return Err(format!(
                    "probes and {option} are mutually exclusive: {option} belongs to one \
                     probe; move it into each entry of probes, or drop probes for a run of one"
                ));
            }
        }
        if probes.is_empty() {
            return Err(
                "probes is empty: give at least one, e.g. [{name: tdemo, vrf: vrf_tdemo, \
                 address: 10.20.129.250/24, targets: [{address: 203.0.113.8}]}]"
                    .into(),
            );
        }
        if probes.len() > MAX_PROBES {
            return Err(format!(
                "probes: {} entries are more than the {MAX_PROBES} one run takes; give at most \
                 {MAX_PROBES}, and split the others over more egress_probe tasks (each probe is \
                 a namespace, a veth and a thread while the run lasts)",
                probes.len()
            ));
        }
        let mut run: Vec<(String, Request)> = Vec::with_capacity(probes.len());
        for (i, probe) in probes.into_iter().enumerate() {
            let location = format!("probes[{i}]");
            check_probe_name(&location, &probe.name)?;
            if let Some((j, _)) = run.iter().enumerate().find(|(_, (n, _))| *n == probe.name) {
                return Err(format!(
                    "{location}.name: {} is also probes[{j}]'s; results are keyed by name: give \
                     each probe its own (the tenant's name)",
                    probe.name
                ));
            }
            let request = probe_request(&location, &probe, &params)
                .map_err(|e| format!("{location}.{e} (probe {})", probe.name))?;
            if let Some((other, _)) = run
                .iter()
                .find(|(_, r)| r.address.addr() == request.address.addr())
            {
                return Err(format!(
                    "{location}.address: {} is also probe {other}'s; two workloads with one \
                     address would answer each other's replies: give each probe its own address",
                    request.address.addr()
                ));
            }
            run.push((probe.name, request));
        }
        Ok(Run {
            probes: run,
            listed: true,
            start_at: None,
        })
    }
}

/// `start_at` (seconds since the epoch) against the node's clock `now`: at most
/// [`MAX_START_AHEAD_SECS`] ahead. One already past is taken: the probing starts at once.
pub fn check_start_at(start_at: f64, now: f64) -> Result<f64, String> {
    if !start_at.is_finite() || start_at < 0.0 {
        return Err(format!(
            "start_at: {start_at} is not an instant; give seconds since the epoch (e.g. \
             1767225600.0), the same on every node of the run"
        ));
    }
    let ahead = start_at - now;
    if ahead > MAX_START_AHEAD_SECS {
        return Err(format!(
            "start_at: {start_at} is {ahead:.1} s after the node's clock ({now:.3}); the run \
             would wait that long before probing: give an instant at most \
             {MAX_START_AHEAD_SECS:.0} s ahead (and check that the controller's and the node's \
             clocks agree), or leave start_at out"
        ));
    }
    Ok(start_at)
}

/// A run without `start_at` has no peer target: the peer's workload on its node must be up
/// while this one probes, and nothing else puts the two runs in one window.
fn check_peers_have_a_start(run: &Run) -> Result<(), String> {
    for (p, (name, request)) in run.probes.iter().enumerate() {
        let Some(i) = request.targets.iter().position(|t| t.peer) else {
            continue;
        };
        let (location, probe) = if run.listed {
            (
                format!("probes[{p}].targets[{i}]"),
                format!(" (probe {name})"),
            )
        } else {
            (format!("targets[{i}]"), String::new())
        };
        return Err(format!(
            "{location}.peer: true without start_at{probe}; the peer's workload on its node \
             must be up while this one probes it, and only one start_at given to every node \
             of the proof puts their probing in one window: give start_at (seconds since the \
             epoch, the same on every node)"
        ));
    }
    Ok(())
}

fn check_probe_name(location: &str, name: &str) -> Result<(), String> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b));
    if fine {
        Ok(())
    } else {
        Err(format!(
            "{location}.name: '{name}' is not a probe name; give the tenant's name, 1 to 64 \
             letters, digits, '-', '_', '.' or '/' (e.g. tdemo/ipv6)"
        ))
    }
}

/// One entry of `probes` as the single form's options (the run's count, timeout and
/// forbidden interfaces added), checked by the same rules.
fn probe_request(location: &str, probe: &ProbeParams, run: &Params) -> Result<Request, String> {
    if probe.bridge.is_some() || probe.vlan.is_some() {
        let value = match (&probe.bridge, probe.vlan) {
            (Some(bridge), Some(vlan)) => format!("{bridge} vlan {vlan}"),
            (Some(bridge), None) => bridge.clone(),
            (None, Some(vlan)) => format!("vlan {vlan}"),
            (None, None) => unreachable!(),
        };
        if let Some(vlan) = probe.vlan.filter(|v| !(1..=4094).contains(v)) {
            return Err(format!(
                "vlan: {vlan} is outside 1-4094; give the VM NIC's tag (e.g. 201)"
            ));
        }
        if probe.vlan.is_some() && probe.bridge.is_none() {
            return Err(format!(
                "vlan: {value} without bridge; give the VLAN-aware bridge the tag is on (e.g. \
                 bridge: vmbr1), or drop vlan"
            ));
        }
        if probe.vrf.is_some() {
            return Err(format!(
                "bridge: {value} together with vrf; a tagged workload has no VRF on the node: \
                 give vrf (a VNet) or bridge and vlan (a tagged port), not both"
            ));
        }
        let (Some(bridge), Some(vlan)) = (&probe.bridge, probe.vlan) else {
            return Err(format!(
                "bridge: {value} without vlan; a workload on a VLAN-aware bridge needs the \
                 VM NIC's tag (e.g. vlan: 201), or give vrf for a VNet"
            ));
        };
        ifname::validate("bridge", bridge)?;
        if probe.vnet.is_some() {
            return Err(format!(
                "vnet: given with bridge {bridge}; the bridge is where a tagged workload plugs \
                 in: drop vnet"
            ));
        }
        if probe.gateway.is_none() {
            return Err(format!(
                "gateway: missing for bridge {bridge} vlan {vlan}; the tenant's router is off \
                 the node there: give its address on the VLAN (e.g. 10.20.201.1)"
            ));
        }
        let mut request = Request::from_params(single_params(probe, run, DEFAULT_VRF.into()))?;
        request.tagged = Some(Tagged {
            bridge: bridge.clone(),
            vlan: vlan as u16,
        });
        return Ok(request);
    }
    let vrf = probe.vrf.clone().ok_or_else(|| {
        "vrf: missing; give the tenant's VRF (e.g. vrf_tdemo), or default for VNets in the \
         main table"
            .to_string()
    })?;
    let _ = location;
    Request::from_params(single_params(probe, run, vrf))
}

/// One entry of `probes` as the single form's options.
fn single_params(probe: &ProbeParams, run: &Params, vrf: String) -> Params {
    let forbidden = match (&run.forbidden_interfaces, &probe.forbidden_interfaces) {
        (None, None) => None,
        (run, own) => {
            let mut names: Vec<String> = own.iter().flatten().cloned().collect();
            for name in run.iter().flatten() {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            Some(names)
        }
    };
    Params {
        vrf,
        address: probe.address.clone(),
        targets: probe.targets.clone(),
        probes: None,
        vnet: probe.vnet.clone(),
        gateway: probe.gateway.clone(),
        count: run.count,
        timeout: run.timeout,
        forbidden_interfaces: forbidden,
        expect_egress_interface: probe.expect_egress_interface.clone(),
        start_at: run.start_at,
        check_mode_findings: run.check_mode_findings,
    }
}

/// A workload on a VLAN-aware bridge's port, untagged in VLAN `vlan` (its PVID), as a
/// Proxmox VM's `tag=VLAN` NIC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    pub bridge: String,
    pub vlan: u16,
}

/// The options, each checked on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub vrf: String,
    /// The workload's address with the prefix length of its subnet.
    pub address: IpNet,
    pub targets: Vec<Target>,
    pub vnet: Option<String>,
    pub gateway: Option<IpAddr>,
    pub count: u32,
    pub timeout_secs: u32,
    pub forbidden_interfaces: Option<Vec<String>>,
    pub expect_egress_interface: Option<String>,
    /// A workload on a VLAN-aware bridge instead of a VRF's VNet (`probes[].bridge`, `vlan`).
    pub tagged: Option<Tagged>,
}

impl Request {
    /// Checks each option on its own; the message names the option, the value and the fix.
    pub fn from_params(params: Params) -> Result<Request, String> {
        if params.vrf.is_empty() {
            return Err(
                "vrf is empty: give the tenant's VRF as `ip link` shows it (e.g. \
                        vrf_tdemo), or default for VNets in the main table"
                    .into(),
            );
        }
        if params.vrf != DEFAULT_VRF {
            ifname::validate("vrf", &params.vrf)?;
        }
        let address = parse_address(&params.address)?;
        // In range, so they fit a u32.
        let count = COUNT_RANGE.check("count", params.count)? as u32;
        let timeout_secs = TIMEOUT_RANGE.check("timeout", params.timeout)? as u32;
        let gateway = params
            .gateway
            .as_deref()
            .map(|gateway| parse_gateway(gateway, address))
            .transpose()?;
        if params.targets.is_empty() {
            return Err(
                "targets is empty: give at least one, e.g. [{address: 203.0.113.8}]".into(),
            );
        }
        if params.targets.len() > MAX_TARGETS {
            return Err(format!(
                "targets: {} entries are more than the {MAX_TARGETS} one run probes; give at \
                 most {MAX_TARGETS}, and split the others over more egress_probe tasks (a run \
                 stays short and bounded)",
                params.targets.len()
            ));
        }
        let mut targets: Vec<Target> = Vec::with_capacity(params.targets.len());
        for (i, entry) in params.targets.iter().enumerate() {
            let target = parse_target(&format!("targets[{i}]"), entry, address)?;
            if targets.iter().any(|listed| listed.probes_like(&target)) {
                return Err(format!(
                    "targets[{i}]: {} is listed twice; give each target once (count sets how \
                     many probes each gets)",
                    target.label()
                ));
            }
            targets.push(target);
        }
        check_interfaces(&params, &targets)?;
        Ok(Request {
            vrf: params.vrf,
            address,
            targets,
            vnet: params.vnet,
            gateway,
            count,
            timeout_secs,
            forbidden_interfaces: params.forbidden_interfaces,
            expect_egress_interface: params.expect_egress_interface,
            tagged: None,
        })
    }
}

/// The interfaces named: valid names, and none both expected (`expect_egress_interface`, a
/// target's `via`) and forbidden.
fn check_interfaces(params: &Params, targets: &[Target]) -> Result<(), String> {
    if let Some(vnet) = &params.vnet {
        ifname::validate("vnet", vnet)?;
    }
    if let Some(egress) = &params.expect_egress_interface {
        ifname::validate("expect_egress_interface", egress)?;
    }
    for (i, name) in params.forbidden_interfaces.iter().flatten().enumerate() {
        ifname::validate(&format!("forbidden_interfaces[{i}]"), name)?;
        if params.expect_egress_interface.as_deref() == Some(name.as_str()) {
            return Err(format!(
                "forbidden_interfaces[{i}]: {name} is also expect_egress_interface; traffic \
                 cannot both be expected and forbidden there: drop it from one"
            ));
        }
        if let Some(j) = targets
            .iter()
            .position(|t| t.via.as_deref() == Some(name.as_str()))
        {
            return Err(format!(
                "forbidden_interfaces[{i}]: {name} is also targets[{j}].via; a target's \
                 requests cannot both be expected and forbidden there: drop it from one"
            ));
        }
    }
    Ok(())
}

fn parse_address(text: &str) -> Result<IpNet, String> {
    let example = "e.g. 10.20.129.250/24: an unused address in the tenant's subnet, with \
                   the subnet's prefix length";
    if text.trim().is_empty() {
        // Not "'' is not an address": the option was left out, and the fix is to give it.
        return Err(format!(
            "address is missing: the probe's workload needs its own address in the VNet; give \
             address, {example}"
        ));
    }
    let net: ipnet::IpNet = text.parse().map_err(|_| {
        if text.parse::<IpAddr>().is_ok() {
            format!("address: '{text}' has no prefix length; give it as {example}")
        } else {
            format!("address: '{text}' is not an address with prefix length; give it as {example}")
        }
    })?;
    // Room for the workload and its gateway: /30 in IPv4 (network and broadcast taken),
    // /127 in IPv6 less the subnet-router anycast address.
    let longest = if net.addr().is_ipv4() { 30 } else { 126 };
    if net.prefix_len() > longest {
        return Err(format!(
            "address: '{text}' has a /{} prefix: the workload needs a subnet with room for \
             itself and the gateway (/{longest} or shorter); give the subnet's own prefix length",
            net.prefix_len()
        ));
    }
    let host = net.addr();
    if host == net.network() || (host.is_ipv4() && host == net.broadcast()) {
        return Err(format!(
            "address: '{text}' is the {} address of {}; give a host address in it, {example}",
            if host == net.network() {
                "network"
            } else {
                "broadcast"
            },
            net.trunc()
        ));
    }
    if let Some(problem) = forbidden_unicast(host) {
        return Err(format!("address: '{text}' is {problem}; {example}"));
    }
    Ok(net)
}

fn parse_gateway(text: &str, address: IpNet) -> Result<IpAddr, String> {
    let gateway: IpAddr = text.parse().map_err(|_| {
        format!(
            "gateway: '{text}' is not an IP address; give the node's address on the VNet \
             (e.g. 10.20.129.1), or leave gateway out to use it"
        )
    })?;
    if !address.contains(&gateway)
        || gateway == address.network()
        || (gateway.is_ipv4() && gateway == address.broadcast())
    {
        return Err(format!(
            "gateway: {gateway} is not a host address of {} (address's subnet); the workload \
             can only reach a gateway on its own subnet",
            address.trunc()
        ));
    }
    if gateway == address.addr() {
        return Err(format!(
            "gateway: {gateway} is the workload's own address; give the node's address on the \
             VNet, or leave gateway out"
        ));
    }
    Ok(gateway)
}

fn parse_target(location: &str, entry: &TargetParams, address: IpNet) -> Result<Target, String> {
    let target: IpAddr = entry.address.parse().map_err(|_| {
        format!(
            "{location}.address: '{}' is not an IP address; give one, e.g. 203.0.113.8 (no \
             names: the probe must not depend on DNS)",
            entry.address
        )
    })?;
    if target.is_ipv4() != address.addr().is_ipv4() {
        let family = |ip: IpAddr| if ip.is_ipv4() { "IPv4" } else { "IPv6" };
        return Err(format!(
            "{location}.address: {target} is {} but address {} is {}; one probe probes one \
             family: give a target of the address's family, or another probe for the other",
            family(target),
            address,
            family(address.addr())
        ));
    }
    if let Some(problem) = forbidden_unicast(target) {
        return Err(format!(
            "{location}.address: {target} is {problem}; probes go to one unicast host only"
        ));
    }
    if target == address.addr() {
        return Err(format!(
            "{location}.address: {target} is the workload's own address; give a host outside it"
        ));
    }
    if address.addr().is_ipv4() && address.prefix_len() < 31 && target == address.broadcast() {
        return Err(format!(
            "{location}.address: {target} is the broadcast address of the workload's subnet \
             {}; probes go to one unicast host only",
            address.trunc()
        ));
    }
    let port = parse_port(location, entry)?;
    let size = entry
        .size
        .as_deref()
        .map(|text| parse_size(location, text, entry))
        .transpose()?;
    if let (Some(Size::Bytes(bytes)), IpAddr::V6(_)) = (size, target) {
        if bytes < MIN_SIZE_V6 {
            return Err(format!(
                "{location}.size: {bytes} is smaller than an IPv6 probe ({MIN_SIZE_V6} bytes: \
                 its header, the echo's and the payload); give {MIN_SIZE_V6} or more, or mtu"
            ));
        }
    }
    if entry.peer {
        check_peer(location, entry, target, address)?;
    }
    let via = entry
        .via
        .as_deref()
        .map(|via| parse_via(location, via, entry))
        .transpose()?;
    Ok(Target {
        address: target,
        proto: entry.proto,
        port,
        expect: entry.expect,
        size,
        peer: entry.peer,
        via,
    })
}

/// The target's port: none for ICMP, required for TCP, DNS's by default for UDP.
fn parse_port(location: &str, entry: &TargetParams) -> Result<Option<u16>, String> {
    match (entry.proto, entry.port) {
        (Proto::Icmp, Some(port)) => Err(format!(
            "{location}.port: {port} given for an icmp target; ICMP has no ports: drop port, or \
             set proto: tcp or udp"
        )),
        (Proto::Icmp, None) => Ok(None),
        (Proto::Tcp, None) => Err(format!(
            "{location}.port: a tcp target needs the port to complete a handshake with, e.g. \
             port: 443"
        )),
        (Proto::Udp, None) => Ok(Some(DNS_PORT)),
        (_, Some(port)) => u16::try_from(port)
            .ok()
            .filter(|p| *p != 0)
            .map(Some)
            .ok_or_else(|| {
                format!("{location}.port: {port} is not a port; give one from 1 to 65535")
            }),
    }
}

/// `via`: an interface name, for a target that must reply.
fn parse_via(location: &str, via: &str, entry: &TargetParams) -> Result<String, String> {
    ifname::validate(&format!("{location}.via"), via)?;
    if entry.expect != Expect::Reply {
        return Err(format!(
            "{location}.via: {via} given with expect: {}; via is the interface a reply \
             target's requests must leave by: set expect: reply, or drop via",
            entry.expect
        ));
    }
    Ok(via.to_string())
}

/// A peer: an echo that must be answered, in the workload's own subnet, its way out named.
fn check_peer(
    location: &str,
    entry: &TargetParams,
    target: IpAddr,
    address: IpNet,
) -> Result<(), String> {
    if entry.proto != Proto::Icmp {
        return Err(format!(
            "{location}.peer: true with proto: {}; a peer is another node's workload, which \
             answers echoes only: set proto: icmp, or drop peer",
            entry.proto
        ));
    }
    if entry.expect != Expect::Reply {
        return Err(format!(
            "{location}.peer: true with expect: {}; a peer proves that the fabric carries the \
             subnet between the nodes, so it must answer: set expect: reply, or drop peer",
            entry.expect
        ));
    }
    if !address.contains(&target) {
        return Err(format!(
            "{location}.peer: true but {target} is outside the workload's subnet {}; a peer is \
             another node's workload in the same subnet: give its address there, or drop peer",
            address.trunc()
        ));
    }
    if entry.via.is_none() {
        return Err(format!(
            "{location}.via: missing for the peer {target}; its replies prove the fabric only \
             when its requests are seen leaving by the port toward the other node: give via, \
             the VNet's VXLAN port (e.g. vxlan_tdemo0) or a VLAN zone's uplink"
        ));
    }
    Ok(())
}

/// `size`: a number of bytes or `mtu`, for an ICMP target that must reply.
fn parse_size(location: &str, text: &str, entry: &TargetParams) -> Result<Size, String> {
    if entry.proto != Proto::Icmp {
        return Err(format!(
            "{location}.size: {text} given for a {} target; full-size probes are ICMP echoes \
             with DF set: set proto: icmp, or drop size",
            entry.proto
        ));
    }
    if entry.expect != Expect::Reply {
        return Err(format!(
            "{location}.size: {text} given with expect: {}; a full-size probe judges arrival: \
             set expect: reply, or drop size",
            entry.expect
        ));
    }
    if text == "mtu" {
        return Ok(Size::Mtu);
    }
    match text.parse::<u32>() {
        Ok(bytes) if (u32::from(MIN_SIZE)..=u32::from(MAX_SIZE)).contains(&bytes) => {
            Ok(Size::Bytes(bytes as u16))
        }
        _ => Err(format!(
            "{location}.size: '{text}' is not a probe size; give the IP packet's size in bytes \
             ({MIN_SIZE} to the VNet's MTU, e.g. 1450), or mtu for the VNet's MTU"
        )),
    }
}

/// Why `address` is no single unicast host a probe may go to or come from.
pub fn forbidden_unicast(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => forbidden_unicast_v4(v4),
        IpAddr::V6(v6) => forbidden_unicast_v6(v6),
    }
}

fn forbidden_unicast_v6(address: Ipv6Addr) -> Option<&'static str> {
    if address.is_unspecified() {
        Some("the unspecified address")
    } else if address.is_multicast() {
        Some("a multicast address")
    } else if address.is_loopback() {
        Some("a loopback address")
    } else if address.segments()[0] & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if address.to_ipv4_mapped().is_some() {
        Some("an IPv4-mapped address (give the IPv4 address to an IPv4 probe)")
    } else {
        None
    }
}

fn forbidden_unicast_v4(address: Ipv4Addr) -> Option<&'static str> {
    if address.is_unspecified() {
        Some("the unspecified address")
    } else if address.is_broadcast() {
        Some("the broadcast address")
    } else if address.is_multicast() {
        Some("a multicast address")
    } else if address.is_loopback() {
        Some("a loopback address")
    } else if address.is_link_local() {
        Some("a link-local address")
    } else if address.octets()[0] >= 240 {
        Some("in the reserved range 240.0.0.0/4")
    } else {
        None
    }
}
