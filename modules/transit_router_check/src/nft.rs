//! The ruleset as `nft -j list ruleset` prints it (libnftables-json), parsed into typed values:
//! tables, chains (base chains with their hook, priority and policy), sets with their elements
//! as IPv4 ranges, and rules, each read into the [`RuleFacts`] the checks ask about.

use crate::ranges::{self, Range};
use serde_json::Value;

/// A table, chain, set or rule belongs to a family and a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub family: String,
    pub table: String,
}

/// A chain; `base` when it is hooked into the packet path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub owner: Owner,
    pub name: String,
    pub base: Option<BaseChain>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseChain {
    /// `filter`, `nat` or `route`.
    pub kind: String,
    pub hook: String,
    pub prio: i64,
    pub policy: String,
    /// The devices of an ingress or egress chain (`dev`).
    pub devices: Vec<String>,
}

/// A flowtable: its flows skip the forward hook on its devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flowtable {
    pub owner: Owner,
    pub name: String,
    pub devices: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    pub owner: Owner,
    pub name: String,
    pub elems: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub owner: Owner,
    pub chain: String,
    pub handle: i64,
    pub expr: Vec<Value>,
}

/// The whole ruleset, in nft's order; `objects` keeps each listed object as printed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ruleset {
    pub version: String,
    pub tables: Vec<Owner>,
    /// The tables listed with `flags`, and the flags as printed.
    pub table_flags: Vec<(Owner, Value)>,
    pub chains: Vec<Chain>,
    pub sets: Vec<Set>,
    pub flowtables: Vec<Flowtable>,
    pub rules: Vec<Rule>,
    pub objects: Vec<Value>,
}

fn text(object: &Value, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// `"dev": "name"` or `"dev": ["a", "b"]` (a flowtable prints `devices`).
fn devices(object: &Value) -> Vec<String> {
    match object.get("dev").or_else(|| object.get("devices")) {
        Some(Value::String(name)) => vec![name.clone()],
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn owner(object: &Value, table_key: &str) -> Owner {
    Owner {
        family: text(object, "family"),
        table: text(object, table_key),
    }
}

impl Ruleset {
    /// Parses nft's JSON; an error says what was not as libnftables-json documents it.
    pub fn parse(json: &str) -> Result<Ruleset, String> {
        let value: Value =
            serde_json::from_str(json).map_err(|e| format!("JSON that does not parse: {e}"))?;
        let Some(objects) = value.get("nftables").and_then(Value::as_array) else {
            return Err("JSON without the `nftables` list".into());
        };
        let mut ruleset = Ruleset::default();
        for object in objects {
            let Some((kind, body)) = object.as_object().and_then(|o| o.iter().next()) else {
                continue;
            };
            match kind.as_str() {
                "metainfo" => ruleset.version = text(body, "version"),
                "table" => {
                    if let Some(flags) = body.get("flags") {
                        ruleset
                            .table_flags
                            .push((owner(body, "name"), flags.clone()));
                    }
                    ruleset.tables.push(owner(body, "name"));
                }
                "chain" => ruleset.chains.push(Chain {
                    owner: owner(body, "table"),
                    name: text(body, "name"),
                    base: body.get("hook").map(|_| BaseChain {
                        kind: text(body, "type"),
                        hook: text(body, "hook"),
                        prio: body.get("prio").and_then(Value::as_i64).unwrap_or_default(),
                        policy: body
                            .get("policy")
                            .and_then(Value::as_str)
                            .unwrap_or("accept")
                            .to_string(),
                        devices: devices(body),
                    }),
                }),
                "flowtable" => ruleset.flowtables.push(Flowtable {
                    owner: owner(body, "table"),
                    name: text(body, "name"),
                    devices: devices(body),
                }),
                "set" => ruleset.sets.push(Set {
                    owner: owner(body, "table"),
                    name: text(body, "name"),
                    elems: body
                        .get("elem")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                }),
                "rule" => ruleset.rules.push(Rule {
                    owner: owner(body, "table"),
                    chain: text(body, "chain"),
                    handle: body
                        .get("handle")
                        .and_then(Value::as_i64)
                        .unwrap_or_default(),
                    expr: body
                        .get("expr")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                }),
                _ => {}
            }
            if kind != "metainfo" {
                ruleset.objects.push(object.clone());
            }
        }
        Ok(ruleset)
    }

    pub fn has_table(&self, owner: &Owner) -> bool {
        self.tables.contains(owner)
    }

    pub fn chain(&self, owner: &Owner, name: &str) -> Option<&Chain> {
        self.chains
            .iter()
            .find(|c| &c.owner == owner && c.name == name)
    }

    /// The rules of a chain, in order.
    pub fn rules_of<'a>(&'a self, chain: &'a Chain) -> impl Iterator<Item = &'a Rule> + 'a {
        self.rules
            .iter()
            .filter(move |r| r.owner == chain.owner && r.chain == chain.name)
    }

    /// Every base chain on `hook`, in nft's order.
    pub fn base_chains<'a>(
        &'a self,
        hook: &'a str,
    ) -> impl Iterator<Item = (&'a Chain, &'a BaseChain)> + 'a {
        self.chains
            .iter()
            .filter_map(move |c| c.base.as_ref().filter(|b| b.hook == hook).map(|b| (c, b)))
    }

    /// The elements of the named set as ranges; `None` when the set is missing or holds
    /// something that is not an IPv4 address, prefix or range.
    pub fn set_ranges(&self, owner: &Owner, name: &str) -> Option<Vec<Range>> {
        let set = self
            .sets
            .iter()
            .find(|s| &s.owner == owner && s.name == name)?;
        set.elems.iter().map(value_range).collect()
    }

    /// What a rule matches and does, its named sets resolved in its table.
    pub fn facts(&self, rule: &Rule) -> RuleFacts {
        RuleFacts::read(self, rule)
    }
}

