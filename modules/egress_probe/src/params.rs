//! What the operator asked for: the module's options, declared once ([`SPEC`], [`Params`]), and
//! the [`Request`] they make once each is checked on its own (no kernel needed). Checks against
//! the node (does the VRF exist, is the address free) are in `tenant.rs`.

use deevnet_runtime::ifname;
use deevnet_runtime::spec::{DefaultValue, IntRange};
use deevnet_runtime::{CheckModeFindings, Kind, OptionSpec, CHECK_MODE_FINDINGS};
use ipnet::Ipv4Net;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr};

/// Probes per target, and the bound on them: the module sends only this much.
pub const COUNT_RANGE: IntRange = IntRange::new(1, 20, "a number of probes per target")
    .because("the probe stays short and bounded");
/// Seconds to wait for each reply.
pub const TIMEOUT_RANGE: IntRange = IntRange::new(1, 30, "a number of seconds per reply")
    .because("the probe stays short and bounded");
/// Targets per run.
pub const MAX_TARGETS: usize = 32;
/// Seconds a run may wait for answers in all (count × timeout, summed over the targets): one
/// target's largest count and timeout fit, many targets share it. The setup adds a few
/// seconds (the ARP check, the workload's link).
pub const MAX_WAIT_SECS: u32 = 600;
/// The `vrf` value for VNets in the main table (a Proxmox `simple` zone has no VRF device).
pub const DEFAULT_VRF: &str = "default";
/// The port a `udp` target gets without one: the probe is a DNS query.
pub const DNS_PORT: u16 = 53;

static TARGET_OPTIONS: [OptionSpec; 4] = [
    OptionSpec::new("address", Kind::Str).required(),
    OptionSpec::new("proto", Kind::Str)
        .choices(Proto::CHOICES)
        .default(DefaultValue::Str("icmp")),
    OptionSpec::new("port", Kind::Int),
    OptionSpec::new("expect", Kind::Str)
        .choices(Expect::CHOICES)
        .default(DefaultValue::Str("reply")),
];
static TARGET: OptionSpec = OptionSpec::new("target", Kind::Dict(&TARGET_OPTIONS));
static INTERFACE_NAME: OptionSpec = OptionSpec::new("interface", Kind::Str);

/// Every option of the module, in the order `--argument-spec` prints them.
pub static SPEC: [OptionSpec; 10] = [
    OptionSpec::new("vrf", Kind::Str).required(),
    OptionSpec::new("address", Kind::Str).required(),
    OptionSpec::new("targets", Kind::List(&TARGET)).required(),
    OptionSpec::new("vnet", Kind::Str),
    OptionSpec::new("gateway", Kind::Str),
    OptionSpec::new("count", Kind::Int).default(DefaultValue::Int(3)),
    OptionSpec::new("timeout", Kind::Int).default(DefaultValue::Int(2)),
    OptionSpec::new("forbidden_interfaces", Kind::List(&INTERFACE_NAME)),
    OptionSpec::new("expect_egress_interface", Kind::Str),
    CHECK_MODE_FINDINGS,
];

/// The module's arguments, as the runtime validated and coerced them.
#[derive(Debug, Clone, Deserialize)]
pub struct Params {
    pub vrf: String,
    pub address: String,
    pub targets: Vec<TargetParams>,
    pub vnet: Option<String>,
    pub gateway: Option<String>,
    pub count: i64,
    pub timeout: i64,
    pub forbidden_interfaces: Option<Vec<String>>,
    pub expect_egress_interface: Option<String>,
    pub check_mode_findings: CheckModeFindings,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TargetParams {
    pub address: String,
    pub proto: Proto,
    pub port: Option<i64>,
    pub expect: Expect,
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
}
}

/// One destination to probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub address: Ipv4Addr,
    pub proto: Proto,
    /// `None` for ICMP.
    pub port: Option<u16>,
    pub expect: Expect,
}

impl Target {
    /// `203.0.113.8 tcp/443`, `203.0.113.8 icmp`: how messages name it.
    pub fn label(&self) -> String {
        match self.port {
            Some(port) => format!("{} {}/{port}", self.address, self.proto),
            None => format!("{} {}", self.address, self.proto),
        }
    }
}

