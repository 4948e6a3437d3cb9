//! The logic of `qinq_check`, apart from its netlink I/O, so that it runs on recorded data:
//! what the operator asked for ([`Request`]), the uplink stack it names, found in the node's
//! links or refused as bad input ([`Stack::resolve`]), and each check on what the kernel
//! reported ([`evaluate`]).

pub mod vlan_set;

use deevnet_runtime::ifname;
use deevnet_runtime::netlink::ethtool::{Feature, TX_VLAN_HW_INSERT, TX_VLAN_STAG_HW_INSERT};
use deevnet_runtime::netlink::{
    BondRole, FdbEntry, FdbState, Link, LinkExtra, Links, OperState, PortVlans, VlanProtocol,
};
use serde::Serialize;
use std::collections::BTreeMap;
use vlan_set::VlanSet;

/// The inner tag travels as payload inside the outer VLAN.
pub const TAG_LEN: u32 = 4;
/// The smallest MTU IPv4 allows.
pub const MIN_MTU: u32 = 68;

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
}

/// The options as they arrive, before validation.
#[derive(Debug, Clone, Default)]
pub struct RawRequest {
    pub bond: String,
    pub uplink_vlan: i64,
    pub bridge: String,
    pub vlans: Vec<String>,
    pub zone_mtu: Option<i64>,
    pub trunk_interfaces: Vec<String>,
    /// (mac, vlan) of each `peers` entry.
    pub peers: Vec<(String, i64)>,
}

