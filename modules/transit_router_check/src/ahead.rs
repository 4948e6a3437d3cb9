//! What acts on transit packets outside the table's forward chain and would void the routing
//! gate or the forward chain's verdict: other writers of the gate's mark bit (the gate lets
//! every packet that carries the bit through), and paths that move a transit packet around the
//! forward hook (flowtables and ingress chains on the transit interface, `fwd`, `dup`, `queue`).
//! Anything this reader cannot prove harmless is named.

use crate::checks::our_table;
use crate::nft::{is_meta_mark, Addresses, Chain, ReadFacts, Rule, RuleFacts, Ruleset, Verdict};
use crate::Request;
use serde_json::Value;
use std::collections::HashSet;

/// Statements that send a packet, or a copy of it, elsewhere than the routing decision does.
const MOVERS: &[&str] = &["fwd", "dup", "queue"];
/// iptables targets that do the same (`TEE` duplicates, `NFQUEUE` and `QUEUE` queue).
const XT_MOVERS: &[&str] = &["TEE", "NFQUEUE", "QUEUE"];
/// Statements an ingress chain may hold and still move nothing.
const PLAIN: &[&str] = &[
    "match", "counter", "log", "limit", "quota", "accept", "drop", "reject", "return", "jump",
    "goto", "continue",
];

fn at(rule: &Rule) -> String {
    format!(
        "{} {} {} (rule handle {})",
        rule.owner.family, rule.owner.table, rule.chain, rule.handle
    )
}

/// Every rule that may set the gate's mark bit on a transit packet, other than the table's own
/// prerouting rule, named with how it writes.
pub fn mark_writers(request: &Request, ruleset: &Ruleset) -> Vec<String> {
    let bit = u64::from(request.gate_mark);
    let mut found = Vec::new();
    for rule in &ruleset.rules {
        let facts = ruleset.facts(rule);
        let excludes_transit = facts
            .iifname
            .as_ref()
            .is_some_and(|m| m.admits(&request.transit_interface) == Some(false));
        if excludes_transit || is_our_marking_rule(request, ruleset, rule, &facts) {
            continue;
        }
        for value in facts.mark_sets.iter().filter(|v| may_set(v, bit)) {
            found.push(format!("{} sets the packet mark to {value}", at(rule)));
        }
        for target in &facts.xt_targets {
            found.push(format!(
                "{} has the iptables target {target}, which this audit cannot read and which may set the mark",
                at(rule)
            ));
        }
    }
    found
}

/// The table's `iifname "<transit>" meta mark set meta mark | <gate_mark>` in its prerouting
/// chain, with nothing else in the rule.
fn is_our_marking_rule(
    request: &Request,
    ruleset: &Ruleset,
    rule: &Rule,
    facts: &RuleFacts,
) -> bool {
    let in_prerouting = ruleset
        .chain(&rule.owner, &rule.chain)
        .and_then(|c| c.base.as_ref())
        .is_some_and(|b| b.hook == "prerouting");
    let transit_only = facts
        .iifname
        .as_ref()
        .is_some_and(|m| m.is_only(&request.transit_interface));
    rule.owner == our_table(request)
        && in_prerouting
        && transit_only
        && facts.mark_or == Some(u64::from(request.gate_mark))
        && facts.mark_sets.len() == 1
        && facts.daddr == Addresses::Any
        && facts.saddr == Addresses::Any
        && facts.oifname.is_none()
        && facts.udp_dport.is_none()
        && facts.other_matches.is_empty()
        && facts.unknown.is_empty()
        && facts.verdict == Verdict::Continue
}

/// Whether a `meta mark set` of `value` may set `bit`: only a constant without it, the mark
/// itself, and `&`, `|`, `^` of those are proven not to; anything else (`ct mark`, a map, a
/// field of the packet) may.
fn may_set(value: &Value, bit: u64) -> bool {
    if let Some(number) = value.as_u64() {
        return number & bit != 0;
    }
    if is_meta_mark(value) {
        return false;
    }
    let terms = |op: &str| value.get(op).and_then(Value::as_array);
    if let Some(terms) = terms("&") {
        return terms.iter().all(|t| may_set(t, bit));
    }
    if let Some(terms) = terms("|").or_else(|| terms("^")) {
        return terms.iter().any(|t| may_set(t, bit));
    }
    true
}

