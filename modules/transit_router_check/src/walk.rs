//! The walk `private_accept_ahead` makes: the rules that decide transit traffic, in the order
//! the kernel runs them (a chain's rules, into the chains they jump or go to). It follows which
//! destinations are decided for every packet (dropped, or accepted and judged) at each rule, so
//! that each accept is judged by the destinations that can still reach it: one that may let a
//! private or VPC destination through, other than the declared allowances, is a finding, and so
//! is every rule or chain the walk cannot read.
//!
//! The walk is the house's one walker of jumps and gotos ([`deevnet_runtime::nft::Folder`]),
//! with this audit's [`Fold`]: each chain is read once into a [`Summary`] that holds whatever
//! came before it, and a caller applies what it decided before the jump to its callee's
//! accepts; the walk is linear in rules, and past the walker's step budget it stops and says it
//! cannot judge. Only a rule that holds for every packet to its destinations (no condition but
//! the transit interface and the destination) decides them: a conditional drop, jump or goto,
//! a `limit` or `quota`, a match the reader does not model, an interface set nft's listing
//! leaves in doubt, decides nothing.

use crate::nft::{Addresses, Chain, ReadFacts, RuleFacts, Ruleset, Verdict};
use crate::Request;
use deevnet_runtime::nft::ranges::{self, any_overlap, covered, Range, ALL};
use deevnet_runtime::nft::{Fault, Fold, Folder, Next, Rule, Unreadable};
use std::collections::BTreeMap;
use std::rc::Rc;

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
pub struct Summary {
    /// The destinations for which every packet that enters is decided when it leaves.
    decided: Vec<Range>,
    /// The accepts it may reach (its own and its callees'), by rule place, in nft's order.
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

    fn add_accept(&mut self, place: usize, accept: Accept) {
        if accept.dests.is_empty() {
            return;
        }
        match self.accepts.get_mut(&place) {
            Some(known) => {
                known.dests.extend(accept.dests);
                known.dests = ranges::union(&known.dests);
            }
            None => {
                self.accepts.insert(place, accept);
            }
        }
    }
}

/// The jump or goto a rule makes: what the caller applies to the callee's summary.
struct Call {
    /// The rule, named.
    at: String,
    target: String,
    /// The destinations the rule may match.
    may: Vec<Range>,
    /// The destinations it matches for every packet (none when it is conditional).
    whole: Option<Vec<Range>>,
    goto: bool,
    /// Whether it matches every packet.
    everything: bool,
}

/// The walk through one chain: what is decided so far, what may have left it undecided (by a
/// return or a goto), which later rules then no longer decide, and the call being made.
#[derive(Default)]
pub struct Pass {
    summary: Summary,
    escaped: Vec<Range>,
    call: Option<Call>,
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

/// This audit's reading of chains, for the house's walker.
pub struct Transit<'a> {
    pub request: &'a Request,
    pub ruleset: &'a Ruleset,
}

impl Fold for Transit<'_> {
    type Summary = Rc<Summary>;
    type Pass = Pass;

    fn begin(&mut self, _: &Chain) -> Pass {
        Pass::default()
    }

    fn rule(
        &mut self,
        pass: &mut Pass,
        chain: &Chain,
        rule: &Rule,
        place: usize,
    ) -> Result<Next, String> {
        let facts = self.ruleset.facts(rule);
        let Some(sure) = self.sees_transit(&facts) else {
            return Ok(Next::On);
        };
        let at = format!("{} (rule handle {})", chain.path(), rule.handle);
        Ok(read_rule(place, &at, &facts, sure, pass))
    }

    fn entered(&mut self, pass: &mut Pass, callee: &Rc<Summary>) -> bool {
        let Some(call) = pass.call.take() else {
            return true;
        };
        for finding in &callee.unreadable {
            pass.summary.note(finding.clone());
        }
        for (place, accept) in &callee.accepts {
            let reach = ranges::intersect(&accept.dests, &call.may);
            let accept = Accept {
                dests: ranges::subtract(&reach, &pass.summary.decided),
                ..accept.clone()
            };
            pass.summary.add_accept(*place, accept);
        }
        if let Some(whole) = &call.whole {
            pass.decide(&ranges::intersect(&callee.decided, whole));
        }
        call.end(pass)
    }

    fn fault(&mut self, pass: &mut Pass, fault: Unreadable) -> Result<(), Unreadable> {
        let Some(call) = pass.call.take() else {
            pass.summary.note(fault.to_string());
            return Ok(());
        };
        pass.summary.note(match fault.kind {
            Fault::MissingChain => format!(
                "{} jumps to a chain {} that does not exist",
                call.at, call.target
            ),
            _ => format!("{} cannot be followed: {fault}", call.at),
        });
        // What the chain it enters would have let through is unknown: the rule decides nothing.
        call.end(pass);
        Ok(())
    }

    fn finish(&mut self, pass: Pass) -> Rc<Summary> {
        Rc::new(pass.summary)
    }
}

