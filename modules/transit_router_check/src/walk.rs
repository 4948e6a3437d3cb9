//! The walk `private_accept_ahead` makes: the rules that decide transit traffic, in the order
//! the kernel runs them (a chain's rules, into the chains they jump or go to). It follows which
//! destinations are decided for every packet (dropped, or accepted and judged) at each rule, so
//! that each accept is judged by the destinations that can still reach it: one that may let a
//! private or VPC destination through, other than the declared allowances, is a finding, and so
//! is every rule or chain the walk cannot read.
//!
//! Each chain is read once, into a summary that holds whatever came before it (memoized by
//! chain): the walk is linear in rules, and past [`STEP_BUDGET`] rule visits it stops and says
//! it cannot judge. Only a rule that holds for every packet to its destinations (no condition
//! but the transit interface and the destination) decides them: a conditional drop, jump or
//! goto, a `limit` or `quota`, a match the reader does not model, decides nothing.

use crate::nft::{Addresses, Chain, RuleFacts, Ruleset, Verdict};
use crate::ranges::{self, any_overlap, covered, Range, ALL};
use crate::Request;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// How deep jumps are followed (the kernel allows 16).
const MAX_DEPTH: usize = 16;
/// Rule visits past which the walk stops, unable to judge.
pub const STEP_BUDGET: usize = 200_000;

/// What the walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Each accept ahead of the private drop, and each rule the walk cannot read, named.
    pub findings: Vec<String>,
    /// Whether every private destination is decided (dropped) for every packet.
    pub private_drop_reached: bool,
    /// Rules read so far by the walker (each chain's once).
    pub rule_visits: usize,
}

/// An accept the chain may reach, with the destinations not decided on the way to it.
#[derive(Debug, Clone)]
struct Accept {
    /// Its rule, named.
    at: String,
    /// Its destination match, as written.
    what: String,
    /// Its `udp dport` values.
    ports: Option<Vec<u64>>,
    dests: Vec<Range>,
}

/// What a chain does to the packets that enter it, whatever came before it.
#[derive(Debug, Clone, Default)]
struct Summary {
    /// The destinations for which every packet that enters is decided when it leaves.
    decided: Vec<Range>,
    /// The accepts it may reach (its own and its callees'), by rule index, in nft's order.
    accepts: BTreeMap<usize, Accept>,
    /// What it cannot judge, named.
    unreadable: Vec<String>,
}

impl Summary {
    fn note(&mut self, finding: String) {
        if !self.unreadable.contains(&finding) {
            self.unreadable.push(finding);
        }
    }

    fn add_accept(&mut self, index: usize, accept: Accept) {
        if accept.dests.is_empty() {
            return;
        }
        match self.accepts.get_mut(&index) {
            Some(known) => {
                known.dests.extend(accept.dests);
                known.dests = ranges::union(&known.dests);
            }
            None => {
                self.accepts.insert(index, accept);
            }
        }
    }
}

/// The walk through one chain: what is decided so far, and what may have left it undecided
/// (by a return or a goto), which later rules then no longer decide.
#[derive(Default)]
struct Pass {
    summary: Summary,
    escaped: Vec<Range>,
}

impl Pass {
    /// Every packet to `whole` is decided here (unless it already left).
    fn decide(&mut self, whole: &[Range]) {
        let mut decided = ranges::subtract(whole, &self.escaped);
        decided.append(&mut self.summary.decided);
        self.summary.decided = ranges::union(&decided);
    }

    fn escape(&mut self, may: &[Range]) {
        self.escaped.extend_from_slice(may);
        self.escaped = ranges::union(&self.escaped);
    }
}

/// The destinations a rule may match, and those it matches for every packet (none when it is
/// conditional).
#[derive(Clone, Copy)]
struct Reach<'r> {
    may: &'r [Range],
    whole: Option<&'r [Range]>,
}

pub struct Walker<'a> {
    pub request: &'a Request,
    pub ruleset: &'a Ruleset,
    /// The private and VPC ranges together.
    guarded: Vec<Range>,
    /// Each chain's index by family, table and name.
    index: HashMap<(&'a str, &'a str, &'a str), usize>,
    /// Each chain's rules (indexes into the ruleset's), in order.
    rules: Vec<Vec<usize>>,
    memo: HashMap<usize, Rc<Summary>>,
    open: HashSet<usize>,
    visits: usize,
    /// The rule visits allowed ([`STEP_BUDGET`] unless [`Walker::with_budget`]).
    budget: usize,
    /// The chain where the walk ran out of its step budget.
    stopped_in: Option<String>,
}

