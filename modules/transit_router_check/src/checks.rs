//! The checks, one function each, in the order the result lists them, on what the node
//! reported ([`Observed`]); [`evaluate`] runs them and adds up the state. The checks of what the
//! kernel does outside the table and the gate are [`crate::kernel`]'s.

use crate::ahead;
use crate::gate::{self as gate_rules, IpRule};
use crate::kernel::{self, ReversePathSysctls, TransitInterface};
use crate::nft::{Addresses, BaseChain, Chain, Owner, ReadFacts, RuleFacts, Ruleset};
use crate::persisted::{self, Persisted};
use crate::report::{Check, ForwardChain, Forwarding, Gate, Report, State};
use crate::routes::{self, IpRoute, Lookup};
use crate::unit::{self, DropIn};
use crate::walk::{Walk, Walker};
use crate::Request;
use deevnet_runtime::nft::ranges::{covered, Range};

/// What the node reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub ruleset: Ruleset,
    pub ipv4_rules: Vec<IpRule>,
    pub ipv6_rules: Vec<IpRule>,
    pub routes: Vec<IpRoute>,
    /// IPv6 table `local` (`ip -j -6 route show table local`).
    pub ipv6_local_routes: Vec<IpRoute>,
    pub forwarding: Forwarding,
    pub persisted: Persisted,
    pub unit: UnitFiles,
    /// The transit interface's name and altnames.
    pub transit_names: Vec<String>,
    pub transit_interface: TransitInterface,
    /// The iptables-legacy tables loaded (`/proc/net/ip_tables_names`, `ip6_tables_names`).
    pub legacy_tables: Result<Vec<String>, String>,
    pub reverse_path: ReversePathSysctls,
    /// The kernel's answer for a marked transit packet to each probed VPC address, and to an
    /// Internet address (the route the table's private drop stands in front of); `Err`: not
    /// asked, and why.
    pub vpc_lookups: Result<VpcLookups, String>,
}

/// `ip route get fibmatch` of VPC addresses as a marked packet from the transit network.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VpcLookups {
    /// The source asked with: a transit-network address the router does not hold.
    pub source: String,
    pub internet: Option<(String, Lookup)>,
    pub vpc: Vec<(String, Lookup)>,
}

/// The unit, the link that enables it, and the nftables configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFiles {
    /// `Ok(None)`: absent; `Err`: not read, and why.
    pub unit: Result<Option<String>, String>,
    /// The `<target>.wants/` link that leads to the unit, when there is one.
    pub enabled_by: Option<String>,
    pub nftables_conf: Result<Option<String>, String>,
    /// The drop-ins systemd applies, in order.
    pub dropins: Vec<DropIn>,
    /// Unit files of the same name in a folder systemd reads ahead of the unit's own.
    pub shadowed_by: Vec<String>,
}

/// The family and name of the collection's table.
pub fn our_table(request: &Request) -> Owner {
    Owner {
        family: "inet".into(),
        table: request.table.clone(),
    }
}

/// The table's forward base chain (type filter).
pub fn our_forward<'a>(
    request: &Request,
    ruleset: &'a Ruleset,
) -> Option<(&'a Chain, &'a BaseChain)> {
    let owner = our_table(request);
    ruleset
        .base_chains("forward")
        .find(|(c, b)| c.owner == owner && b.kind == "filter")
}

/// What each rule of the table's prerouting chains matches and does, in order.
pub fn our_prerouting_facts<'a>(
    request: &Request,
    ruleset: &'a Ruleset,
) -> impl Iterator<Item = RuleFacts> + 'a {
    let owner = our_table(request);
    ruleset
        .base_chains("prerouting")
        .filter(move |(c, _)| c.owner == owner)
        .flat_map(move |(c, _)| ruleset.rules_of(c))
        .map(move |r| ruleset.facts(r))
}