impl Call {
    /// Whether packets go on past the call: a goto matching every packet ends the chain.
    fn end(self, pass: &mut Pass) -> bool {
        if self.goto {
            pass.escape(&self.may);
        }
        !(self.goto && self.everything)
    }
}

/// Reads one rule into the pass: what comes next (the next rule, the chain's end, or the chain
/// it enters, with the call kept in the pass).
fn read_rule(place: usize, at: &str, facts: &RuleFacts, sure: bool, pass: &mut Pass) -> Next {
    if !facts.unknown.is_empty() {
        pass.summary.note(format!(
            "{at} holds statements this audit cannot read ({}), so it cannot judge what they do to transit packets",
            facts.unknown.join(", ")
        ));
    }
    let (may, exact) = scope(&facts.daddr);
    // The destinations for which every packet matches the rule.
    let whole = if conditional(facts) || !sure {
        None
    } else {
        exact
    };
    let everything = whole.as_deref() == Some(&[ALL][..]);
    let go_on = |on: bool| if on { Next::On } else { Next::Stop };
    match &facts.verdict {
        Verdict::Accept => {
            let accept = Accept {
                at: at.to_string(),
                what: describe(&facts.daddr),
                ports: facts.udp_dport.clone(),
                dests: ranges::subtract(&may, &pass.summary.decided),
            };
            pass.summary.add_accept(place, accept);
            pass.decide(whole.as_deref().unwrap_or_default());
            go_on(!everything)
        }
        Verdict::Drop => {
            pass.decide(whole.as_deref().unwrap_or_default());
            go_on(!everything)
        }
        Verdict::Jump(target) | Verdict::Goto(target) => {
            pass.call = Some(Call {
                at: at.to_string(),
                target: target.clone(),
                may,
                whole,
                goto: matches!(facts.verdict, Verdict::Goto(_)),
                everything,
            });
            Next::Enter(target.clone())
        }
        Verdict::Return => {
            pass.escape(&may);
            go_on(!everything)
        }
        Verdict::Continue => Next::On,
    }
}

impl Transit<'_> {
    /// Whether a rule sees a packet that arrived on the transit interface (IPv4): `None` when
    /// it cannot, `Some(true)` when it does, `Some(false)` when nft's listing leaves it in
    /// doubt (an interface set; see [`crate::nft::NameMatch::admits`]): then it may accept,
    /// and decides nothing.
    fn sees_transit(&self, facts: &RuleFacts) -> Option<bool> {
        if facts.ipv6_only {
            return None;
        }
        let transit = &self.request.transit_interface;
        match facts.iifname.as_ref().map(|m| m.admits(transit)) {
            None | Some(Some(true)) => Some(true),
            Some(None) => Some(false),
            Some(Some(false)) => None,
        }
    }

    /// A finding when the accept lets a private or VPC destination through, unless an
    /// allowance.
    fn judge(&self, accept: &Accept) -> Option<String> {
        let reached = ranges::intersect(&accept.dests, &self.guarded());
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

    /// The private and VPC ranges together.
    fn guarded(&self) -> Vec<Range> {
        let mut guarded = self.request.private_ranges.clone();
        guarded.extend(self.request.vpc_ranges.iter().copied());
        guarded
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

/// The walk of the base chains that decide transit traffic, each chain read once across them.
pub struct Walker<'a> {
    folder: Folder<'a, Transit<'a>>,
}

impl<'a> Walker<'a> {
    pub fn new(request: &'a Request, ruleset: &'a Ruleset) -> Self {
        Walker {
            folder: Folder::new(ruleset, Transit { request, ruleset }),
        }
    }

    /// The same walker with another step budget (the walker's own by default).
    #[must_use]
    pub fn with_budget(self, budget: usize) -> Self {
        Walker {
            folder: self.folder.with_budget(budget),
        }
    }

    /// Walks a base chain: its findings, and whether every private destination is dropped.
    pub fn walk_base(&mut self, chain: &Chain) -> Walk {
        let summary = match self.folder.summary(chain) {
            Ok(summary) => summary,
            Err(fault) => {
                return Walk {
                    findings: vec![format!("{fault}: this audit cannot judge the rest")],
                    private_drop_reached: false,
                    rule_visits: self.folder.rules_read(),
                }
            }
        };
        let transit = self.folder.fold();
        let mut findings = summary.unreadable.clone();
        findings.extend(summary.accepts.values().filter_map(|a| transit.judge(a)));
        // The policy decides whatever the chain leaves undecided.
        let drops_rest = chain.base.as_ref().is_some_and(|b| b.policy == "drop");
        let decided = if drops_rest {
            vec![ALL]
        } else {
            summary.decided.clone()
        };
        Walk {
            findings,
            private_drop_reached: covered(&transit.request.private_ranges, &decided),
            rule_visits: self.folder.rules_read(),
        }
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
