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

use deevnet_runtime::netlink::{Link, Links, PortVlans, VlanProtocol};
use serde::Serialize;
use serde_json::Value;

/// A port name Proxmox VE gives a guest: its kind and the VM (or container) id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestName {
    pub kind: &'static str,
    pub vmid: u32,
}

/// `tap100i0` -> (tap, 100); `veth101i1`, `fwpr100p0`, `fwln100i0`, `fwln100o0` likewise; any
/// other name is not a guest's.
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
    /// `nft -j list ruleset`, parsed.
    Read(Value),
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
    /// The ruleset from nft's two listings of it: `nft -j list ruleset` (`json`) for the rules,
    /// and `nft -t list ruleset` (`text`) for each table's flags, which replace the JSON's (nft
    /// 1.0.6 prints a single table flag in JSON as a freed string: a dormant table can read
    /// `"flags": "persist"`). A table the text does not list gets flags no reader trusts.
    pub fn from_listings(json: &str, text: &str) -> Result<Ruleset, String> {
        let mut value: Value =
            serde_json::from_str(json).map_err(|e| format!("no JSON ruleset: {e}"))?;
        let flags = table_flags_in_text(text);
        if let Some(items) = value.get_mut("nftables").and_then(Value::as_array_mut) {
            for table in items.iter_mut().filter_map(|item| item.get_mut("table")) {
                let Some(table) = table.as_object_mut() else {
                    continue;
                };
                let key = ["family", "name"].map(|k| table.get(k).and_then(Value::as_str));
                let listed = flags
                    .iter()
                    .filter(|((family, name), _)| {
                        key == [Some(family.as_str()), Some(name.as_str())]
                    })
                    .flat_map(|(_, names)| names.iter().cloned())
                    .map(Value::String)
                    .collect::<Vec<_>>();
                let in_text = flags
                    .iter()
                    .any(|((family, name), _)| key == [Some(family.as_str()), Some(name.as_str())]);
                if !in_text {
                    table.insert("flags".into(), "not in nft's text listing".into());
                } else if listed.is_empty() {
                    table.remove("flags");
                } else {
                    table.insert("flags".into(), Value::Array(listed));
                }
            }
        }
        Ok(Ruleset::Read(value))
    }

    /// Whether the guard's table is there as the guard makes it and in force ([`Self::guard_state`]).
    pub fn guard_installed(&self) -> bool {
        self.guard_state().is_ok()
    }

    /// Whether the guard's table is there as the guard makes it: in force (not dormant), one
    /// chain, one rule, dropping both tag types from every guest name pattern on any bridge.
    /// `Err` says why not, and the fix.
    pub fn guard_state(&self) -> Result<(), String> {
        let fix = format!(
            "set guest_vlan_guard=true, which remakes the table, or run: nft '{}'",
            guard_commands()
        );
        let value = match self {
            Ruleset::Read(value) => value,
            Ruleset::NotRead(why) => return Err(format!("nftables not read: {why}")),
        };
        let items = items(value);
        let Some(table) = items.iter().filter_map(|item| item.get("table")).find(|t| {
            t.get("family").and_then(Value::as_str) == Some("bridge")
                && t.get("name").and_then(Value::as_str) == Some(GUARD_TABLE)
        }) else {
            return Err(format!("table bridge {GUARD_TABLE} is not there; {fix}"));
        };
        if let Some(why) = table_not_in_force(table) {
            return Err(format!("table bridge {GUARD_TABLE} {why}; {fix}"));
        }
        let ours: Vec<Value> = items
            .iter()
            .filter(|item| {
                ["chain", "rule"].iter().any(|kind| {
                    item.get(kind).is_some_and(|o| {
                        o.get("family").and_then(Value::as_str) == Some("bridge")
                            && o.get("table").and_then(Value::as_str) == Some(GUARD_TABLE)
                    })
                })
            })
            .cloned()
            .collect();
        let count = |kind: &str| ours.iter().filter(|i| i.get(kind).is_some()).count();
        let mut alone = vec![table_item(table)];
        alone.extend(ours.iter().cloned());
        let table = Ruleset::Read(serde_json::json!({ "nftables": alone }));
        let drops_every_guest = GUEST_NAME_SAMPLES
            .iter()
            .all(|name| table.drops_vlan_frames_from(name, "any0").is_ok());
        if count("chain") == 1 && count("rule") == 1 && drops_every_guest {
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
        let mut kept: Vec<Value> = match self {
            Ruleset::Read(value) => items(value)
                .iter()
                .filter(|item| {
                    !["table", "chain", "rule"].iter().any(|kind| {
                        item.get(kind).is_some_and(|o| {
                            o.get("family").and_then(Value::as_str) == Some("bridge")
                                && (o.get("table").or_else(|| o.get("name")))
                                    .and_then(Value::as_str)
                                    == Some(GUARD_TABLE)
                        })
                    })
                })
                .cloned()
                .collect(),
            Ruleset::NotRead(_) => Vec::new(),
        };
        kept.extend(guard_items());
        Ruleset::Read(serde_json::json!({ "nftables": kept }))
    }

    /// Whether the bridge-family base chains (prerouting, forward) drop both tag types
    /// arriving on `port` of `bridge`. A rule counts only when every match in it is one this
    /// reads (input interface name, input bridge name, ether type) and it ends in `drop`, and no
    /// earlier rule of its chain that may match the port ends in another verdict (accept, jump,
    /// goto, return, queue), which could pass the frame first. Whatever this cannot read leaves
    /// the port counted: the audit may ask for a rule that is not needed, never miss a hole.
    pub fn drops_vlan_frames_from(&self, port: &str, bridge: &str) -> Result<(), String> {
        let value = match self {
            Ruleset::Read(value) => value,
            Ruleset::NotRead(why) => return Err(format!("nftables not read: {why}")),
        };
        let items = items(value);
        let base_chains: Vec<(&str, &str)> = items
            .iter()
            .filter_map(|item| item.get("chain"))
            .filter(|c| c.get("family").and_then(Value::as_str) == Some("bridge"))
            .filter(|c| {
                matches!(
                    c.get("hook").and_then(Value::as_str),
                    Some("prerouting" | "forward")
                )
            })
            .filter_map(|c| Some((c.get("table")?.as_str()?, c.get("name")?.as_str()?)))
            .collect();
        // A dormant table's chains are not hooked: its rules drop nothing. So are, for this
        // audit, those of a table whose flags cannot be read or that is not listed at all.
        let tables_not_in_force = bridge_tables_not_in_force(items, &base_chains);
        let base_chains: Vec<(&str, &str)> = base_chains
            .into_iter()
            .filter(|(table, _)| !tables_not_in_force.iter().any(|(t, _)| t == table))
            .collect();
        let mut dropped = [false; 2];
        for (table, chain) in base_chains {
            let rules = items
                .iter()
                .filter_map(|item| item.get("rule"))
                .filter(|r| {
                    r.get("family").and_then(Value::as_str) == Some("bridge")
                        && r.get("table").and_then(Value::as_str) == Some(table)
                        && r.get("chain").and_then(Value::as_str) == Some(chain)
                });
            for rule in rules {
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

/// Each table's flags as `nft list ruleset` prints them in text: a `table FAMILY NAME {` line,
/// then, one tab in, `flags dormant` (names joined by `,`). Lines two tabs in are a chain's or
/// a set's. A table listed twice (it cannot be) would have its flags joined.
pub fn table_flags_in_text(text: &str) -> Vec<((String, String), Vec<String>)> {
    let mut tables: Vec<((String, String), Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(header) = line.strip_prefix("table ") {
            let Some((family, rest)) = header.split_once(' ') else {
                continue;
            };
            let Some((name, _)) = rest.split_once(" {") else {
                continue;
            };
            tables.push(((family.to_string(), name.to_string()), Vec::new()));
        } else if let Some(flags) = line.strip_prefix("\tflags ") {
            if let Some((_, names)) = tables.last_mut() {
                names.extend(flags.split(',').map(|f| f.trim().to_string()));
            }
        }
    }
    tables
}

/// Why a table's rules are not in force, from its `flags` as nft prints them: none (in force),
/// a number (bit 0x1 is dormant), a name or a list of names. Names other than the known ones
/// (`dormant`, `owner`, `persist`), or numbers with unknown bits, are unreadable and count as
/// not in force: nft 1.0.6 prints a single flag as whatever string was freed last (the next
/// table's name, say), which [`crate::node::read_ruleset`] corrects from nft's text listing.
pub fn table_not_in_force(table: &Value) -> Option<String> {
    const DORMANT: u64 = 0x1;
    const KNOWN_BITS: u64 = 0x1 | 0x2 | 0x4;
    let flags = match table.get("flags") {
        None | Some(Value::Null) => return None,
        Some(flags) => flags,
    };
    let unreadable = || {
        Some(format!(
            "has flags {flags} this module cannot read, so it may be dormant"
        ))
    };
    let dormant = || Some("is dormant (flags dormant), so its rules drop nothing".to_string());
    let names: Vec<&str> = match flags {
        Value::Number(n) => {
            return match n.as_u64() {
                Some(bits) if bits & !KNOWN_BITS != 0 => unreadable(),
                Some(bits) if bits & DORMANT != 0 => dormant(),
                Some(_) => None,
                None => unreadable(),
            }
        }
        Value::String(name) => vec![name.as_str()],
        Value::Array(list) => match list.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
            Some(names) => names,
            None => return unreadable(),
        },
        _ => return unreadable(),
    };
    if names.contains(&"dormant") {
        dormant()
    } else if names.iter().all(|n| matches!(*n, "owner" | "persist")) {
        None
    } else {
        unreadable()
    }
}

/// The bridge-family tables of `base_chains` whose rules are not in force, and why: dormant,
/// unreadable flags, or no table of that name listed.
fn bridge_tables_not_in_force(
    items: &[Value],
    base_chains: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut tables: Vec<&str> = base_chains.iter().map(|(table, _)| *table).collect();
    tables.sort_unstable();
    tables.dedup();
    tables
        .into_iter()
        .filter_map(|name| {
            let listed: Vec<&Value> = items
                .iter()
                .filter_map(|item| item.get("table"))
                .filter(|t| {
                    t.get("family").and_then(Value::as_str) == Some("bridge")
                        && t.get("name").and_then(Value::as_str) == Some(name)
                })
                .collect();
            let why = match listed.as_slice() {
                [] => Some(
                    "is not listed as a table, so whether it is in force is unknown".to_string(),
                ),
                listed => listed.iter().find_map(|t| table_not_in_force(t)),
            }?;
            Some((name.to_string(), why))
        })
        .collect()
}

fn table_item(table: &Value) -> Value {
    serde_json::json!({ "table": table })
}

fn items(value: &Value) -> &[Value] {
    value
        .get("nftables")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The guard's table as `nft -j list ruleset` prints it (nftables 1.0.6).
fn guard_items() -> Vec<Value> {
    let table = GUARD_TABLE;
    serde_json::json!([
        {"table": {"family": "bridge", "name": table}},
        {"chain": {"family": "bridge", "table": table, "name": "prerouting", "type": "filter",
                   "hook": "prerouting", "prio": -300, "policy": "accept"}},
        {"rule": {"family": "bridge", "table": table, "chain": "prerouting", "expr": [
            {"match": {"op": "==", "left": {"meta": {"key": "iifname"}},
                       "right": {"set": ["fwln*", "fwpr*", "tap*", "veth*"]}}},
            {"match": {"op": "==", "left": {"payload": {"protocol": "ether", "field": "type"}},
                       "right": {"set": ["8021q", "8021ad"]}}},
            {"drop": null}
        ]}}
    ])
    .as_array()
    .cloned()
    .unwrap_or_default()
}

enum RuleEffect {
    NotForPort,
    /// Drops these of [`TAG_TYPES`] from the port.
    Drops([bool; 2]),
    MayPass,
}

fn read_rule(rule: &Value, port: &str, bridge: &str) -> RuleEffect {
    let exprs = rule
        .get("expr")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut for_port = true;
    let mut understood = true;
    let mut types = [true; 2];
    let mut verdict = None;
    for expr in exprs {
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
                    let hit = names(right).iter().any(|n| name_matches(n, name));
                    if hit == (op == "!=") {
                        for_port = false;
                    }
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
    match verdict.as_deref() {
        _ if !for_port => RuleEffect::NotForPort,
        Some("drop") | Some("reject") if understood => RuleEffect::Drops(types),
        // A drop narrowed by something unread drops some frames, not all of them.
        Some("drop") | Some("reject") | None => RuleEffect::NotForPort,
        Some(_) => RuleEffect::MayPass,
    }
}

fn values(right: &Value) -> Vec<&Value> {
    match right.get("set").and_then(Value::as_array) {
        Some(set) => set.iter().collect(),
        None => vec![right],
    }
}

fn names(right: &Value) -> Vec<&str> {
    values(right)
        .into_iter()
        .filter_map(Value::as_str)
        .collect()
}

/// nft's interface-name match: a trailing unescaped `*` is a prefix wildcard, `\*` a literal.
fn name_matches(pattern: &str, name: &str) -> bool {
    let (body, wildcard) = match pattern.strip_suffix('*') {
        Some(body) if !body.ends_with('\\') => (body, true),
        _ => (pattern, false),
    };
    let literal = body.replace("\\*", "*");
    if wildcard {
        name.starts_with(&literal)
    } else {
        name == literal
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
            ports: links
                .ports_of(bridge.index)
                .filter_map(|port| Some((port.clone(), guest_name(&port.name)?)))
                .collect(),
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
