//! Guests kept off the uplink: a guest port on a bridge that enslaves the uplink's parent
//! (`vmbr0` over `bond0`, or over `eno1`) is a trunk onto the wire, on which the guest can set
//! the outer tag itself and reach the zone bridge of every host with any inner tag. A port
//! counts ([`audit`]) unless
//! - the bridge filters VLANs with the uplink's tag protocol and the port carries none of the
//!   host's VLANs (the uplink VLAN and every VLAN device on the parent or on that bridge), or
//! - a bridge-family nftables rule drops both 802.1Q (0x8100) and 802.1ad (0x88a8) frames
//!   arriving on it ([`Ruleset::drops_vlan_frames_from`]).
//!
//! Guest ports are found by Proxmox VE's names: `tap<vmid>i<n>` (a VM's NIC),
//! `veth<vmid>i<n>` (a container's), and the firewall's `fwpr<vmid>p<n>` (its bridge's port in
//! the bridge) and `fwln<vmid>i<n>` (or `o<n>`, older releases).

use crate::fix::GUEST_NAME_PATTERNS;
use deevnet_runtime::netlink::{Link, Links, PortVlans, VlanProtocol};
use deevnet_runtime::nft::{self, ifname, Chain, Owner, Rule};
use serde::Serialize;
use serde_json::Value;

/// A port name Proxmox VE gives a guest: its kind, the VM (or container) id and the number of
/// its NIC (`net<n>` in the guest's configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestName {
    pub kind: &'static str,
    pub vmid: u32,
    pub nic: u32,
}

/// `tap100i0` -> (tap, 100, net0); `veth101i1`, `fwpr100p0`, `fwln100i0`, `fwln100o0`
/// likewise; any other name is not a guest's.
pub fn guest_name(name: &str) -> Option<GuestName> {
    const PATTERNS: [(&str, &str, &[char]); 4] = [
        ("tap", "tap", &['i']),
        ("veth", "veth", &['i']),
        ("fwpr", "fwpr", &['p']),
        ("fwln", "fwln", &['i', 'o']),
    ];
    PATTERNS.iter().find_map(|(kind, prefix, separators)| {
        let rest = name.strip_prefix(prefix)?;
        let split = rest.find(|c: char| !c.is_ascii_digit())?;
        let (vmid, tail) = rest.split_at(split);
        let mut tail = tail.chars();
        let separator = tail.next()?;
        let index = tail.as_str();
        let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        if !(digits(vmid) && separators.contains(&separator) && digits(index)) {
            return None;
        }
        Some(GuestName {
            kind,
            vmid: vmid.parse().ok()?,
            nic: index.parse().ok()?,
        })
    })
}

/// One guest port that can send tagged frames onto the uplink (`guest_ports` in the result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuestPortFinding {
    pub bridge: String,
    pub port: String,
    /// `tap`, `veth`, `fwpr` or `fwln`.
    pub kind: &'static str,
    pub vmid: u32,
    /// Why VLAN filtering does not keep it off the host's VLANs.
    pub vlans: String,
    /// Why no nftables rule keeps it off.
    pub nftables: String,
    pub fix: String,
}

impl GuestPortFinding {
    /// The finding in one line, for the failure message or a warning.
    pub fn line(&self) -> String {
        format!(
            "guest port {} (VM {}) on {} can send 802.1Q/802.1ad frames onto the uplink ({}; {}); {}",
            self.port, self.vmid, self.bridge, self.vlans, self.nftables, self.fix
        )
    }
}

/// What the module knows of the bridge-family nftables rules.
#[derive(Debug, Clone)]
pub enum Ruleset {
    /// The ruleset in force, as the runtime's reader reads it ([`nft::read_ruleset`]).
    Read(nft::Ruleset),
    /// Not read, and why (no nft binary, one another user could have planted, an error).
    NotRead(String),
}

impl Default for Ruleset {
    fn default() -> Self {
        Ruleset::NotRead("not asked for".into())
    }
}

/// The table `guest_vlan_guard` owns: it is replaced whole, and nothing else is touched.
pub const GUARD_TABLE: &str = "deevnet_guest_vlan";

