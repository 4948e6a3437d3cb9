//! What a rule means to this audit: each rule of the ruleset, read into the [`RuleFacts`] the
//! checks ask about (its destination and source ranges, interface matches, verdict, mark
//! writes, what it cannot read). Parsing lives in the house's one reader,
//! [`deevnet_runtime::nft`]: the typed ruleset, its table flags, nft's interface patterns and
//! the address ranges come from there; [`ReadFacts::facts`] adds this audit's reading.

use deevnet_runtime::nft::ifname::{self, Pattern};
use deevnet_runtime::nft::json_text as text;
use deevnet_runtime::nft::ranges::{self, Range};
pub use deevnet_runtime::nft::{value_range, BaseChain, Chain, Owner, Rule, Ruleset};
use serde_json::Value;

/// This audit's reading of a ruleset's rules.
pub trait ReadFacts {
    /// What a rule matches and does, its named sets resolved in its table.
    fn facts(&self, rule: &Rule) -> RuleFacts;
}

impl ReadFacts for Ruleset {
    fn facts(&self, rule: &Rule) -> RuleFacts {
        RuleFacts::read(self, rule)
    }
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

/// An interface-name match: equal (`true`) or not equal to one of the names, as nft prints
/// them (patterns, [`ifname`]); `in_set` when they are a set's elements, which nft 1.0.6
/// prints without the escape of a literal `*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMatch {
    pub equal: bool,
    pub names: Vec<String>,
    pub in_set: bool,
}

impl NameMatch {
    /// Whether a packet on interface `name` matches; `None` when nft's listing cannot say (a
    /// set element ending in `*` that may be literal, and the two readings disagree). A caller
    /// then takes the answer that proves less: an accept or a mark writer may see the packet, a
    /// drop may not.
    pub fn admits(&self, name: &str) -> Option<bool> {
        let mut unsure = false;
        for printed in &self.names {
            let listed = if self.in_set {
                ifname::set_element_matches(printed, name)
            } else {
                Some(ifname::matches(printed, name))
            };
            match listed {
                Some(true) => return Some(self.equal),
                Some(false) => {}
                None => unsure = true,
            }
        }
        (!unsure).then_some(!self.equal)
    }

    /// Whether the match is `== name` and nothing else: one name, no wildcard.
    pub fn is_only(&self, name: &str) -> bool {
        let exact = match self.names.as_slice() {
            [printed] if self.in_set => {
                !printed.ends_with('*') && Pattern::parse(printed) == Pattern::Name(name.into())
            }
            [printed] => Pattern::parse(printed) == Pattern::Name(name.into()),
            _ => false,
        };
        self.equal && exact
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
                self.iifname = Some(name_match(ruleset, &rule.owner, equal, right));
            }
            (Some("oifname"), _) if self.oifname.is_none() => {
                self.oifname = Some(name_match(ruleset, &rule.owner, equal, right));
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

/// An interface-name match's right side: a name, an anonymous set, or a named set `@name`
/// (its elements; when it cannot be read, an element that matches every name or none, so that
/// [`NameMatch::admits`] cannot say).
fn name_match(ruleset: &Ruleset, owner: &Owner, equal: bool, right: &Value) -> NameMatch {
    let in_set = !right.is_string();
    let names = match right {
        Value::String(name) if name.starts_with('@') => {
            let elems = ruleset.set(owner, &name[1..]).map(|s| &s.elems);
            let names: Option<Vec<String>> = elems.and_then(|elems| {
                elems
                    .iter()
                    .map(|e| e.as_str().map(str::to_string))
                    .collect()
            });
            // A set's elements print as an anonymous set's do.
            return NameMatch {
                equal,
                names: names.unwrap_or_else(|| vec!["*".into()]),
                in_set: true,
            };
        }
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
    NameMatch {
        equal,
        names,
        in_set,
    }
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