impl Request {
    /// Checks every option on its own; the error names the option, the value and the fix.
    pub fn validate(raw: &RawRequest) -> Result<Request, String> {
        ifname::validate("bond", &raw.bond)?;
        ifname::validate("bridge", &raw.bridge)?;
        for name in &raw.trunk_interfaces {
            ifname::validate("trunk_interfaces", name)?;
        }
        let uplink_vlan = vlan_id("uplink_vlan", raw.uplink_vlan)?;
        let vlans = VlanSet::parse("vlans", &raw.vlans)?;
        // The outer VLAN among the inner ones is legal (the tags live on different layers),
        // but a zone of nothing but the outer VLAN is a slip.
        if vlans.len() == 1 && vlans.contains(uplink_vlan) {
            return Err(format!(
                "vlans: {vlans} is the outer VLAN (uplink_vlan={uplink_vlan}) itself; give the zone's inner VLANs, e.g. \"199-299\""
            ));
        }
        let zone_mtu = match raw.zone_mtu {
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
        let mut peers = Vec::with_capacity(raw.peers.len());
        for (i, (mac, vlan)) in raw.peers.iter().enumerate() {
            peers.push(Peer {
                mac: normalise_mac(&format!("peers[{i}].mac"), mac)?,
                vlan: vlan_id(&format!("peers[{i}].vlan"), *vlan)?,
            });
        }
        Ok(Request {
            bond: raw.bond.clone(),
            uplink_vlan,
            bridge: raw.bridge.clone(),
            vlans,
            zone_mtu,
            trunk_interfaces: raw.trunk_interfaces.clone(),
            peers,
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

/// The links the request names, found in the node's links. Everything here must hold before
/// the module looks further or changes anything.
#[derive(Debug, Clone)]
pub struct Stack {
    pub bond: Link,
    pub uplink: Link,
    pub bridge: Link,
    /// The bond's ports, with their role.
    pub slaves: Vec<(Link, Option<BondRole>)>,
    pub trunks: Vec<Link>,
    pub bond_mode: Option<String>,
}

impl Stack {
    /// Finds the bond, its VLAN device with id `uplink_vlan`, the bridge and the trunk ports;
    /// refuses a request that names something else, and a `zone_mtu` no hop could ever carry.
    pub fn resolve(
        request: &Request,
        links: &Links,
        extras: &BTreeMap<u32, LinkExtra>,
    ) -> Result<Stack, String> {
        let bond = existing(links, "bond", &request.bond)?;
        let bond_info = extras.get(&bond.index).and_then(|e| e.bond.as_ref());
        if bond.kind.as_deref() != Some("bond") {
            return Err(format!(
                "bond: {} is {}, not a bond; give the bond that carries the uplink (its slaves are the NICs), e.g. bond0",
                bond.name,
                kind_phrase(bond)
            ));
        }
        let uplink = find_uplink(request, links, bond)?;
        let bridge = existing(links, "bridge", &request.bridge)?;
        if bridge.kind.as_deref() != Some("bridge") {
            return Err(format!(
                "bridge: {} is {}, not a bridge; give the VLAN-aware bridge the uplink is a port of, e.g. vmbr1",
                bridge.name,
                kind_phrase(bridge)
            ));
        }
        let mut trunks = Vec::new();
        for name in &request.trunk_interfaces {
            trunks.push(existing(links, "trunk_interfaces", name)?.clone());
        }
        let slaves: Vec<(Link, Option<BondRole>)> = links
            .ports_of(bond.index)
            .map(|slave| {
                let extra = extras.get(&slave.index);
                let mut role = extra
                    .and_then(|e| e.bond_port.as_ref())
                    .and_then(|p| p.role);
                if role.is_none() {
                    role = bond_info.and_then(|b| b.active_port).map(|active| {
                        if active == slave.index {
                            BondRole::Active
                        } else {
                            BondRole::Backup
                        }
                    });
                }
                (slave.clone(), role)
            })
            .collect();
        let stack = Stack {
            bond: bond.clone(),
            uplink: uplink.clone(),
            bridge: bridge.clone(),
            slaves,
            trunks,
            bond_mode: bond_info.and_then(|b| b.mode.clone()),
        };
        if let Some(zone_mtu) = request.zone_mtu {
            for hop in stack.hops(zone_mtu) {
                let max = extras.get(&hop.link.index).and_then(|e| e.max_mtu);
                // Some drivers report 0: no limit known.
                if let Some(max) = max.filter(|&max| max > 0 && hop.required > max) {
                    return Err(format!(
                        "zone_mtu: {zone_mtu} cannot be carried: {} ({}) accepts an MTU of at most {max}, and it needs {} ({}); lower zone_mtu to {} or less",
                        hop.link.name,
                        hop.role,
                        hop.required,
                        hop.why,
                        zone_mtu.saturating_sub(hop.required - max)
                    ));
                }
            }
        }
        Ok(stack)
    }

    /// Every hop the zone's frames cross, with the MTU it needs for a zone MTU of `zone_mtu`.
    pub fn hops(&self, zone_mtu: u32) -> Vec<Hop<'_>> {
        let outer = zone_mtu + TAG_LEN;
        let mut hops = vec![
            Hop::new(
                &self.uplink,
                "uplink VLAN device",
                outer,
                "zone MTU + 4, the inner tag is payload",
            ),
            Hop::new(
                &self.bond,
                "bond",
                outer,
                "it carries the uplink VLAN device",
            ),
        ];
        for (slave, _) in &self.slaves {
            hops.push(Hop::new(slave, "bond slave", outer, "it carries the bond"));
        }
        hops.push(Hop::new(
            &self.bridge,
            "zone bridge",
            zone_mtu,
            "the zone MTU",
        ));
        for trunk in &self.trunks {
            hops.push(Hop::new(trunk, "trunk", zone_mtu, "the zone MTU"));
        }
        hops
    }

    /// The offload that would overwrite the inner tag: 802.1Q insertion for an 802.1Q outer
    /// VLAN, 802.1ad (S-tag) insertion for an 802.1ad one.
    pub fn txvlan_feature(&self) -> &'static str {
        match self.uplink.vlan.and_then(|v| v.protocol) {
            Some(VlanProtocol::Dot1Ad) => TX_VLAN_STAG_HW_INSERT,
            _ => TX_VLAN_HW_INSERT,
        }
    }
}

/// One hop of the zone's path and the MTU it needs.
#[derive(Debug, Clone)]
pub struct Hop<'a> {
    pub link: &'a Link,
    pub role: &'static str,
    pub required: u32,
    pub why: &'static str,
}

impl<'a> Hop<'a> {
    fn new(link: &'a Link, role: &'static str, required: u32, why: &'static str) -> Self {
        Hop {
            link,
            role,
            required,
            why,
        }
    }
}

fn existing<'a>(links: &'a Links, parameter: &str, name: &str) -> Result<&'a Link, String> {
    links.by_name(name).ok_or_else(|| {
        format!("{parameter}: there is no interface {name} on this node; check the name with `ip link`, or create it first")
    })
}