/// An IPv4 address, `{"prefix": {addr, len}}`, `{"range": [a, b]}` or a set element
/// (`{"elem": {"val": ...}}`) as a range.
pub fn value_range(value: &Value) -> Option<Range> {
    if let Some(addr) = value.as_str() {
        return Range::parse_cidr(addr);
    }
    if let Some(prefix) = value.get("prefix") {
        let addr = prefix.get("addr")?.as_str()?;
        let len = prefix.get("len")?.as_u64()?;
        return Range::parse_cidr(&format!("{addr}/{len}"));
    }
    if let Some(range) = value.get("range").and_then(Value::as_array) {
        let first = value_range(range.first()?)?;
        let last = value_range(range.get(1)?)?;
        return Some(Range {
            first: first.first,
            last: last.last,
        });
    }
    value
        .get("elem")
        .and_then(|e| e.get("val"))
        .and_then(value_range)
}

/// What the destination (or source) of a rule may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addresses {
    /// No match on it.
    Any,
    In(Vec<Range>),
    NotIn(Vec<Range>),
    /// A match the parser cannot resolve (a missing set, a non-IPv4 value): may be anything.
    Unknown(String),
}

impl Addresses {
    /// Both matches hold: `self` and `other` intersect.
    pub fn and(self, other: Addresses) -> Addresses {
        use Addresses::{Any, In, NotIn, Unknown};
        match (self, other) {
            (Any, other) | (other, Any) => other,
            (Unknown(what), _) | (_, Unknown(what)) => Unknown(what),
            (In(a), In(b)) => In(ranges::intersect(&a, &b)),
            (In(a), NotIn(b)) | (NotIn(b), In(a)) => In(ranges::subtract(&a, &b)),
            (NotIn(mut a), NotIn(b)) => {
                a.extend(b);
                NotIn(ranges::union(&a))
            }
        }
    }
}

/// Where a rule sends the packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Drop,
    Jump(String),
    Goto(String),
    Return,
    /// No verdict: the next rule decides.
    Continue,
}

/// An interface-name match: equal (`true`) or not equal to one of the names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMatch {
    pub equal: bool,
    pub names: Vec<String>,
}

impl NameMatch {
    /// Whether a packet on interface `name` can match.
    pub fn admits(&self, name: &str) -> bool {
        let listed = self.names.iter().any(|n| name_matches(n, name));
        listed == self.equal
    }
}