fn guard_owner() -> Owner {
    Owner {
        family: "bridge".into(),
        table: GUARD_TABLE.into(),
    }
}

/// What `nft` runs to put the guard in place, in one transaction: the table created if
/// missing, deleted, and made again with the rule alone (so a changed or extended table of
/// that name ends up exactly as the guard's).
pub fn guard_commands() -> String {
    format!(
        "add table bridge {GUARD_TABLE}; delete table bridge {GUARD_TABLE}; {}",
        crate::fix::GUEST_VLAN_RULE
    )
}

/// Names of each guest kind, to test a ruleset against the patterns rather than today's ports.
const GUEST_NAME_SAMPLES: [&str; 4] = ["tap0i0", "veth0i0", "fwpr0p0", "fwln0i0"];

/// The two tag types a guest must not send onto the uplink.
const TAG_TYPES: [(&str, u64); 2] = [("8021q", 0x8100), ("8021ad", 0x88a8)];

impl Ruleset {
    /// Whether the guard's table is there as the guard makes it and in force ([`Self::guard_state`]).
    pub fn guard_installed(&self) -> bool {
        self.guard_state().is_ok()
    }

    /// Whether the ruleset lists a table of the guard's name, whatever it holds.
    pub fn has_guard_table(&self) -> bool {
        matches!(self, Ruleset::Read(ruleset) if ruleset.has_table(&guard_owner()))
    }

    /// Whether the guard's table is there as the guard makes it: in force (not dormant), one
    /// chain, one rule per guest name pattern and tag type, dropping both tag types from every
    /// guest name on any bridge. `Err` says why not, and the fix.
    pub fn guard_state(&self) -> Result<(), String> {
        let fix = format!(
            "set guest_vlan_guard=true, which remakes the table, or run: nft '{}'",
            guard_commands()
        );
        let ruleset = match self {
            Ruleset::Read(ruleset) => ruleset,
            Ruleset::NotRead(why) => return Err(format!("nftables not read: {why}")),
        };
        let owner = guard_owner();
        let Some(table) = ruleset.table(&owner) else {
            return Err(format!("table bridge {GUARD_TABLE} is not there; {fix}"));
        };
        if let Some(why) = table.flags.not_in_force() {
            return Err(format!("table bridge {GUARD_TABLE} {why}; {fix}"));
        }
        let alone = ruleset.filtered(|o| o == &owner);
        let table = Ruleset::Read(alone);
        let drops_every_guest = GUEST_NAME_SAMPLES
            .iter()
            .all(|name| table.drops_vlan_frames_from(name, "any0").is_ok());
        let Ruleset::Read(alone) = &table else {
            unreachable!("made as read above")
        };
        if alone.chains.len() == 1
            && alone.rules.len() == GUEST_NAME_PATTERNS.len() * TAG_TYPES.len()
            && drops_every_guest
        {
            Ok(())
        } else {
            Err(format!(
                "table bridge {GUARD_TABLE} is not the guard's rule alone; {fix}"
            ))
        }
    }

    /// The ruleset as it would be once the guard is in place (check mode): the guard's table
    /// instead of any table of that name.
    pub fn with_guard(&self) -> Ruleset {
        let owner = guard_owner();
        let kept = match self {
            Ruleset::Read(ruleset) => ruleset.filtered(|o| o != &owner),
            Ruleset::NotRead(_) => nft::Ruleset::default(),
        };
        Ruleset::Read(kept.merged(guard_ruleset()))
    }