fn kind_phrase(link: &Link) -> String {
    match link.kind.as_deref() {
        Some(kind) => format!("a {kind} device"),
        None => "a physical NIC (no link kind)".into(),
    }
}

fn find_uplink<'a>(request: &Request, links: &'a Links, bond: &Link) -> Result<&'a Link, String> {
    let vlan_devices: Vec<&Link> = links
        .iter()
        .filter(|l| l.kind.as_deref() == Some("vlan") && l.parent == Some(bond.index))
        .collect();
    if let Some(found) = vlan_devices
        .iter()
        .find(|l| l.vlan.map(|v| v.id) == Some(request.uplink_vlan))
    {
        return Ok(found);
    }
    let expected = format!("{}.{}", bond.name, request.uplink_vlan);
    let others: Vec<String> = vlan_devices
        .iter()
        .map(|l| format!("{} (id {})", l.name, l.vlan.map(|v| v.id).unwrap_or(0)))
        .collect();
    let found = if others.is_empty() {
        format!("{} has no VLAN device at all", bond.name)
    } else {
        format!("{}'s VLAN devices: {}", bond.name, others.join(", "))
    };
    let same_name = match links.by_name(&expected) {
        Some(link) => format!("; {expected} exists but is {}", describe_vlan(link, links)),
        None => String::new(),
    };
    Err(format!(
        "uplink_vlan: there is no VLAN device with id {} on {} ({found}{same_name}); create it (ip link add link {} name {expected} type vlan id {}) or fix uplink_vlan",
        request.uplink_vlan, bond.name, bond.name, request.uplink_vlan
    ))
}

fn describe_vlan(link: &Link, links: &Links) -> String {
    match (&link.vlan, link.parent) {
        (Some(vlan), Some(parent)) => format!("VLAN {} on {}", vlan.id, links.name_of(parent)),
        _ => kind_phrase(link),
    }
}

/// What the module read from the node, beyond the links.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    pub port_vlans: Vec<PortVlans>,
    pub fdb: Vec<FdbEntry>,
    /// Each slave's driver and txvlan feature, by slave name.
    pub slaves: BTreeMap<String, SlaveState>,
    /// `net.ipv6.conf.BRIDGE.disable_ipv6`; `None` when the kernel has no IPv6.
    pub bridge_disable_ipv6: Option<String>,
}

/// One bond slave's driver and the state of the feature that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlaveState {
    pub driver: Option<String>,
    pub feature: Feature,
    /// This run switched it off (or would, in check mode).
    pub changed: bool,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub expected: String,
    pub actual: String,
    /// What to do about a failure; empty when ok.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

impl Check {
    fn new(
        name: impl Into<String>,
        ok: bool,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        Check {
            name: name.into(),
            ok,
            expected: expected.into(),
            actual: actual.into(),
            fix: String::new(),
        }
    }
    fn fix_with(mut self, fix: impl Into<String>) -> Self {
        if !self.ok {
            self.fix = fix.into();
        }
        self
    }
    /// The line of the failure message.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{}: expected {}, found {}",
            self.name, self.expected, self.actual
        );
        if !self.fix.is_empty() {
            line.push_str("; ");
            line.push_str(&self.fix);
        }
        line
    }
}

/// `slaves` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlaveReport {
    pub name: String,
    pub driver: Option<String>,
    pub role: Option<&'static str>,
    pub feature: &'static str,
    pub enabled: bool,
    pub fixed: bool,
    pub changed: bool,
}

/// One hop in `mtu.hops`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HopReport {
    pub role: &'static str,
    pub mtu: Option<u32>,
    pub required: u32,
}