/// Runs every check and adds up the state.
pub fn evaluate(request: &Request, observed: &Observed) -> Report {
    let ruleset = &observed.ruleset;
    let walk = walk(request, ruleset);
    let vpc_routes = routes::into_vpc(&observed.routes, &request.vpc_ranges);
    let gate = gate(request, observed);
    let checks = vec![
        table_present(request, ruleset),
        open_forward_policy(request, ruleset, observed.forwarding),
        first_in_forward(request, ruleset),
        private_accept_ahead(&walk),
        vpc_route(&vpc_routes, &observed.vpc_lookups, &observed.transit_names),
        uplink_snat(request, ruleset),
        routing_gate(request, observed, gate),
        forwarding(request, observed.forwarding),
        persisted(request, observed),
        reload_survival(request, &observed.unit),
        kernel::transit_interface(request, &observed.transit_interface),
        kernel::legacy_tables(&observed.legacy_tables),
        kernel::reverse_path(
            request,
            ruleset,
            kernel::ReversePathInput {
                sysctls: observed.reverse_path,
                ipv4_rules: &observed.ipv4_rules,
                transit_names: &observed.transit_names,
            },
        ),
    ];
    let state = state(&checks, observed.forwarding);
    Report {
        state,
        violations: checks.iter().filter(|c| !c.ok).map(|c| c.name).collect(),
        checks,
        forward_chains: ruleset
            .base_chains("forward")
            .map(|(c, b)| ForwardChain {
                family: c.owner.family.clone(),
                table: c.owner.table.clone(),
                chain: c.name.clone(),
                priority: b.prio,
                policy: b.policy.clone(),
            })
            .collect(),
        routes_into_vpc: vpc_routes,
        gate,
        forwarding: observed.forwarding,
        nft_version: ruleset.version.clone(),
    }
}

/// The state the checks add up to. What may move or mark transit packets ahead of the table and
/// the gate (`transit_interface`, `legacy_tables`) leaves nothing provable: `open`, whatever
/// else passed. `reverse_path` is availability and changes no state.
fn state(checks: &[Check], forwarding: Forwarding) -> State {
    let passed = |name: &str| checks.iter().any(|c| c.name == name && c.ok);
    let provable = passed("transit_interface") && passed("legacy_tables");
    let decides =
        passed("table_present") && passed("first_in_forward") && passed("private_accept_ahead");
    let gate_holds = passed("routing_gate");
    if !provable {
        State::Open
    } else if !forwarding.transit {
        State::Closed
    } else if decides && gate_holds {
        State::Enforced
    } else if gate_holds {
        State::Closed
    } else {
        State::Open
    }
}

fn walk(request: &Request, ruleset: &Ruleset) -> Option<Walk> {
    let (ours, base) = our_forward(request, ruleset)?;
    let mut walker = Walker::new(request, ruleset);
    let mut findings = Vec::new();
    // A foreign chain at or before ours (equal priorities run in no set order) is walked too:
    // its private accepts are named, though ours still sees what they accept.
    for (chain, _) in foreign_forward_chains(request, ruleset).filter(|(_, b)| b.prio <= base.prio)
    {
        findings.extend(walker.walk_base(chain).findings);
    }
    let mut walk = walker.walk_base(ours);
    findings.append(&mut walk.findings);
    walk.findings = findings;
    Some(walk)
}

/// Forward base chains of the IPv4 families, other than the table's own.
fn foreign_forward_chains<'a>(
    request: &Request,
    ruleset: &'a Ruleset,
) -> impl Iterator<Item = (&'a Chain, &'a BaseChain)> + 'a {
    let owner = our_table(request);
    ruleset.base_chains("forward").filter(move |(c, _)| {
        c.owner != owner && matches!(c.owner.family.as_str(), "ip" | "inet" | "ip6")
    })
}

fn load_fix(request: &Request) -> String {
    format!(
        "load the persisted ruleset: `nft -f {}` (or `systemctl restart {}`), or run the deevnet.net.transit_router role",
        request.ruleset_path.display(),
        unit_name(request)
    )
}