    /// Whether the bridge-family base chains (prerouting, forward) drop both tag types
    /// arriving on `port` of `bridge`. A rule counts only when every match in it is one this
    /// reads (input interface name, input bridge name, ether type) and it ends in `drop`, and no
    /// earlier rule of its chain that may match the port ends in another verdict (accept, jump,
    /// goto, return, queue), which could pass the frame first. Whatever this cannot read leaves
    /// the port counted: the audit may ask for a rule that is not needed, never miss a hole. So
    /// does a name match it cannot settle: a set element nft 1.0.6 prints as `"tap*"` may be
    /// the literal name `tap*` ([`ifname::set_element_matches`]), and `@set` is not read.
    pub fn drops_vlan_frames_from(&self, port: &str, bridge: &str) -> Result<(), String> {
        let ruleset = match self {
            Ruleset::Read(ruleset) => ruleset,
            Ruleset::NotRead(why) => return Err(format!("nftables not read: {why}")),
        };
        let base_chains: Vec<&Chain> = ["prerouting", "forward"]
            .iter()
            .flat_map(|hook| ruleset.base_chains(hook))
            .filter(|(chain, _)| chain.owner.family == "bridge")
            .map(|(chain, _)| chain)
            .collect();
        // A dormant table's chains are not hooked: its rules drop nothing. So are, for this
        // audit, those of a table whose flags cannot be read or that is not listed at all.
        let tables_not_in_force = bridge_tables_not_in_force(ruleset, &base_chains);
        let mut dropped = [false; 2];
        for chain in base_chains {
            if tables_not_in_force
                .iter()
                .any(|(t, _)| *t == chain.owner.table)
            {
                continue;
            }
            for rule in ruleset.rules_of(chain) {
                match read_rule(rule, port, bridge) {
                    RuleEffect::NotForPort => {}
                    RuleEffect::Drops(types) => {
                        for (i, dropped) in dropped.iter_mut().enumerate() {
                            *dropped |= types[i];
                        }
                    }
                    // Frames may leave this chain here, before any later drop.
                    RuleEffect::MayPass => break,
                }
            }
        }
        let found = match dropped {
            [true, true] => return Ok(()),
            [false, false] => {
                "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it".to_string()
            }
            [q, _] => format!(
                "the bridge-family nftables rules drop only {} frames from it",
                if q { "802.1Q" } else { "802.1ad" }
            ),
        };
        // Name the tables left out, so that a dormant guard is seen for what it is.
        let left_out: Vec<String> = tables_not_in_force
            .iter()
            .map(|(table, why)| format!("table bridge {table} {why}"))
            .collect();
        if left_out.is_empty() {
            Err(found)
        } else {
            Err(format!(
                "{found} ({}; load it without `flags dormant`, or for the guard set guest_vlan_guard=true)",
                left_out.join("; ")
            ))
        }
    }
}

/// The bridge-family tables of `base_chains` whose rules are not in force, and why: dormant,
/// unreadable flags (the runtime's policy, [`nft::flags`]), or no table of that name listed.
fn bridge_tables_not_in_force(
    ruleset: &nft::Ruleset,
    base_chains: &[&Chain],
) -> Vec<(String, String)> {
    let mut tables: Vec<&Owner> = base_chains.iter().map(|chain| &chain.owner).collect();
    tables.sort_unstable();
    tables.dedup();
    tables
        .into_iter()
        .filter_map(|owner| {
            let why = match ruleset.table(owner) {
                None => Some(
                    "is not listed as a table, so whether it is in force is unknown".to_string(),
                ),
                Some(table) => table.flags.not_in_force(),
            }?;
            Some((owner.table.clone(), why))
        })
        .collect()
}

/// The guard's table as `nft -j list ruleset` prints it (nftables 1.0.6).
fn guard_ruleset() -> nft::Ruleset {
    use serde_json::json;
    let table = GUARD_TABLE;
    let rule = |pattern: &str, tag_type: &str| {
        json!({"rule": {"family": "bridge", "table": table, "chain": "prerouting", "expr": [
            {"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": pattern}},
            {"match": {"op": "==", "left": {"payload": {"protocol": "ether", "field": "type"}},
                       "right": tag_type}},
            {"drop": null}
        ]}})
    };
    let mut objects = vec![
        json!({"table": {"family": "bridge", "name": table}}),
        json!({"chain": {"family": "bridge", "table": table, "name": "prerouting", "type": "filter",
                         "hook": "prerouting", "prio": -300, "policy": "accept"}}),
    ];
    for pattern in GUEST_NAME_PATTERNS {
        objects.extend(TAG_TYPES.iter().map(|(word, _)| rule(pattern, word)));
    }
    nft::Ruleset::parse(&json!({ "nftables": objects }).to_string()).unwrap_or_default()
}

