//! Source NAT of a lookup's answer (`snat_src`): whether a packet from a workload's IPv4
//! address, leaving by the device the lookup answered, is source-translated by the node's
//! nftables ruleset.
//!
//! No kernel API evaluates nftables for a made-up packet, so the postrouting NAT base chains
//! of families `ip` and `inet` are walked, in priority order, with the runtime's one reader
//! ([`deevnet_runtime::nft`]: its typed ruleset, nft's interface patterns, its ranges and its
//! walker, which reads each chain once within a step budget). A rule whose every match is
//! understood and holds decides: `snat`, `masquerade` and iptables-nft's `SNAT` and
//! `MASQUERADE` targets translate; `accept` ends that base chain untranslated; `jump`, `goto`
//! and `return` are followed. The matches understood are `oifname` and `ip saddr` (an address,
//! prefix, range, anonymous or named set), with `==`, `!=` and `in`; counters, logs and
//! comments change nothing. Anything else met on the way makes the answer unknown, never "no
//! NAT": an unread match, an unknown statement, a ruleset that could not be read, a translating
//! chain whose table is dormant or may be (the reader's policy for table flags).

use crate::Kernel;
use deevnet_runtime::nft::{
    ifname, value_range, Chain, Outcome, Range, Rule, Ruleset, Step, Walker,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::net::Ipv4Addr;

/// The iptables-nft targets that source-translate.
const XT_NAT_TARGETS: [&str; 2] = ["SNAT", "MASQUERADE"];

/// One answer: `translated` is `None` when the walk could not tell, and `why` says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snat {
    pub src: Ipv4Addr,
    pub translated: Option<bool>,
    pub why: String,
}

/// How a NAT base chain ends for the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nat {
    Translated,
    /// An `accept`: the chain ends, the next base chain still runs.
    Accepted,
}

/// The packet whose translation is predicted.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    pub dev: &'a str,
    pub src: Ipv4Addr,
}

/// Whether `packet` leaves translated, by the ruleset's postrouting NAT chains.
pub fn predict(ruleset: &Ruleset, packet: Packet) -> Snat {
    walk(ruleset, packet).0
}

/// The prediction, and how many rules the walk read (each at most once).
pub fn walk(ruleset: &Ruleset, packet: Packet) -> (Snat, usize) {
    let answer = |translated: Option<bool>, why: String| Snat {
        src: packet.src,
        translated,
        why,
    };
    let mut chains: Vec<(&Chain, i64)> = ruleset
        .base_chains("postrouting")
        .filter(|(chain, base)| {
            base.kind == "nat" && ["ip", "inet"].contains(&chain.owner.family.as_str())
        })
        .map(|(chain, base)| (chain, base.prio))
        .collect();
    // Stable: chains of one priority keep nft's order.
    chains.sort_by_key(|(_, prio)| *prio);
    let mut walker = Walker::new(ruleset, |chain: &Chain, rule: &Rule| {
        step(ruleset, chain, rule, packet)
    });
    for (chain, _) in chains {
        let decided = match walker.outcome(chain) {
            Ok(Outcome::Verdict(Nat::Translated)) => match not_in_force(ruleset, chain) {
                // A dormant table translates nothing, and one that may be cannot be counted on.
                Some(why) => answer(None, format!("not evaluated: table {} {why}", chain.owner)),
                None => {
                    let why = format!("a source NAT rule of {} matches", chain.path());
                    answer(Some(true), why)
                }
            },
            Ok(_) => continue,
            Err(unreadable) => answer(None, format!("not evaluated: {unreadable}")),
        };
        return (decided, walker.rules_read());
    }
    let untranslated = answer(Some(false), "no source NAT rule matches".into());
    (untranslated, walker.rules_read())
}

/// Why the chain's table may not be in force (the reader's one policy for table flags).
fn not_in_force(ruleset: &Ruleset, chain: &Chain) -> Option<String> {
    ruleset
        .table(&chain.owner)
        .and_then(|table| table.flags.not_in_force())
}