impl<'a> Walker<'a> {
    pub fn new(request: &'a Request, ruleset: &'a Ruleset) -> Self {
        let mut guarded = request.private_ranges.clone();
        guarded.extend(request.vpc_ranges.iter().copied());
        let index: HashMap<_, _> = ruleset
            .chains
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let key = (
                    c.owner.family.as_str(),
                    c.owner.table.as_str(),
                    c.name.as_str(),
                );
                (key, i)
            })
            .collect();
        let mut rules = vec![Vec::new(); ruleset.chains.len()];
        for (i, rule) in ruleset.rules.iter().enumerate() {
            let key = (
                rule.owner.family.as_str(),
                rule.owner.table.as_str(),
                rule.chain.as_str(),
            );
            if let Some(&chain) = index.get(&key) {
                rules[chain].push(i);
            }
        }
        Walker {
            request,
            ruleset,
            guarded,
            index,
            rules,
            memo: HashMap::new(),
            open: HashSet::new(),
            visits: 0,
            budget: STEP_BUDGET,
            stopped_in: None,
        }
    }

    /// The same walker with another step budget.
    #[must_use]
    pub fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget;
        self
    }

    /// Walks a base chain: its findings, and whether every private destination is dropped.
    pub fn walk_base(&mut self, chain: &Chain) -> Walk {
        let Some(index) = self.chain_index(chain, &chain.name) else {
            return Walk::default();
        };
        let summary = self.summary(index, 0);
        let mut findings = summary.unreadable.clone();
        if let Some(chain) = &self.stopped_in {
            findings.push(format!(
                "the walk stopped in {chain} after {} rule visits: this audit cannot judge the rest",
                self.budget
            ));
        }
        findings.extend(summary.accepts.values().filter_map(|a| self.judge(a)));
        // The policy decides whatever the chain leaves undecided.
        let drops_rest = chain.base.as_ref().is_some_and(|b| b.policy == "drop");
        let decided = if drops_rest {
            vec![ALL]
        } else {
            summary.decided.clone()
        };
        Walk {
            findings,
            private_drop_reached: covered(&self.request.private_ranges, &decided),
            rule_visits: self.visits,
        }
    }

    fn chain_index(&self, from: &Chain, name: &str) -> Option<usize> {
        let key = (from.owner.family.as_str(), from.owner.table.as_str(), name);
        self.index.get(&key).copied()
    }

    fn summary(&mut self, index: usize, depth: usize) -> Rc<Summary> {
        if let Some(done) = self.memo.get(&index) {
            return Rc::clone(done);
        }
        let chain = &self.ruleset.chains[index];
        if !self.open.insert(index) {
            let mut looped = Summary::default();
            looped.note(format!(
                "{} {} {} is reached again from itself (a loop)",
                chain.owner.family, chain.owner.table, chain.name
            ));
            return Rc::new(looped);
        }
        let summary = Rc::new(self.read_chain(index, depth));
        self.open.remove(&index);
        self.memo.insert(index, Rc::clone(&summary));
        summary
    }

    fn read_chain(&mut self, chain_index: usize, depth: usize) -> Summary {
        let ruleset = self.ruleset;
        let chain = &ruleset.chains[chain_index];
        let mut pass = Pass::default();
        for index in self.rules[chain_index].clone() {
            let rule = &ruleset.rules[index];
            self.visits += 1;
            if self.visits > self.budget {
                self.stopped_in.get_or_insert_with(|| {
                    format!(
                        "{} {} {}",
                        chain.owner.family, chain.owner.table, chain.name
                    )
                });
                break;
            }
            let facts = self.ruleset.facts(rule);
            if !self.applies_to_transit(&facts) {
                continue;
            }
            let at = format!(
                "{} {} {} (rule handle {})",
                chain.owner.family, chain.owner.table, chain.name, rule.handle
            );
            if !self.read_rule(chain, depth, index, &at, &facts, &mut pass) {
                break;
            }
        }
        pass.summary
    }

    /// Reads one rule into the pass; `false` when no packet gets past it.
    fn read_rule(
        &mut self,
        chain: &'a Chain,
        depth: usize,
        index: usize,
        at: &str,
        facts: &RuleFacts,
        pass: &mut Pass,
    ) -> bool {
        if !facts.unknown.is_empty() {
            pass.summary.note(format!(
                "{at} holds statements this audit cannot read ({}), so it cannot judge what they do to transit packets",
                facts.unknown.join(", ")
            ));
        }
        let (may, exact) = scope(&facts.daddr);
        // The destinations for which every packet matches the rule.
        let whole = if conditional(facts) { None } else { exact };
        let reach = Reach {
            may: &may,
            whole: whole.as_deref(),
        };
        let everything = whole.as_deref() == Some(&[ALL][..]);
        match &facts.verdict {
            Verdict::Accept => {
                let accept = Accept {
                    at: at.to_string(),
                    what: describe(&facts.daddr),
                    ports: facts.udp_dport.clone(),
                    dests: ranges::subtract(&may, &pass.summary.decided),
                };
                pass.summary.add_accept(index, accept);
                pass.decide(whole.as_deref().unwrap_or_default());
                !everything
            }
            Verdict::Drop => {
                pass.decide(whole.as_deref().unwrap_or_default());
                !everything
            }
            Verdict::Jump(target) | Verdict::Goto(target) => {
                self.call(chain, target, depth, at, &reach, pass);
                let goto = matches!(facts.verdict, Verdict::Goto(_));
                if goto {
                    pass.escape(&may);
                }
                !(goto && everything)
            }
            Verdict::Return => {
                pass.escape(&may);
                !everything
            }
            Verdict::Continue => true,
        }
    }

    /// A jump or goto: the callee's accepts, seen from here, and what it decides.
    fn call(
        &mut self,
        from: &'a Chain,
        target: &str,
        depth: usize,
        at: &str,
        reach: &Reach,
        pass: &mut Pass,
    ) {
        let Reach { may, whole } = *reach;
        let Some(next) = self.chain_index(from, target) else {
            pass.summary.note(format!(
                "{at} jumps to a chain {target} that does not exist"
            ));
            return;
        };
        if depth >= MAX_DEPTH {
            pass.summary
                .note(format!("{at} jumps deeper than {MAX_DEPTH} chains"));
            return;
        }
        let callee = self.summary(next, depth + 1);
        for finding in &callee.unreadable {
            pass.summary.note(finding.clone());
        }
        for (index, accept) in &callee.accepts {
            let reach = ranges::intersect(&accept.dests, may);
            let accept = Accept {
                dests: ranges::subtract(&reach, &pass.summary.decided),
                ..accept.clone()
            };
            pass.summary.add_accept(*index, accept);
        }
        if let Some(whole) = whole {
            pass.decide(&ranges::intersect(&callee.decided, whole));
        }
    }

    /// A rule can see a packet that arrived on the transit interface (IPv4).
    fn applies_to_transit(&self, facts: &RuleFacts) -> bool {
        let transit = &self.request.transit_interface;
        !facts.ipv6_only && facts.iifname.as_ref().is_none_or(|m| m.admits(transit))
    }

    /// A finding when the accept lets a private or VPC destination through, unless an
    /// allowance.
    fn judge(&self, accept: &Accept) -> Option<String> {
        let reached = ranges::intersect(&accept.dests, &self.guarded);
        if reached.is_empty() || self.allowed(accept) {
            return None;
        }
        Some(format!(
            "{} accepts {} (reaching {})",
            accept.at,
            accept.what,
            list(&reached)
        ))
    }

    /// LoadBalancer ranges; UDP 53 to `dns_servers`; UDP 123 to `ntp_servers`; never a VPC
    /// destination (`any` is any server outside the VPC ranges, as the role's ruleset has it).
    fn allowed(&self, accept: &Accept) -> bool {
        let dests = &accept.dests;
        let only_port = |port: u64| {
            accept
                .ports
                .as_ref()
                .is_some_and(|ports| !ports.is_empty() && ports.iter().all(|p| *p == port))
        };
        let udp_to = |port: u64, servers: &Option<Vec<Range>>| {
            only_port(port) && servers.as_ref().is_none_or(|s| covered(dests, s))
        };
        !any_overlap(dests, &self.request.vpc_ranges)
            && (covered(dests, &self.request.loadbalancer_ranges)
                || udp_to(53, &self.request.dns_servers)
                || udp_to(123, &self.request.ntp_servers))
    }
}