enum RuleEffect {
    NotForPort,
    /// Drops these of [`TAG_TYPES`] from the port.
    Drops([bool; 2]),
    MayPass,
}

fn read_rule(rule: &Rule, port: &str, bridge: &str) -> RuleEffect {
    // Whether the rule's name matches hold for the port: `None` when one cannot be settled.
    let mut for_port = Some(true);
    let mut understood = true;
    let mut types = [true; 2];
    let mut verdict = None;
    for expr in &rule.expr {
        if let Some(m) = expr.get("match") {
            let op = m.get("op").and_then(Value::as_str).unwrap_or("");
            let left = m.get("left").unwrap_or(&Value::Null);
            let right = m.get("right").unwrap_or(&Value::Null);
            let meta = left.pointer("/meta/key").and_then(Value::as_str);
            let ether_type = left.pointer("/payload/protocol").and_then(Value::as_str)
                == Some("ether")
                && left.pointer("/payload/field").and_then(Value::as_str) == Some("type");
            match (meta, op) {
                (Some(key @ ("iifname" | "ibrname")), "==" | "in" | "!=") => {
                    let name = if key == "iifname" { port } else { bridge };
                    let holds = name_matches(right, name).map(|hit| hit != (op == "!="));
                    for_port = match (for_port, holds) {
                        (Some(false), _) | (_, Some(false)) => Some(false),
                        (Some(true), Some(true)) => Some(true),
                        _ => None,
                    };
                }
                _ if ether_type && matches!(op, "==" | "in") => {
                    let listed = values(right);
                    for (i, (word, number)) in TAG_TYPES.iter().enumerate() {
                        types[i] &= listed
                            .iter()
                            .any(|v| v.as_str() == Some(word) || v.as_u64() == Some(*number));
                    }
                }
                _ => understood = false,
            }
        } else if expr.get("counter").is_some()
            || expr.get("log").is_some()
            || expr.get("comment").is_some()
        {
        } else if let Some(key) = expr.as_object().and_then(|o| o.keys().next()) {
            match key.as_str() {
                "drop" | "accept" | "jump" | "goto" | "return" | "queue" | "reject" => {
                    verdict = Some(key.clone())
                }
                _ => understood = false,
            }
        }
    }
    match (verdict.as_deref(), for_port) {
        (_, Some(false)) => RuleEffect::NotForPort,
        (Some("drop") | Some("reject"), Some(true)) if understood => RuleEffect::Drops(types),
        // A drop narrowed by something unread drops some frames, not all of them; one that may
        // not be for the port at all keeps it off from nothing.
        (Some("drop") | Some("reject") | None, _) => RuleEffect::NotForPort,
        // Another verdict that may be for the port may pass the frame first.
        (Some(_), _) => RuleEffect::MayPass,
    }
}

/// Whether the interface `name` matches the right side of an `iifname`/`ibrname` match: a name
/// as nft prints it in a match, or an anonymous set of them. `None` when it cannot be told: a
/// set element that may be a literal `*` ([`ifname::set_element_matches`]), a named set
/// (`@guests`, not read here), or a value that is not a name.
fn name_matches(right: &Value, name: &str) -> Option<bool> {
    if let Some(set) = right.get("set").and_then(Value::as_array) {
        let mut answer = Some(false);
        for element in set {
            match element
                .as_str()
                .map(|e| ifname::set_element_matches(e, name))
            {
                Some(Some(true)) => return Some(true),
                Some(Some(false)) => {}
                _ => answer = None,
            }
        }
        return answer;
    }
    match right.as_str() {
        Some(printed) if !printed.starts_with('@') => Some(ifname::matches(printed, name)),
        _ => None,
    }
}

fn values(right: &Value) -> Vec<&Value> {
    match right.get("set").and_then(Value::as_array) {
        Some(set) => set.iter().collect(),
        None => vec![right],
    }
}