/// `mtu` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MtuReport {
    /// The requested zone MTU, or `null` when not given.
    pub zone_mtu: Option<u32>,
    /// What the uplink VLAN device allows the zone: its MTU minus the inner tag.
    pub uplink_allows: Option<u32>,
    pub hops: BTreeMap<String, HopReport>,
}

/// One MAC learned through the uplink without its inner tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostTag {
    pub mac: String,
    /// The VLAN it was learned in; `null` when the bridge learned it without one.
    pub vlan: Option<u16>,
}

/// Everything the module reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    pub slaves: Vec<SlaveReport>,
    pub mtu: MtuReport,
    pub fdb_vlan1: Vec<LostTag>,
}

impl Report {
    pub fn failures(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| !c.ok).collect()
    }

    /// The names of the failed checks, in order.
    pub fn failed_names(&self) -> Vec<&str> {
        self.failures().iter().map(|c| c.name.as_str()).collect()
    }
}

/// Runs every check on what was read.
pub fn evaluate(request: &Request, stack: &Stack, observed: &Observed) -> Report {
    let mut checks = Vec::new();
    let uplink_port = observed
        .port_vlans
        .iter()
        .find(|p| p.index == stack.uplink.index);
    check_stack(request, stack, uplink_port, &mut checks);
    let slaves = check_slaves(stack, observed, &mut checks);
    let mtu = check_mtu(request, stack, &mut checks);
    check_trunks(request, stack, observed, &mut checks);
    let fdb_vlan1 = check_fdb(request, stack, observed, uplink_port, &mut checks);
    check_ipv6(stack, observed, &mut checks);
    Report {
        checks,
        slaves,
        mtu,
        fdb_vlan1,
    }
}

fn check_stack(
    request: &Request,
    stack: &Stack,
    uplink_port: Option<&PortVlans>,
    checks: &mut Vec<Check>,
) {
    let uplink = &stack.uplink;
    let protocol = uplink
        .vlan
        .and_then(|v| v.protocol)
        .map(|p| p.name())
        .unwrap_or("unknown-protocol");
    let up = uplink.admin_up && matches!(uplink.oper_state, OperState::Up | OperState::Unknown);
    checks.push(
        Check::new(
            "uplink_device",
            up,
            format!(
                "{} up, a VLAN device with id {} on {}",
                uplink.name, request.uplink_vlan, stack.bond.name
            ),
            format!(
                "{} {protocol} id {} on {}, {}{}",
                uplink.name,
                request.uplink_vlan,
                stack.bond.name,
                if uplink.admin_up {
                    "admin up"
                } else {
                    "admin down"
                },
                format_args!(", oper {}", uplink.oper_state.name())
            ),
        )
        .fix_with(format!(
            "bring it up: ip link set {} up (and {} with its slaves)",
            uplink.name, stack.bond.name
        )),
    );

    let controller = uplink.controller;
    checks.push(
        Check::new(
            "uplink_bridge_port",
            controller == Some(stack.bridge.index),
            format!("{} a port of {}", uplink.name, stack.bridge.name),
            match controller {
                Some(index) if index == stack.bridge.index => {
                    format!("a port of {}", stack.bridge.name)
                }
                Some(index) => format!("a port of ifindex {index}, not of {}", stack.bridge.name),
                None => "a port of no bridge".into(),
            },
        )
        .fix_with(format!(
            "ip link set {} master {}",
            uplink.name, stack.bridge.name
        )),
    );

    let filtering = stack.bridge.bridge.and_then(|b| b.vlan_filtering);
    checks.push(
        Check::new(
            "vlan_filtering",
            filtering == Some(true),
            format!("{} VLAN-aware (vlan_filtering 1)", stack.bridge.name),
            match filtering {
                Some(true) => "vlan_filtering 1".to_string(),
                Some(false) => "vlan_filtering 0: the bridge ignores the inner tags".to_string(),
                None => "no VLAN filtering reported: this kernel's bridge has no VLAN filtering".to_string(),
            },
        )
        .fix_with(format!(
            "set bridge-vlan-aware yes on {} in /etc/network/interfaces and ifreload -a (or: ip link set {} type bridge vlan_filtering 1)",
            stack.bridge.name, stack.bridge.name
        )),
    );

    checks.push(port_vlans_check(
        "uplink_vlans",
        request,
        uplink,
        uplink_port,
    ));
}