/// What may move a transit packet around the forward chain: flowtables and ingress chains on
/// the transit interface, `fwd`, `dup` and `queue` in the chains that see transit packets.
pub fn around_forward(request: &Request, ruleset: &Ruleset) -> Vec<String> {
    let transit = request.transit_interface.as_str();
    let on_transit =
        |devices: &[String]| devices.is_empty() || devices.iter().any(|d| d == transit);
    let mut found: Vec<String> = ruleset
        .flowtables
        .iter()
        .filter(|f| on_transit(&f.devices))
        .map(|f| {
            format!(
                "flowtable {} {} {} on {}: its flows skip the forward chain",
                f.owner.family,
                f.owner.table,
                f.name,
                f.devices.join(", ")
            )
        })
        .collect();
    let ingress: Vec<&Chain> = ruleset
        .chains
        .iter()
        .filter(|c| {
            c.base
                .as_ref()
                .is_some_and(|b| b.hook == "ingress" && on_transit(&b.devices))
        })
        .collect();
    for rule in reachable(ruleset, &ingress) {
        let facts = ruleset.facts(rule);
        let odd: Vec<&str> = statements(rule).filter(|s| !PLAIN.contains(s)).collect();
        if facts
            .iifname
            .as_ref()
            .is_none_or(|m| m.admits(transit) != Some(false))
            && !odd.is_empty()
        {
            found.push(format!(
                "{} in an ingress chain on {transit} holds {}, which may move transit packets around the forward chain",
                at(rule),
                odd.join(", ")
            ));
        }
    }
    let seen: Vec<&Chain> = ruleset
        .chains
        .iter()
        .filter(|c| {
            c.base.as_ref().is_some_and(|b| {
                matches!(b.hook.as_str(), "prerouting" | "forward" | "postrouting")
                    && matches!(c.owner.family.as_str(), "ip" | "inet")
            })
        })
        .collect();
    for rule in reachable(ruleset, &seen) {
        let facts = ruleset.facts(rule);
        let movers: Vec<&str> = statements(rule)
            .filter(|s| MOVERS.contains(s))
            .chain(
                facts
                    .xt_targets
                    .iter()
                    .map(String::as_str)
                    .filter(|t| XT_MOVERS.contains(t)),
            )
            .collect();
        if facts
            .iifname
            .as_ref()
            .is_none_or(|m| m.admits(transit) != Some(false))
            && !movers.is_empty()
        {
            found.push(format!(
                "{} holds {}, which sends transit packets elsewhere than the forward chain decides",
                at(rule),
                movers.join(", ")
            ));
        }
    }
    found
}

/// The statement kinds of a rule, as nft names them.
fn statements(rule: &Rule) -> impl Iterator<Item = &str> + '_ {
    rule.expr.iter().filter_map(|s| {
        s.as_object()
            .and_then(|o| o.keys().next())
            .map(String::as_str)
    })
}

/// The rules of `roots` and of every chain they jump or go to, each chain once.
fn reachable<'a>(ruleset: &'a Ruleset, roots: &[&'a Chain]) -> Vec<&'a Rule> {
    let mut todo: Vec<&Chain> = roots.to_vec();
    let mut done: HashSet<(&str, &str, &str)> = HashSet::new();
    let mut rules = Vec::new();
    while let Some(chain) = todo.pop() {
        let key = (
            chain.owner.family.as_str(),
            chain.owner.table.as_str(),
            chain.name.as_str(),
        );
        if !done.insert(key) {
            continue;
        }
        for rule in ruleset.rules_of(chain) {
            if let Verdict::Jump(target) | Verdict::Goto(target) = ruleset.facts(rule).verdict {
                todo.extend(ruleset.chain(&chain.owner, &target));
            }
            rules.push(rule);
        }
    }
    rules
}