fn unit_name(request: &Request) -> String {
    request
        .unit_path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Check 1: the table exists with its forward base chain and its prerouting chain that marks
/// transit packets with the gate's bit.
pub fn table_present(request: &Request, ruleset: &Ruleset) -> Check {
    const NAME: &str = "table_present";
    let owner = our_table(request);
    let table = format!("inet {}", request.table);
    if !ruleset.has_table(&owner) {
        return Check::fail(NAME, format!("table {table} is absent."), load_fix(request));
    }
    if our_forward(request, ruleset).is_none() {
        return Check::fail(
            NAME,
            format!("table {table} has no filter chain on the forward hook."),
            load_fix(request),
        );
    }
    // A dormant table decides nothing; flags that cannot be read may be dormant (the runtime's
    // one policy, read from nft's text listing since nft 1.0.6 misprints them in JSON).
    if let Some(why) = ruleset.table(&owner).and_then(|t| t.flags.not_in_force()) {
        return Check::fail(
            NAME,
            format!("table {table} {why}: its rules may not be in force."),
            load_fix(request),
        );
    }
    let marks = our_prerouting_facts(request, ruleset).any(|f| {
        f.mark_or == Some(u64::from(request.gate_mark))
            && f.iifname
                .as_ref()
                .is_some_and(|m| m.is_only(&request.transit_interface))
    });
    if !marks {
        return Check::fail(
            NAME,
            format!(
                "table {table} has no prerouting rule `iifname \"{}\" meta mark set meta mark | {:#010x}`, so the routing gate refuses all transit traffic.",
                request.transit_interface, request.gate_mark
            ),
            load_fix(request),
        );
    }
    Check::pass(
        NAME,
        format!(
            "table {table} has its forward chain and marks transit packets with {:#x}.",
            request.gate_mark
        ),
    )
}

/// Check 2: no forward policy of accept with no collection rules while forwarding is on.
pub fn open_forward_policy(request: &Request, ruleset: &Ruleset, forwarding: Forwarding) -> Check {
    const NAME: &str = "open_forward_policy";
    if our_forward(request, ruleset).is_some() {
        return Check::pass(NAME, "the table's forward chain decides transit traffic.");
    }
    if !forwarding.transit {
        return Check::pass(
            NAME,
            format!("forwarding is off on {}.", request.transit_interface),
        );
    }
    let dropping: Vec<String> = ruleset
        .base_chains("forward")
        .filter(|(_, b)| b.policy == "drop")
        .map(|(c, _)| format!("{} {} {}", c.owner.family, c.owner.table, c.name))
        .collect();
    if dropping.is_empty() {
        return Check::fail(
            NAME,
            format!(
                "a forward policy of accept with no collection rules: forwarding is on for {} and no table decides transit traffic.",
                request.transit_interface
            ),
            load_fix(request),
        );
    }
    Check::pass(
        NAME,
        format!(
            "no collection rules, but forward policy drop in {}.",
            dropping.join(", ")
        ),
    )
}

/// Check 3: no other forward base chain runs at our priority or before it.
pub fn first_in_forward(request: &Request, ruleset: &Ruleset) -> Check {
    const NAME: &str = "first_in_forward";
    let Some((_, ours)) = our_forward(request, ruleset) else {
        return Check::fail(
            NAME,
            format!("table inet {} has no forward chain.", request.table),
            load_fix(request),
        );
    };
    let ahead: Vec<String> = foreign_forward_chains(request, ruleset)
        .filter(|(_, b)| b.prio <= ours.prio)
        .map(|(c, b)| {
            format!(
                "{} {} {} (priority {})",
                c.owner.family, c.owner.table, c.name, b.prio
            )
        })
        .collect();
    if ahead.is_empty() {
        return Check::pass(
            NAME,
            format!("the forward chain runs first (priority {}).", ours.prio),
        );
    }
    Check::fail(
        NAME,
        format!("{} run at or before the table's forward chain (priority {}).", ahead.join(", "), ours.prio),
        format!(
            "give the table's forward chain a priority below theirs (transit_router_forward_priority, now {}), or move those chains after it",
            ours.prio
        ),
    )
}

/// Check 4: nothing accepts a private or VPC destination ahead of the private drop.
pub fn private_accept_ahead(walk: &Option<Walk>) -> Check {
    const NAME: &str = "private_accept_ahead";
    let Some(walk) = walk else {
        return Check::fail(
            NAME,
            "the table has no forward chain, so nothing drops private destinations.",
            "load the persisted ruleset (see table_present)",
        );
    };
    let fix = "delete those rules (`nft delete rule <family> <table> <chain> handle <n>`), or narrow them to the LoadBalancer ranges, UDP 53 to dns_servers and UDP 123 to ntp_servers";
    if !walk.findings.is_empty() {
        return Check::fail(
            NAME,
            format!("ahead of the private drop: {}.", walk.findings.join("; ")),
            fix,
        );
    }
    if !walk.private_drop_reached {
        return Check::fail(
            NAME,
            "the chains that decide transit traffic never drop every private range.",
            "load the persisted ruleset, whose from_transit chain drops @private_ranges",
        );
    }
    Check::pass(
        NAME,
        "nothing accepts a private or VPC destination ahead of the private drop.",
    )
}

/// Check 5: no unicast route into a VPC range, in any table, and the kernel forwards no marked
/// transit packet to a VPC address other than by the Internet's own route, nor back out of the
/// transit interface.
pub fn vpc_route(
    found: &[routes::VpcRoute],
    lookups: &Result<VpcLookups, String>,
    transit: &[String],
) -> Check {
    const NAME: &str = "vpc_route";
    let asked = vpc_lookup_problems(lookups, transit);
    if found.is_empty() && asked.is_empty() {
        return Check::pass(
            NAME,
            "no route into a VPC range; the kernel forwards no transit packet into one.",
        );
    }
    let named: Vec<String> = found
        .iter()
        .map(|r| format!("{} in table {}", r.dst, r.table))
        .collect();
    let mut fix: Vec<String> = found
        .iter()
        .map(|r| format!("`ip route del {} table {}`", r.dst, r.table))
        .collect();
    let mut problems = Vec::new();
    if !named.is_empty() {
        problems.push(format!("routes into a VPC range: {}", named.join(", ")));
    }
    if !asked.is_empty() {
        problems.push(asked.join("; "));
        fix.push(
            "delete the rules and routes that lead there (`ip rule`, `ip route show table all`)"
                .into(),
        );
    }
    Check::fail(
        NAME,
        format!("{}.", problems.join("; ")),
        format!(
            "{} and remove it from the network configuration; the egress gateways SNAT onto the transit network, so the router needs no route back",
            fix.join(", ")
        ),
    )
}

/// What the kernel's answers for VPC addresses show: each forwarded back out of the transit
/// interface, or by a route other than the Internet's, or not understood.
fn vpc_lookup_problems(lookups: &Result<VpcLookups, String>, transit: &[String]) -> Vec<String> {
    let lookups = match lookups {
        Ok(lookups) => lookups,
        Err(why) => {
            return vec![format!(
                "the kernel was not asked about the VPC ranges: {why}"
            )]
        }
    };
    let internet = match &lookups.internet {
        Some((_, Lookup::Forwarded { route, .. })) => Some(route),
        _ => None,
    };
    lookups
        .vpc
        .iter()
        .filter_map(|(address, lookup)| match lookup {
            Lookup::Forwarded { route, dev }
                if Some(route) != internet || dev.as_ref().is_some_and(|d| transit.contains(d)) =>
            {
                Some(format!(
                    "a marked transit packet from {} to {address} is forwarded by {route}",
                    lookups.source
                ))
            }
            Lookup::Unreadable(why) => Some(format!(
                "the kernel's answer for {address} cannot be judged: {why}"
            )),
            _ => None,
        })
        .collect()
}

/// Check 6: transit sources leaving through the uplink are masqueraded or SNATed, whatever
/// else the packet is (a masquerade narrowed by another match leaves the rest untranslated).
pub fn uplink_snat(request: &Request, ruleset: &Ruleset) -> Check {
    const NAME: &str = "uplink_snat";
    let transit = request.transit_network;
    let mut narrowed = Vec::new();
    let mut found = false;
    for rule in ruleset
        .base_chains("postrouting")
        .filter(|(_, b)| b.kind == "nat")
        .flat_map(|(c, _)| ruleset.rules_of(c))
    {
        let f = ruleset.facts(rule);
        let source = match &f.saddr {
            Addresses::Any => true,
            Addresses::In(ranges) => covered(&[transit], ranges),
            _ => false,
        };
        let out = f.oifname.as_ref().is_none_or(|m| {
            (m.equal && m.names == [request.uplink.clone()])
                || (!m.equal && m.names == [request.transit_interface.clone()])
        });
        if !(f.source_nat && source && out) {
            continue;
        }
        let mut narrowing = f.other_matches.clone();
        narrowing.extend(f.udp_dport.iter().map(|_| "udp dport".to_string()));
        narrowing.extend(f.unknown.iter().cloned());
        if f.daddr != Addresses::Any {
            narrowing.push("ip daddr".into());
        }
        if narrowing.is_empty() {
            found = true;
        } else {
            narrowed.push(format!(
                "{} {} {} (rule handle {}) is narrowed by {}",
                rule.owner.family,
                rule.owner.table,
                rule.chain,
                rule.handle,
                narrowing.join(", ")
            ));
        }
    }
    if found {
        return Check::pass(
            NAME,
            format!(
                "{} is masqueraded going out of {}.",
                show(transit),
                request.uplink
            ),
        );
    }
    let narrowed = if narrowed.is_empty() {
        String::new()
    } else {
        format!(" ({}: the rest leaves untranslated)", narrowed.join("; "))
    };
    Check::fail(
        NAME,
        format!(
            "no nat postrouting rule masquerades {} going out of {}{narrowed}.",
            show(transit),
            request.uplink
        ),
        load_fix(request),
    )
}

fn show(range: Range) -> String {
    range.to_string()
}

fn gate(request: &Request, observed: &Observed) -> Gate {
    let (priority, names) = (request.gate_priority, &observed.transit_names);
    Gate {
        ipv4: observed
            .ipv4_rules
            .iter()
            .any(|r| r.is_ipv4_gate(priority, names, request.gate_mark)),
        ipv6: observed
            .ipv6_rules
            .iter()
            .any(|r| r.is_ipv6_gate(priority, names)),
    }
}

/// The rules at the gate's priority from the transit interface that refuse like the gate but are
/// narrowed by another selector: each, with what narrows it.
fn narrowed_gates(request: &Request, observed: &Observed) -> Vec<String> {
    let names = &observed.transit_names;
    (observed.ipv4_rules.iter().map(|r| ("-4", r)))
        .chain(observed.ipv6_rules.iter().map(|r| ("-6", r)))
        .filter(|(_, r)| {
            r.priority == request.gate_priority
                && r.iif.as_ref().is_some_and(|iif| names.contains(iif))
                && r.action.as_deref() == Some("prohibit")
                && !r.narrowing().is_empty()
        })
        .map(|(family, r)| {
            format!(
                "`ip {family} rule {}` is narrowed by {}, so it is not the gate",
                r.describe(),
                r.narrowing().join(", ")
            )
        })
        .collect()
}

/// Check 7: both gate rules, and no rule ahead of them that routes transit packets.
pub fn routing_gate(request: &Request, observed: &Observed, gate: Gate) -> Check {
    const NAME: &str = "routing_gate";
    let (priority, transit, mark) = (
        request.gate_priority,
        &request.transit_interface,
        request.gate_mark,
    );
    let v4 =
        format!("ip -4 rule add priority {priority} iif {transit} fwmark 0/{mark:#x} prohibit");
    let v6 = format!("ip -6 rule add priority {priority} iif {transit} prohibit");
    let mut problems = Vec::new();
    let mut fixes = Vec::new();
    if !gate.ipv4 {
        problems.push(format!("the IPv4 gate rule (`{v4}`) is missing"));
        fixes.push(format!("`{v4}`"));
    }
    if !gate.ipv6 {
        problems.push(format!("the IPv6 gate rule (`{v6}`) is missing"));
        fixes.push(format!("`{v6}`"));
    }
    problems.extend(narrowed_gates(request, observed));
    let names = &observed.transit_names;
    let ahead_4 = gate_rules::routing_ahead(
        &observed.ipv4_rules,
        |r| r.is_ipv4_gate(priority, names, mark),
        priority,
        names,
    );
    let ahead_6 = gate_rules::routing_ahead(
        &observed.ipv6_rules,
        |r| r.is_ipv6_gate(priority, names),
        priority,
        names,
    );
    let ahead: Vec<String> = (ahead_4.iter().map(|r| ("-4", r)))
        .chain(ahead_6.iter().map(|r| ("-6", r)))
        .map(|(family, r)| format!("ip {family} rule {}", r.describe()))
        .collect();
    if !ahead.is_empty() {
        problems.push(format!(
            "rules route transit packets ahead of the gate: {}",
            ahead.join(", ")
        ));
        fixes.push("delete those rules or give them a priority above the gate's".into());
    }
    let writers = ahead::mark_writers(request, &observed.ruleset);
    if !writers.is_empty() {
        problems.push(format!(
            "other rules may set the gate's mark bit {mark:#x}, and the gate lets every packet with it through: {}",
            writers.join("; ")
        ));
        fixes.push(format!(
            "delete those rules, or have them keep the bit {mark:#x} clear"
        ));
    }
    let around = ahead::around_forward(request, &observed.ruleset);
    if !around.is_empty() {
        problems.push(format!(
            "paths move transit packets around the forward chain and the gate: {}",
            around.join("; ")
        ));
        fixes.push("delete them (`nft delete rule|chain|flowtable ...`)".into());
    }
    let mut local = routes::forwarding_in_local_table(&observed.routes);
    local.extend(routes::forwarding_in_local_table(
        &observed.ipv6_local_routes,
    ));
    if !local.is_empty() {
        problems.push(format!(
            "table local, which the rule at priority 0 looks up ahead of the gate, forwards: {}",
            local.join(", ")
        ));
        fixes.push("delete those routes from table local".into());
    }
    if problems.is_empty() {
        return Check::pass(
            NAME,
            format!("both gate rules hold at priority {priority}, and no other rule sets the mark bit {mark:#x} or moves transit packets around the forward chain."),
        );
    }
    Check::fail(
        NAME,
        format!("{}.", problems.join("; ")),
        format!(
            "{} (`systemctl restart {}` adds both)",
            fixes.join(", "),
            unit_name(request)
        ),
    )
}

/// Check 8: the transit interface forwards.
pub fn forwarding(request: &Request, forwarding: Forwarding) -> Check {
    const NAME: &str = "forwarding";
    let key =
        deevnet_runtime::sysctl::SysctlKey::ipv4_conf(&request.transit_interface, "forwarding");
    if forwarding.transit {
        return Check::pass(NAME, format!("{key} is 1."));
    }
    Check::fail(
        NAME,
        format!("{key} is 0: the router forwards nothing from the transit network."),
        format!("`sysctl -w {key}=1` and persist it in /etc/sysctl.d (the role does)"),
    )
}

/// Check 9: the persisted file, loaded in a scratch namespace, gives the running table.
pub fn persisted(request: &Request, observed: &Observed) -> Check {
    const NAME: &str = "persisted";
    let path = request.ruleset_path.display();
    let role = "run the deevnet.net.transit_router role to write it";
    let loaded = match &observed.persisted {
        Persisted::Missing => return Check::fail(NAME, format!("{path} does not exist."), role),
        Persisted::Refused(why) => return Check::fail(NAME, format!("{why}."), role),
        Persisted::Loaded(loaded) => loaded,
    };
    let owner = our_table(request);
    if !loaded.has_table(&owner) {
        return Check::fail(
            NAME,
            format!("{path} does not define table inet {}.", request.table),
            role,
        );
    }
    if !observed.ruleset.has_table(&owner) {
        return Check::fail(
            NAME,
            format!(
                "{path} defines table inet {}, but it is not running.",
                request.table
            ),
            load_fix(request),
        );
    }
    let difference = persisted::compare(loaded, &observed.ruleset, &owner);
    if difference.is_empty() {
        return Check::pass(NAME, format!("{path} gives the running table."));
    }
    let mut parts = Vec::new();
    if !difference.missing.is_empty() {
        parts.push(format!(
            "missing from the running table: {}",
            difference.missing.join("; ")
        ));
    }
    if !difference.extra.is_empty() {
        parts.push(format!(
            "running but not in {path}: {}",
            difference.extra.join("; ")
        ));
    }
    if difference.reordered {
        parts.push("the same objects in another order".into());
    }
    Check::fail(
        NAME,
        format!(
            "{path} differs from the running table: {}.",
            parts.join("; ")
        ),
        format!(
            "`nft -f {path}` to run what is persisted, or run the role to persist what should run"
        ),
    )
}

/// Check 10: the unit is enabled for boot and, merged with its drop-ins, reloads with
/// nftables.service (or nftables.conf includes the persisted file); no drop-in changes what it
/// runs or whether it runs, and no unit of its name in a folder systemd reads first stands in its
/// place.
pub fn reload_survival(request: &Request, files: &UnitFiles) -> Check {
    const NAME: &str = "reload_survival";
    let unit_path = request.unit_path.display();
    let role = "run the deevnet.net.transit_router role";
    let text = match &files.unit {
        Ok(Some(text)) => text,
        Ok(None) => return Check::fail(NAME, format!("{unit_path} does not exist."), role),
        Err(why) => return Check::fail(NAME, format!("{why}."), role),
    };
    let Some(link) = &files.enabled_by else {
        return Check::fail(
            NAME,
            format!("{unit_path} is not enabled for boot."),
            format!("`systemctl enable {}`", unit_name(request)),
        );
    };
    if !files.shadowed_by.is_empty() {
        return Check::fail(
            NAME,
            format!(
                "systemd loads {} instead of {unit_path} (a folder it reads first).",
                files.shadowed_by.join(", ")
            ),
            "remove those unit files and `systemctl daemon-reload`",
        );
    }
    let merged = unit::merge(text, &files.dropins);
    if !merged.unjudged.is_empty() {
        return Check::fail(
            NAME,
            format!(
                "drop-ins change what the unit runs or whether it runs: {}.",
                merged.unjudged.join("; ")
            ),
            "remove those drop-ins (`systemctl cat` lists them) and `systemctl daemon-reload`",
        );
    }
    let with_dropins = if files.dropins.is_empty() {
        String::new()
    } else {
        " with its drop-ins".to_string()
    };
    if merged.reloads_with_nftables() {
        return Check::pass(
            NAME,
            format!(
                "{unit_path}{with_dropins} is enabled ({link}) and reloads with nftables.service."
            ),
        );
    }
    let conf_path = request.nftables_conf_path.display();
    match &files.nftables_conf {
        Ok(Some(conf)) => {
            if let Some(include) = unit::includes(conf, &request.ruleset_path) {
                return Check::pass(
                    NAME,
                    format!("{unit_path}{with_dropins} is enabled ({link}); {conf_path} includes \"{include}\"."),
                );
            }
        }
        Ok(None) => {}
        Err(why) => return Check::fail(NAME, format!("{why}."), role),
    }
    Check::fail(
        NAME,
        format!(
            "{unit_path}{with_dropins} lacks ReloadPropagatedFrom=nftables.service and {conf_path} does not include {}: `systemctl reload nftables` removes the table for good.",
            request.ruleset_path.display()
        ),
        "add ReloadPropagatedFrom=nftables.service to the unit (the role's unit has it) and `systemctl daemon-reload`",
    )
}
