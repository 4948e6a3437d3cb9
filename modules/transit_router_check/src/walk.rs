//! The walk `private_accept_ahead` makes: the rules that decide transit traffic, in the order
//! the kernel runs them (a chain's rules, into the chains they jump or go to), up to the
//! table's private drop; each accept on the way that may let a private or VPC destination
//! through, other than the declared allowances, is a finding.

use crate::nft::{Addresses, Chain, RuleFacts, Ruleset, Verdict};
use crate::ranges::{any_overlap, covered, Range};
use crate::Request;

/// How deep jumps are followed (the kernel allows 16).
const MAX_DEPTH: usize = 16;

/// What the walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Each accept ahead of the private drop, named.
    pub findings: Vec<String>,
    /// Whether the walk reached a drop of every private destination (or of everything).
    pub private_drop_reached: bool,
}

/// Whether a chain's walk ended the packet's way through the base chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// The chain ended (or returned): the caller goes on.
    Next,
    /// A drop of every private destination: nothing private gets further.
    Dropped,
}

pub struct Walker<'a> {
    pub request: &'a Request,
    pub ruleset: &'a Ruleset,
    /// The private and VPC ranges together.
    guarded: Vec<Range>,
}

impl<'a> Walker<'a> {
    pub fn new(request: &'a Request, ruleset: &'a Ruleset) -> Self {
        let mut guarded = request.private_ranges.clone();
        guarded.extend(request.vpc_ranges.iter().copied());
        Walker {
            request,
            ruleset,
            guarded,
        }
    }

    /// Walks a base chain; `walk.private_drop_reached` when it reached the private drop.
    pub fn walk_base(&self, chain: &Chain, walk: &mut Walk) {
        if self.chain(chain, 0, walk) == Flow::Dropped {
            walk.private_drop_reached = true;
        }
    }

    fn chain(&self, chain: &Chain, depth: usize, walk: &mut Walk) -> Flow {
        for rule in self.ruleset.rules_of(chain) {
            let facts = self.ruleset.facts(rule);
            if !self.applies_to_transit(&facts) {
                continue;
            }
            let at = format!(
                "{} {} {} (rule handle {})",
                chain.owner.family, chain.owner.table, chain.name, rule.handle
            );
            if !facts.unknown.is_empty() && facts.verdict != Verdict::Drop {
                walk.findings.push(format!(
                    "{at} holds statements this audit cannot read ({}), counted as accepting anything",
                    facts.unknown.join(", ")
                ));
                continue;
            }
            match &facts.verdict {
                Verdict::Accept => {
                    if let Some(what) = self.accepted_private(&facts) {
                        walk.findings.push(format!("{at} accepts {what}"));
                    }
                }
                Verdict::Drop if self.drops_all_private(&facts) => return Flow::Dropped,
                Verdict::Jump(target) => {
                    if self.walk_jump(chain, target, depth, &at, walk) == Flow::Dropped {
                        return Flow::Dropped;
                    }
                }
                // A goto does not come back to this chain.
                Verdict::Goto(target) => return self.walk_jump(chain, target, depth, &at, walk),
                Verdict::Return => return Flow::Next,
                Verdict::Drop | Verdict::Continue => {}
            }
        }
        Flow::Next
    }

    fn walk_jump(
        &self,
        from: &Chain,
        target: &str,
        depth: usize,
        at: &str,
        walk: &mut Walk,
    ) -> Flow {
        match self.ruleset.chain(&from.owner, target) {
            Some(next) if depth < MAX_DEPTH => self.chain(next, depth + 1, walk),
            Some(_) => {
                walk.findings
                    .push(format!("{at} jumps deeper than {MAX_DEPTH} chains"));
                Flow::Next
            }
            None => {
                walk.findings.push(format!(
                    "{at} jumps to a chain {target} that does not exist"
                ));
                Flow::Next
            }
        }
    }

    /// A rule can see a packet that arrived on the transit interface (IPv4).
    fn applies_to_transit(&self, facts: &RuleFacts) -> bool {
        let transit = &self.request.transit_interface;
        !facts.ipv6_only && facts.iifname.as_ref().is_none_or(|m| m.admits(transit))
    }

    /// The private or VPC destinations an accept may let through, unless an allowance.
    fn accepted_private(&self, facts: &RuleFacts) -> Option<String> {
        if self.allowed(facts) {
            return None;
        }
        match &facts.daddr {
            Addresses::Any => Some("any destination (no destination match)".into()),
            Addresses::Unknown(what) => Some(format!("destinations it cannot resolve ({what})")),
            Addresses::NotIn(ranges) => (!covered(&self.guarded, ranges))
                .then(|| format!("every destination but {}", list(ranges))),
            Addresses::In(ranges) => any_overlap(ranges, &self.guarded)
                .then(|| format!("{}, private or VPC destinations", list(ranges))),
        }
    }

    /// LoadBalancer ranges; UDP 53 to `dns_servers`; UDP 123 to `ntp_servers`.
    fn allowed(&self, facts: &RuleFacts) -> bool {
        let within =
            |allowed: &[Range]| matches!(&facts.daddr, Addresses::In(r) if covered(r, allowed));
        let udp_to = |port: u64, servers: &Option<Vec<Range>>| {
            let only_port = facts
                .udp_dport
                .as_ref()
                .is_some_and(|ports| !ports.is_empty() && ports.iter().all(|p| *p == port));
            only_port && servers.as_ref().is_none_or(|s| within(s))
        };
        within(&self.request.loadbalancer_ranges)
            || udp_to(53, &self.request.dns_servers)
            || udp_to(123, &self.request.ntp_servers)
    }

    /// A drop of every private destination (or of everything), whatever else the packet is.
    fn drops_all_private(&self, facts: &RuleFacts) -> bool {
        let unconditional =
            facts.oifname.is_none() && facts.udp_dport.is_none() && !facts.other_matches;
        let all_private = match &facts.daddr {
            Addresses::Any => true,
            Addresses::In(ranges) => covered(&self.request.private_ranges, ranges),
            _ => false,
        };
        unconditional && all_private && facts.saddr == Addresses::Any
    }
}

fn list(ranges: &[Range]) -> String {
    ranges
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