/// The options, each checked on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub vrf: String,
    /// The workload's address with the prefix length of its subnet.
    pub address: Ipv4Net,
    pub targets: Vec<Target>,
    pub vnet: Option<String>,
    pub gateway: Option<Ipv4Addr>,
    pub count: u32,
    pub timeout_secs: u32,
    pub forbidden_interfaces: Option<Vec<String>>,
    pub expect_egress_interface: Option<String>,
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
        let wait = u64::from(count) * u64::from(timeout_secs) * params.targets.len() as u64;
        if wait > u64::from(MAX_WAIT_SECS) {
            return Err(format!(
                "count: {count} and timeout: {timeout_secs} with {} targets may wait {wait} s \
                 for answers, more than the {MAX_WAIT_SECS} s a run may; lower count or \
                 timeout, or split targets over more egress_probe tasks",
                params.targets.len()
            ));
        }
        let mut targets: Vec<Target> = Vec::with_capacity(params.targets.len());
        for (i, entry) in params.targets.iter().enumerate() {
            let target = parse_target(&format!("targets[{i}]"), entry, address)?;
            if targets.contains(&target) {
                return Err(format!(
                    "targets[{i}]: {} is listed twice; give each target once (count sets how \
                     many probes each gets)",
                    target.label()
                ));
            }
            targets.push(target);
        }
        if let Some(vnet) = &params.vnet {
            ifname::validate("vnet", vnet)?;
        }
        if let Some(egress) = &params.expect_egress_interface {
            ifname::validate("expect_egress_interface", egress)?;
        }
        if let Some(forbidden) = &params.forbidden_interfaces {
            for (i, name) in forbidden.iter().enumerate() {
                ifname::validate(&format!("forbidden_interfaces[{i}]"), name)?;
                if params.expect_egress_interface.as_deref() == Some(name.as_str()) {
                    return Err(format!(
                        "forbidden_interfaces[{i}]: {name} is also expect_egress_interface; \
                         traffic cannot both be expected and forbidden there: drop it from one"
                    ));
                }
            }
        }
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
        })
    }
}

fn parse_address(text: &str) -> Result<Ipv4Net, String> {
    let example = "e.g. 10.20.129.250/24: an unused address in the tenant's subnet, with \
                   the subnet's prefix length";
    let net: ipnet::IpNet = text.parse().map_err(|_| {
        if text.parse::<IpAddr>().is_ok() {
            format!("address: '{text}' has no prefix length; give it as {example}")
        } else {
            format!("address: '{text}' is not an address with prefix length; give it as {example}")
        }
    })?;
    let ipnet::IpNet::V4(net) = net else {
        return Err(format!(
            "address: '{text}' is IPv6; this module probes IPv4 egress only (the tenant SNAT \
             path); give an IPv4 address, {example}"
        ));
    };
    if net.prefix_len() > 30 {
        return Err(format!(
            "address: '{text}' has a /{} prefix: the workload needs a subnet with room for \
             itself and the gateway (/30 or shorter); give the subnet's own prefix length",
            net.prefix_len()
        ));
    }
    let host = net.addr();
    if host == net.network() || host == net.broadcast() {
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

fn parse_gateway(text: &str, address: Ipv4Net) -> Result<Ipv4Addr, String> {
    let gateway: Ipv4Addr = text.parse().map_err(|_| {
        format!(
            "gateway: '{text}' is not an IPv4 address; give the node's address on the VNet \
             (e.g. 10.20.129.1), or leave gateway out to use it"
        )
    })?;
    if !address.contains(&gateway) || gateway == address.network() || gateway == address.broadcast()
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

fn parse_target(location: &str, entry: &TargetParams, address: Ipv4Net) -> Result<Target, String> {
    let target: Ipv4Addr = entry.address.parse().map_err(|_| {
        format!(
            "{location}.address: '{}' is not an IPv4 address; give one, e.g. 203.0.113.8 (no \
             names: the probe must not depend on DNS)",
            entry.address
        )
    })?;
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
    if address.prefix_len() < 31 && target == address.broadcast() {
        return Err(format!(
            "{location}.address: {target} is the broadcast address of the workload's subnet \
             {}; probes go to one unicast host only",
            address.trunc()
        ));
    }
    let port =
        match (entry.proto, entry.port) {
            (Proto::Icmp, Some(port)) => {
                return Err(format!(
                    "{location}.port: {port} given for an icmp target; ICMP has no ports: drop \
                 port, or set proto: tcp or udp"
                ))
            }
            (Proto::Icmp, None) => None,
            (Proto::Tcp, None) => {
                return Err(format!(
                    "{location}.port: a tcp target needs the port to complete a handshake with, \
                 e.g. port: 443"
                ))
            }
            (Proto::Udp, None) => Some(DNS_PORT),
            (_, Some(port)) => Some(u16::try_from(port).ok().filter(|p| *p != 0).ok_or_else(
                || format!("{location}.port: {port} is not a port; give one from 1 to 65535"),
            )?),
        };
    Ok(Target {
        address: target,
        proto: entry.proto,
        port,
        expect: entry.expect,
    })
}

/// Why `address` is no single unicast host a probe may go to or come from.
pub fn forbidden_unicast(address: Ipv4Addr) -> Option<&'static str> {
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