/// What one rule does for the packet: its statements in order, the first that decides.
fn step(ruleset: &Ruleset, chain: &Chain, rule: &Rule, packet: Packet) -> Step<Nat> {
    for expr in &rule.expr {
        let Some((key, body)) = expr.as_object().and_then(|o| o.iter().next()) else {
            return Step::Unknown(format!("the expression {expr}"));
        };
        match key.as_str() {
            "match" => match holds(ruleset, chain, body, packet) {
                Ok(true) => {}
                Ok(false) => return Step::Continue,
                Err(why) => return Step::Unknown(why),
            },
            "snat" | "masquerade" => return Step::Verdict(Nat::Translated),
            "xt" => {
                let name = body.get("name").and_then(Value::as_str).unwrap_or_default();
                let target = body.get("type").and_then(Value::as_str) == Some("target");
                if target && XT_NAT_TARGETS.contains(&name) {
                    return Step::Verdict(Nat::Translated);
                }
                return Step::Unknown(format!("the iptables extension {name:?}"));
            }
            "jump" | "goto" => {
                let Some(target) = body.get("target").and_then(Value::as_str) else {
                    return Step::Unknown(format!("a {key} without a target: {body}"));
                };
                return match key.as_str() {
                    "jump" => Step::Jump(target.to_string()),
                    _ => Step::Goto(target.to_string()),
                };
            }
            "return" => return Step::Return,
            "accept" => return Step::Verdict(Nat::Accepted),
            "counter" | "log" | "comment" => {}
            other => return Step::Unknown(format!("the expression {other:?}")),
        }
    }
    Step::Continue
}

/// Whether a match holds for the packet; an error names what is not understood.
fn holds(ruleset: &Ruleset, chain: &Chain, body: &Value, packet: Packet) -> Result<bool, String> {
    let negated = match body.get("op").and_then(Value::as_str).unwrap_or("==") {
        "==" | "in" => false,
        "!=" => true,
        other => return Err(format!("the operator {other:?}")),
    };
    let left = body.get("left").unwrap_or(&Value::Null);
    let right = body.get("right").unwrap_or(&Value::Null);
    let held = if left.pointer("/meta/key").and_then(Value::as_str) == Some("oifname") {
        oifname_holds(right, packet.dev)?
    } else if left.pointer("/payload/protocol").and_then(Value::as_str) == Some("ip")
        && left.pointer("/payload/field").and_then(Value::as_str) == Some("saddr")
    {
        let src = Range::from(packet.src);
        source_ranges(ruleset, chain, right)?
            .iter()
            .any(|range| src.within(range))
    } else {
        return Err(format!("a match on {left}"));
    };
    Ok(held != negated)
}

/// `oifname` against a name pattern or an anonymous set of them (nft's wildcards and escapes).
fn oifname_holds(right: &Value, dev: &str) -> Result<bool, String> {
    if let Some(printed) = right.as_str() {
        // `@name` is a named set, which this walk does not read.
        if printed.starts_with('@') {
            return Err(format!("an oifname match against the set {printed}"));
        }
        return Ok(ifname::matches(printed, dev));
    }
    let Some(elements) = right.get("set").and_then(Value::as_array) else {
        return Err(format!("an oifname match against {right}"));
    };
    let mut undecided = None;
    for element in elements {
        let Some(printed) = element.as_str() else {
            return Err(format!("an oifname match against {right}"));
        };
        match ifname::set_element_matches(printed, dev) {
            Some(true) => return Ok(true),
            Some(false) => {}
            None => undecided = Some(printed),
        }
    }
    match undecided {
        Some(printed) => Err(format!(
            "an oifname set element {printed:?}, which nft prints alike for a prefix and for a \
             name ending in *"
        )),
        None => Ok(false),
    }
}

/// The addresses an `ip saddr` match names: an address, prefix or range, an anonymous set of
/// them, or a named set of the chain's table.
fn source_ranges(ruleset: &Ruleset, chain: &Chain, right: &Value) -> Result<Vec<Range>, String> {
    if let Some(name) = right.as_str().and_then(|text| text.strip_prefix('@')) {
        return ruleset
            .set_ranges(&chain.owner, name)
            .ok_or_else(|| format!("an ip saddr match against the set @{name}"));
    }
    let members = match right.get("set").and_then(Value::as_array) {
        Some(members) => members.iter().collect(),
        None => vec![right],
    };
    members
        .into_iter()
        .map(|member| {
            value_range(member).ok_or_else(|| format!("an ip saddr match against {member}"))
        })
        .collect()
}

/// The run's predictions: the ruleset read once, when a lookup first asks, and each (device,
/// source) walked once.
#[derive(Default)]
pub struct Predictions {
    ruleset: Option<Result<Ruleset, String>>,
    answers: HashMap<(String, Ipv4Addr), Snat>,
}

impl Predictions {
    /// Whether `src` leaving by `dev` is translated, the ruleset read from `kernel` at the
    /// first call.
    pub fn answer(&mut self, kernel: &mut impl Kernel, dev: &str, src: Ipv4Addr) -> Snat {
        let ruleset = self.ruleset.get_or_insert_with(|| kernel.nft_ruleset());
        self.answers
            .entry((dev.to_string(), src))
            .or_insert_with(|| match ruleset {
                Ok(ruleset) => predict(ruleset, Packet { dev, src }),
                Err(why) => Snat {
                    src,
                    translated: None,
                    why: format!("not evaluated: {why}"),
                },
            })
            .clone()
    }
}