/// nft's interface wildcard: a trailing `*`.
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// What a rule matches and what it does, as far as the checks need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFacts {
    pub daddr: Addresses,
    pub saddr: Addresses,
    pub iifname: Option<NameMatch>,
    pub oifname: Option<NameMatch>,
    /// `udp dport` values matched (equal).
    pub udp_dport: Option<Vec<u64>>,
    /// `meta nfproto ipv6`: IPv6 only.
    pub ipv6_only: bool,
    /// Matches on anything else (ct state, marks, `limit`, `quota`...), named: the rule may not
    /// match every packet.
    pub other_matches: Vec<String>,
    pub verdict: Verdict,
    /// `masquerade` or `snat`.
    pub source_nat: bool,
    /// `meta mark set meta mark | X`: X.
    pub mark_or: Option<u64>,
    /// The value of each `meta mark set` (libnftables-json's expression).
    pub mark_sets: Vec<Value>,
    /// The iptables targets (`xt`) of the rule, by name.
    pub xt_targets: Vec<String>,
    /// Statements the parser does not know (`xt`, `fwd`, `dup`, `queue` and the like), by name.
    pub unknown: Vec<String>,
}

/// Statements that decide nothing and match nothing.
const NEUTRAL: &[&str] = &["counter", "log", "notrack"];
/// Statements that let only some packets on (`limit`, `quota`): a match, not neutral.
const PARTIAL: &[&str] = &["limit", "quota"];

impl RuleFacts {
    fn read(ruleset: &Ruleset, rule: &Rule) -> RuleFacts {
        let mut facts = RuleFacts {
            daddr: Addresses::Any,
            saddr: Addresses::Any,
            iifname: None,
            oifname: None,
            udp_dport: None,
            ipv6_only: false,
            other_matches: Vec::new(),
            verdict: Verdict::Continue,
            source_nat: false,
            mark_or: None,
            mark_sets: Vec::new(),
            xt_targets: Vec::new(),
            unknown: Vec::new(),
        };
        for statement in &rule.expr {
            let Some((kind, body)) = statement.as_object().and_then(|o| o.iter().next()) else {
                facts.unknown.push(statement.to_string());
                continue;
            };
            match kind.as_str() {
                "match" => facts.read_match(ruleset, rule, body),
                "accept" => facts.verdict = Verdict::Accept,
                "drop" | "reject" => facts.verdict = Verdict::Drop,
                "return" => facts.verdict = Verdict::Return,
                "continue" => facts.verdict = Verdict::Continue,
                "jump" => facts.verdict = Verdict::Jump(text(body, "target")),
                "goto" => facts.verdict = Verdict::Goto(text(body, "target")),
                "masquerade" | "snat" => facts.source_nat = true,
                "mangle" => facts.read_mangle(body),
                "xt" => facts.read_xt(body),
                neutral if NEUTRAL.contains(&neutral) => {}
                partial if PARTIAL.contains(&partial) => facts.other_matches.push(partial.into()),
                other => facts.unknown.push(other.to_string()),
            }
        }
        facts
    }

    fn read_match(&mut self, ruleset: &Ruleset, rule: &Rule, body: &Value) {
        let op = body.get("op").and_then(Value::as_str).unwrap_or("==");
        let equal = matches!(op, "==" | "in");
        let left = body.get("left").unwrap_or(&Value::Null);
        let right = body.get("right").unwrap_or(&Value::Null);
        let meta = left.get("meta").map(|m| text(m, "key"));
        let payload = left
            .get("payload")
            .map(|p| (text(p, "protocol"), text(p, "field")));
        // Several matches in one rule all hold: each is read, and matches on one field intersect.
        match (
            meta.as_deref(),
            payload.as_ref().map(|(p, f)| (p.as_str(), f.as_str())),
        ) {
            (Some("iifname"), _) if self.iifname.is_none() => {
                self.iifname = Some(name_match(equal, right));
            }
            (Some("oifname"), _) if self.oifname.is_none() => {
                self.oifname = Some(name_match(equal, right));
            }
            (Some("nfproto"), _) if equal && right.as_str() == Some("ipv6") => {
                self.ipv6_only = true;
            }
            (_, Some(("ip6", _))) => self.ipv6_only = true,
            (_, Some(("ip", "daddr"))) => {
                let more = addresses(ruleset, &rule.owner, equal, op, right);
                self.daddr = std::mem::replace(&mut self.daddr, Addresses::Any).and(more);
            }
            (_, Some(("ip", "saddr"))) => {
                let more = addresses(ruleset, &rule.owner, equal, op, right);
                self.saddr = std::mem::replace(&mut self.saddr, Addresses::Any).and(more);
            }
            (_, Some(("udp", "dport"))) if equal => {
                let more = numbers(right);
                self.udp_dport = Some(match self.udp_dport.take() {
                    Some(ports) => ports.into_iter().filter(|p| more.contains(p)).collect(),
                    None => more,
                });
            }
            _ => self.other_matches.push(describe_left(left, op)),
        }
    }