fn port_vlans_check(
    name: &str,
    request: &Request,
    port: &Link,
    vlans: Option<&PortVlans>,
) -> Check {
    let empty = PortVlans::default();
    let vlans = vlans.unwrap_or(&empty);
    let missing = request.vlans.missing_on(vlans);
    let untagged = request.vlans.untagged_on(vlans);
    let carried: Vec<String> = vlans
        .vlans
        .iter()
        .map(|v| {
            let range = if v.start == v.end {
                v.start.to_string()
            } else {
                format!("{}-{}", v.start, v.end)
            };
            match (v.pvid, v.untagged) {
                (true, true) => format!("{range} (PVID, untagged)"),
                (true, false) => format!("{range} (PVID)"),
                (false, true) => format!("{range} (untagged)"),
                (false, false) => range,
            }
        })
        .collect();
    let mut actual = if carried.is_empty() {
        "no VLAN".to_string()
    } else {
        carried.join(", ")
    };
    if !missing.is_empty() {
        actual.push_str(&format!("; missing {missing}"));
    }
    if !untagged.is_empty() {
        actual.push_str(&format!("; sent untagged {untagged}"));
    }
    let mut fixes = Vec::new();
    if !missing.is_empty() {
        fixes.push(format!(
            "bridge vlan add dev {} vid {missing} (bridge-vids in /etc/network/interfaces)",
            port.name
        ));
    }
    if !untagged.is_empty() {
        fixes.push(format!(
            "bridge vlan add dev {} vid {untagged} (tagged: without 'untagged')",
            port.name
        ));
    }
    Check::new(
        name,
        missing.is_empty() && untagged.is_empty(),
        format!("{} carries {} tagged", port.name, request.vlans),
        actual,
    )
    .fix_with(fixes.join("; "))
}

fn check_slaves(stack: &Stack, observed: &Observed, checks: &mut Vec<Check>) -> Vec<SlaveReport> {
    let feature = stack.txvlan_feature();
    checks.push(
        Check::new(
            "bond_slaves",
            !stack.slaves.is_empty(),
            format!("{} has at least one slave", stack.bond.name),
            if stack.slaves.is_empty() {
                "no slave".to_string()
            } else {
                let names: Vec<&str> = stack.slaves.iter().map(|(l, _)| l.name.as_str()).collect();
                format!(
                    "{} ({})",
                    names.join(", "),
                    stack.bond_mode.as_deref().unwrap_or("mode unknown")
                )
            },
        )
        .fix_with(format!(
            "enslave the uplink NICs: ip link set NIC master {}",
            stack.bond.name
        )),
    );
    let mut reports = Vec::new();
    for (slave, role) in &stack.slaves {
        let state = observed.slaves.get(&slave.name);
        let role_name = role.map(|r| r.name());
        let driver = state.and_then(|s| s.driver.clone());
        let who = format!(
            "{} ({}, driver {})",
            slave.name,
            role_name.unwrap_or("role unknown"),
            driver.as_deref().unwrap_or("unknown")
        );
        let (ok, actual, fix) = match state {
            None => (false, format!("{who}: not read"), String::new()),
            Some(s) if !s.feature.active => (
                true,
                format!("{who}: off{}", if s.changed { " (switched off by this run)" } else { "" }),
                String::new(),
            ),
            Some(s) if s.feature.changeable => (
                false,
                format!("{who}: on"),
                format!("run with fix_txvlan=true, or ethtool -K {} txvlan off (persist it, e.g. in a post-up line)", slave.name),
            ),
            Some(_) => (
                false,
                format!("{who}: on [fixed]"),
                format!("the driver cannot switch it off: move {} to a NIC whose driver can", slave.name),
            ),
        };
        checks.push(
            Check::new(
                format!("txvlan:{}", slave.name),
                ok,
                format!("{feature} off"),
                actual,
            )
            .fix_with(fix),
        );
        reports.push(SlaveReport {
            name: slave.name.clone(),
            driver,
            role: role_name,
            feature,
            enabled: state.is_some_and(|s| s.feature.active),
            fixed: state.is_some_and(|s| !s.feature.changeable),
            changed: state.is_some_and(|s| s.changed),
        });
    }
    reports
}