/// The bridge the uplink's parent is a port of, if any.
pub fn parent_bridge<'a>(parent: &Link, links: &'a Links) -> Option<&'a Link> {
    let bridge = links.iter().find(|l| Some(l.index) == parent.controller)?;
    (bridge.kind.as_deref() == Some("bridge")).then_some(bridge)
}

/// The VLANs a guest must not reach on that bridge: the uplink VLAN and every VLAN device on
/// the parent or on the bridge (`vmbr0.50`), sorted.
pub fn host_vlans(uplink_vlan: u16, parent: &Link, bridge: &Link, links: &Links) -> Vec<u16> {
    let mut vlans: Vec<u16> = links
        .iter()
        .filter(|l| l.parent == Some(parent.index) || l.parent == Some(bridge.index))
        .filter_map(|l| l.vlan.map(|v| v.id))
        .chain([uplink_vlan])
        .collect();
    vlans.sort_unstable();
    vlans.dedup();
    vlans
}

/// The ports of `bridge` that Proxmox VE named for a guest ([`guest_name`]), in link order.
pub fn guest_ports_of(bridge: &Link, links: &Links) -> Vec<(Link, GuestName)> {
    links
        .ports_of(bridge.index)
        .filter_map(|port| Some((port.clone(), guest_name(&port.name)?)))
        .collect()
}

/// The bridge over the uplink's parent, its guest ports and the host's VLANs on it, as
/// [`crate::Stack::resolve`] finds them in the links.
#[derive(Debug, Clone)]
pub struct GuestBridge {
    pub bridge: Link,
    pub ports: Vec<(Link, GuestName)>,
    pub host_vlans: Vec<u16>,
}

impl GuestBridge {
    pub fn find(uplink_vlan: u16, parent: &Link, links: &Links) -> Option<GuestBridge> {
        let bridge = parent_bridge(parent, links)?;
        Some(GuestBridge {
            bridge: bridge.clone(),
            ports: guest_ports_of(bridge, links),
            host_vlans: host_vlans(uplink_vlan, parent, bridge, links),
        })
    }
}

/// Every guest port of the bridge over the uplink's parent (the stack's
/// [`crate::Stack::guest_bridge`]) that can send tagged frames onto the uplink, whose tag
/// protocol is `uplink_protocol`.
pub fn audit(
    guests: Option<&GuestBridge>,
    uplink_protocol: Option<VlanProtocol>,
    port_vlans: &[PortVlans],
    ruleset: &Ruleset,
) -> Vec<GuestPortFinding> {
    let Some(guests) = guests else {
        return Vec::new();
    };
    let bridge = &guests.bridge;
    let host = &guests.host_vlans;
    let settings = bridge.bridge.unwrap_or_default();
    let mut findings = Vec::new();
    for (port, guest) in &guests.ports {
        let vlans = match (settings.vlan_filtering, settings.vlan_protocol) {
            (Some(true), protocol) if protocol == uplink_protocol => {
                let carried = port_vlans.iter().find(|p| p.index == port.index);
                let reached: Vec<String> = host
                    .iter()
                    .filter(|&&vid| carried.is_some_and(|p| p.find(vid).is_some()))
                    .map(u16::to_string)
                    .collect();
                if reached.is_empty() {
                    continue;
                }
                format!("it carries host VLAN {}", reached.join(", "))
            }
            (Some(true), protocol) => format!(
                "{} filters {} tags, the uplink's are {}",
                bridge.name,
                protocol.map(|p| p.name()).unwrap_or("unknown"),
                uplink_protocol.map(|p| p.name()).unwrap_or("unknown")
            ),
            _ => format!("{} does not filter VLANs", bridge.name),
        };
        let Err(nftables) = ruleset.drops_vlan_frames_from(&port.name, &bridge.name) else {
            continue;
        };
        findings.push(GuestPortFinding {
            bridge: bridge.name.clone(),
            port: port.name.clone(),
            kind: guest.kind,
            vmid: guest.vmid,
            vlans,
            nftables,
            fix: crate::fix::guest_port(&bridge.name, host),
        });
    }
    findings
}