    /// An iptables extension: unknown to this reader; a target may also write the mark.
    fn read_xt(&mut self, body: &Value) {
        let (kind, name) = (text(body, "type"), text(body, "name"));
        if kind == "target" {
            self.xt_targets.push(name.clone());
        }
        self.unknown.push(format!("xt {kind} {name}"));
    }

    /// `meta mark set <value>` (kept, and `meta mark | X` read as the gate's mark), else an
    /// unknown statement.
    fn read_mangle(&mut self, body: &Value) {
        let sets_mark = body
            .get("key")
            .and_then(|k| k.get("meta"))
            .is_some_and(|m| text(m, "key") == "mark");
        if !sets_mark {
            self.unknown.push("mangle".into());
            return;
        }
        let value = body.get("value").cloned().unwrap_or(Value::Null);
        let or = value.get("|").and_then(Value::as_array);
        if let Some([mark, Value::Number(bits)]) = or.map(Vec::as_slice) {
            if is_meta_mark(mark) {
                self.mark_or = bits.as_u64();
            }
        }
        self.mark_sets.push(value);
    }
}

/// `{"meta": {"key": "mark"}}`: the packet's mark itself.
pub fn is_meta_mark(value: &Value) -> bool {
    value
        .get("meta")
        .is_some_and(|m| m.get("key").and_then(Value::as_str) == Some("mark"))
}

/// A match's left side and operator as a short text (`meta l4proto ==`, `ct state in`).
fn describe_left(left: &Value, op: &str) -> String {
    let Some((kind, body)) = left.as_object().and_then(|o| o.iter().next()) else {
        return format!("{left} {op}");
    };
    let field = ["key", "field"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str));
    let protocol = body.get("protocol").and_then(Value::as_str);
    match (protocol, field) {
        (Some(protocol), Some(field)) => format!("{protocol} {field} {op}"),
        (None, Some(field)) => format!("{kind} {field} {op}"),
        _ => format!("{kind} {op}"),
    }
}

fn name_match(equal: bool, right: &Value) -> NameMatch {
    let names = match right {
        Value::String(name) => vec![name.clone()],
        other => other
            .get("set")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    };
    NameMatch { equal, names }
}

fn numbers(right: &Value) -> Vec<u64> {
    match right.as_u64() {
        Some(n) => vec![n],
        None => right
            .get("set")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default(),
    }
}

/// An address match's right side (an address, a prefix, a range, an anonymous set or a named
/// set `@name`) as ranges.
fn addresses(ruleset: &Ruleset, owner: &Owner, equal: bool, op: &str, right: &Value) -> Addresses {
    if !matches!(op, "==" | "in" | "!=") {
        return Addresses::Unknown(format!("{op} {right}"));
    }
    let ranges = match right {
        Value::String(name) if name.starts_with('@') => ruleset.set_ranges(owner, &name[1..]),
        Value::Object(map) if map.contains_key("set") => right
            .get("set")
            .and_then(Value::as_array)
            .and_then(|items| items.iter().map(value_range).collect()),
        other => value_range(other).map(|r| vec![r]),
    };
    match ranges {
        Some(ranges) if equal => Addresses::In(ranges),
        Some(ranges) => Addresses::NotIn(ranges),
        None => Addresses::Unknown(right.to_string()),
    }
}