fn check_mtu(request: &Request, stack: &Stack, checks: &mut Vec<Check>) -> MtuReport {
    let uplink_allows = stack.uplink.mtu.map(|m| m.saturating_sub(TAG_LEN));
    if let Some(zone_mtu) = request.zone_mtu {
        checks.push(
            Check::new(
                "zone_mtu",
                uplink_allows.is_some_and(|a| a >= zone_mtu),
                format!(
                    "{} allows a zone MTU of at least {zone_mtu}",
                    stack.uplink.name
                ),
                match (stack.uplink.mtu, uplink_allows) {
                    (Some(mtu), Some(allows)) => format!("MTU {mtu}, which allows {allows}"),
                    _ => "no MTU reported".to_string(),
                },
            )
            .fix_with(format!(
                "raise the MTU of {} (and {} with its slaves) to {}, or lower zone_mtu to {}",
                stack.uplink.name,
                stack.bond.name,
                zone_mtu + TAG_LEN,
                uplink_allows.unwrap_or(0)
            )),
        );
    }
    let zone_mtu = request.zone_mtu.or(uplink_allows).unwrap_or(0);
    let mut hops = BTreeMap::new();
    for hop in stack.hops(zone_mtu) {
        let ok = hop.link.mtu.is_some_and(|m| m >= hop.required);
        checks.push(
            Check::new(
                format!("mtu:{}", hop.link.name),
                ok,
                format!(
                    "MTU of {} ({}) at least {} ({})",
                    hop.link.name, hop.role, hop.required, hop.why
                ),
                match hop.link.mtu {
                    Some(mtu) => format!("{mtu}"),
                    None => "no MTU reported".to_string(),
                },
            )
            .fix_with(format!(
                "ip link set {} mtu {} (and mtu in /etc/network/interfaces)",
                hop.link.name, hop.required
            )),
        );
        hops.insert(
            hop.link.name.clone(),
            HopReport {
                role: hop.role,
                mtu: hop.link.mtu,
                required: hop.required,
            },
        );
    }
    MtuReport {
        zone_mtu: request.zone_mtu,
        uplink_allows,
        hops,
    }
}

fn check_trunks(request: &Request, stack: &Stack, observed: &Observed, checks: &mut Vec<Check>) {
    for trunk in &stack.trunks {
        checks.push(
            Check::new(
                format!("trunk_bridge_port:{}", trunk.name),
                trunk.controller == Some(stack.bridge.index),
                format!("{} a port of {}", trunk.name, stack.bridge.name),
                match trunk.controller {
                    Some(i) if i == stack.bridge.index => {
                        format!("a port of {}", stack.bridge.name)
                    }
                    Some(i) => format!("a port of ifindex {i}"),
                    None => "a port of no bridge".to_string(),
                },
            )
            .fix_with(format!(
                "ip link set {} master {}",
                trunk.name, stack.bridge.name
            )),
        );
        let vlans = observed.port_vlans.iter().find(|p| p.index == trunk.index);
        checks.push(port_vlans_check(
            &format!("trunk_vlans:{}", trunk.name),
            request,
            trunk,
            vlans,
        ));
    }
}