/// A destination match as (the destinations it may match, the destinations it matches for
/// sure); an unresolved match may match anything and is sure of nothing.
fn scope(daddr: &Addresses) -> (Vec<Range>, Option<Vec<Range>>) {
    match daddr {
        Addresses::Any => (vec![ALL], Some(vec![ALL])),
        Addresses::In(ranges) => (ranges::union(ranges), Some(ranges::union(ranges))),
        Addresses::NotIn(ranges) => {
            let rest = ranges::subtract(&[ALL], ranges);
            (rest.clone(), Some(rest))
        }
        Addresses::Unknown(_) => (vec![ALL], None),
    }
}

/// Whether the rule may not hold for every transit packet to its destinations.
fn conditional(facts: &RuleFacts) -> bool {
    facts.saddr != Addresses::Any
        || facts.oifname.is_some()
        || facts.udp_dport.is_some()
        || !facts.other_matches.is_empty()
        || !facts.unknown.is_empty()
}

fn describe(daddr: &Addresses) -> String {
    match daddr {
        Addresses::Any => "any destination (no destination match)".into(),
        Addresses::Unknown(what) => format!("destinations it cannot resolve ({what})"),
        Addresses::NotIn(ranges) => format!("every destination but {}", list(ranges)),
        Addresses::In(ranges) => list(ranges),
    }
}

fn list(ranges: &[Range]) -> String {
    ranges
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