fn check_fdb(
    request: &Request,
    stack: &Stack,
    observed: &Observed,
    uplink_port: Option<&PortVlans>,
    checks: &mut Vec<Check>,
) -> Vec<LostTag> {
    // Frames that lost their inner tag are classified into the uplink's PVID (VLAN 1 unless
    // changed), or carry no VLAN at all on a bridge that does not filter.
    let pvid = uplink_port.and_then(|p| p.pvid());
    let lost_tag_vlan = |vlan: Option<u16>| match vlan {
        None => true,
        Some(vid) => !request.vlans.contains(vid) && (vid == 1 || Some(vid) == pvid),
    };
    let learned_on_uplink =
        |entry: &&FdbEntry| entry.port == stack.uplink.index && entry.state == FdbState::Learned;
    let mut lost: Vec<LostTag> = observed
        .fdb
        .iter()
        .filter(learned_on_uplink)
        .filter(|e| lost_tag_vlan(e.vlan))
        .map(|e| LostTag {
            mac: e.mac.clone(),
            vlan: e.vlan,
        })
        .collect();
    lost.sort_by(|a, b| (a.vlan, &a.mac).cmp(&(b.vlan, &b.mac)));
    lost.dedup();
    let listed: Vec<String> = lost
        .iter()
        .map(|l| match l.vlan {
            Some(vid) => format!("{} in VLAN {vid}", l.mac),
            None => format!("{} without VLAN", l.mac),
        })
        .collect();
    checks.push(
        Check::new(
            "fdb_vlan1",
            lost.is_empty(),
            format!(
                "no MAC learned through {} in VLAN {} or untagged",
                stack.uplink.name,
                pvid.filter(|&p| p != 1).map(|p| format!("1/{p}")).unwrap_or_else(|| "1".into())
            ),
            if listed.is_empty() { "none".to_string() } else { listed.join(", ") },
        )
        .fix_with(
            "the far side's frames arrive without their inner tag: switch txvlan off on every slave of the far host's bond (this module with fix_txvlan=true there)",
        ),
    );

    for peer in &request.peers {
        let seen: Vec<&FdbEntry> = observed
            .fdb
            .iter()
            .filter(|e| e.mac == peer.mac && e.state != FdbState::Local)
            .collect();
        let on_uplink: Vec<&FdbEntry> = seen
            .iter()
            .copied()
            .filter(|e| e.port == stack.uplink.index)
            .collect();
        let ok = on_uplink.iter().any(|e| e.vlan == Some(peer.vlan));
        let actual = if seen.is_empty() {
            "not in the forwarding database (no traffic from it lately?)".to_string()
        } else {
            let places: Vec<String> = seen
                .iter()
                .map(|e| {
                    let vlan = e
                        .vlan
                        .map(|v| format!("VLAN {v}"))
                        .unwrap_or_else(|| "no VLAN".into());
                    let port = if e.port == stack.uplink.index {
                        stack.uplink.name.clone()
                    } else {
                        format!("ifindex {}", e.port)
                    };
                    format!("{vlan} on {port}")
                })
                .collect();
            places.join(", ")
        };
        checks.push(
            Check::new(
                format!("peer:{}", peer.mac),
                ok,
                format!("learned through {} in VLAN {}", stack.uplink.name, peer.vlan),
                actual,
            )
            .fix_with(if on_uplink.iter().any(|e| lost_tag_vlan(e.vlan)) {
                "its frames arrive without their inner tag: switch txvlan off on the far host's bond slaves"
            } else {
                "make the peer send (ping it), then check its VLAN and the uplink's VLANs"
            }),
        );
    }
    lost
}

fn check_ipv6(stack: &Stack, observed: &Observed, checks: &mut Vec<Check>) {
    let value = observed.bridge_disable_ipv6.as_deref();
    checks.push(
        Check::new(
            "bridge_ipv6",
            value.is_none_or(|v| v == "1"),
            format!(
                "IPv6 disabled on {} (no link-local address on the tenant transport)",
                stack.bridge.name
            ),
            match value {
                None => "IPv6 is not available on this kernel".to_string(),
                Some(v) => format!("net.ipv6.conf.{}.disable_ipv6 = {v}", stack.bridge.name),
            },
        )
        .fix_with(format!(
            "sysctl -w net.ipv6.conf.{}.disable_ipv6=1 (persist it in /etc/sysctl.d)",
            stack.bridge.name
        )),
    );
}

/// The slaves whose feature should be switched off: on, and switchable.
pub fn txvlan_to_switch_off(stack: &Stack, observed: &Observed) -> Vec<String> {
    stack
        .slaves
        .iter()
        .filter_map(|(slave, _)| {
            let state = observed.slaves.get(&slave.name)?;
            (state.feature.active && state.feature.changeable).then(|| slave.name.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests;
