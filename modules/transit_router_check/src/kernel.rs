//! The checks of what the kernel does with transit packets outside the table and the gate:
//! the transit interface as packets reach it ([`transit_interface`]: a master, XDP, tc, another
//! interface in the transit network), rules nft cannot list ([`legacy_tables`]), and the
//! reverse-path filter that meets the gate ([`reverse_path`]).

use crate::checks::our_prerouting_facts;
use crate::gate::IpRule;
use crate::nft::Ruleset;
use crate::report::Check;
use crate::Request;
use deevnet_runtime::sysctl::SysctlKey;

/// What the node showed of the transit interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitInterface {
    /// The bridge, bond or VRF it is enslaved to.
    pub master: Option<String>,
    /// An XDP program is attached.
    pub xdp: bool,
    /// Each tc qdisc or filter on it the audit cannot prove harmless; `Err`: tc not read, and why.
    pub tc: Result<Vec<String>, String>,
    /// The other interfaces holding an address in the transit network, each with it.
    pub others_in_network: Vec<String>,
    /// The devices stacked on it (VLAN, macvlan...), each with its kind.
    pub stacked: Vec<String>,
}

/// The check that what arrives from the transit network arrives on the transit interface, as
/// itself, to the table and the gate: not enslaved (its packets would arrive from the master), no
/// XDP program, no tc filter that may redirect or mark them ahead of both, no other interface in
/// the transit network, no device stacked on it.
pub fn transit_interface(request: &Request, seen: &TransitInterface) -> Check {
    const NAME: &str = "transit_interface";
    let transit = &request.transit_interface;
    let mut problems = Vec::new();
    let mut fixes = Vec::new();
    if let Some(master) = &seen.master {
        problems.push(format!(
            "{transit} is enslaved to {master}: its packets arrive from {master}, which neither the table's iifname nor the gate's iif names"
        ));
        fixes.push(format!("`ip link set {transit} nomaster`"));
    }
    if !seen.stacked.is_empty() {
        problems.push(format!(
            "devices stacked on {transit} receive from the transit wire as themselves: {}",
            seen.stacked.join(", ")
        ));
        fixes.push("delete them (`ip link del <device>`)".into());
    }
    if seen.xdp {
        problems.push(format!(
            "an XDP program is attached to {transit}: it may redirect packets ahead of the table and the gate"
        ));
        fixes.push(format!("`ip link set {transit} xdp off`"));
    }
    match &seen.tc {
        Ok(found) if found.is_empty() => {}
        Ok(found) => {
            problems.push(format!(
                "tc on {transit} may move or mark packets ahead of the forward hook: {}",
                found.join("; ")
            ));
            fixes.push(format!(
                "delete them (`tc qdisc del dev {transit} clsact`, `tc qdisc del dev {transit} ingress`)"
            ));
        }
        Err(why) => {
            problems.push(format!("tc on {transit} cannot be judged: {why}"));
            fixes.push("make /usr/sbin/tc root's and runnable".into());
        }
    }
    if !seen.others_in_network.is_empty() {
        problems.push(format!(
            "other interfaces hold an address in the transit network {}: {}; what arrives there meets neither the table nor the gate",
            request.transit_network,
            seen.others_in_network.join(", ")
        ));
        fixes.push("remove those addresses (`ip addr del <address> dev <interface>`)".into());
    }
    if problems.is_empty() {
        return Check::pass(
            NAME,
            format!("{transit} has no master, no device stacked on it, no XDP program and no tc filter that moves or marks packets; no other interface is in the transit network."),
        );
    }
    Check::fail(NAME, format!("{}.", problems.join("; ")), fixes.join(", "))
}

/// The check that no iptables-legacy table is loaded: nft cannot list them, so what they mark,
/// accept, duplicate (`TEE`) or redirect is unknown. `Err`: not read, and why.
pub fn legacy_tables(tables: &Result<Vec<String>, String>) -> Check {
    const NAME: &str = "legacy_tables";
    match tables {
        Ok(names) if names.is_empty() => {
            Check::pass(NAME, "no iptables-legacy table is loaded.")
        }
        Ok(names) => Check::fail(
            NAME,
            format!(
                "iptables-legacy tables are loaded ({}): nft cannot list them, so what they mark, accept or send elsewhere cannot be judged.",
                names.join(", ")
            ),
            "flush them and unload their modules (`iptables-legacy-save` shows them; move their rules into nftables)",
        ),
        Err(why) => Check::fail(
            NAME,
            format!("the iptables-legacy tables cannot be read: {why}."),
            "run the audit as root on the node itself",
        ),
    }
}

/// The sysctls the reverse-path filter reads on the uplink, where the answers to transit traffic
/// arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReversePathSysctls {
    pub rp_filter_all: u8,
    pub rp_filter_uplink: u8,
    pub src_valid_mark_all: bool,
    pub src_valid_mark_uplink: bool,
}

/// Whether the table's prerouting chain ORs the gate's bit into what arrives on `ifname` (a rule
/// naming it, or naming no interface).
fn marks(request: &Request, ruleset: &Ruleset, ifname: &str) -> bool {
    our_prerouting_facts(request, ruleset).any(|f| {
        f.mark_or == Some(u64::from(request.gate_mark))
            && f.iifname
                .as_ref()
                .is_none_or(|m| m.admits(ifname) == Some(true))
    })
}

/// Whether some IPv4 rule refuses a lookup from the transit interface that carries no mark: the
/// gate, or any `prohibit`, `blackhole` or `unreachable` rule naming it whose mark selector
/// matches 0.
fn refuses_unmarked_from_transit(rules: &[IpRule], transit: &[String]) -> bool {
    rules.iter().any(|r| {
        let refuses = matches!(
            r.action.as_deref(),
            Some("prohibit" | "blackhole" | "unreachable")
        );
        let from_transit = r.iif.as_ref().is_some_and(|iif| transit.contains(iif));
        !r.not && refuses && from_transit && r.matches_mark(0)
    })
}

/// What the reverse-path check reads: the sysctls, the IPv4 rules and the transit interface's
/// names.
#[derive(Debug, Clone, Copy)]
pub struct ReversePathInput<'a> {
    pub sysctls: ReversePathSysctls,
    pub ipv4_rules: &'a [IpRule],
    pub transit_names: &'a [String],
}

/// The check that the answers to transit traffic get through the reverse-path filter. An answer
/// arriving on the uplink for the transit network is checked by a lookup of its source as if it
/// came in on the transit interface, with the packet's mark only when `src_valid_mark` is on
/// (`conf.all` or the uplink's) and 0 otherwise: unmarked, that lookup meets the gate's
/// `prohibit`, and with `rp_filter` 1 or 2 (the larger of `conf.all` and the uplink's) the answer
/// is dropped. So the router forwards nothing back unless rp_filter is 0 there, or
/// `src_valid_mark` is on and the table marks what arrives on the uplink. Without the table's
/// mark on transit packets, or without a rule that refuses them unmarked, there is no such drop
/// to judge. Availability only: a router that drops the answers lets nothing more through.
pub fn reverse_path(request: &Request, ruleset: &Ruleset, input: ReversePathInput) -> Check {
    const NAME: &str = "reverse_path";
    let (uplink, seen) = (&request.uplink, input.sysctls);
    let rp = seen.rp_filter_all.max(seen.rp_filter_uplink);
    let rp_key = SysctlKey::ipv4_conf(uplink, "rp_filter");
    if rp == 0 {
        return Check::pass(
            NAME,
            format!("{rp_key} is 0 (with conf.all): answers from {uplink} are not reverse-path filtered."),
        );
    }
    if !refuses_unmarked_from_transit(input.ipv4_rules, input.transit_names)
        || !marks(request, ruleset, &request.transit_interface)
    {
        return Check::pass(
            NAME,
            format!("{rp_key} is {rp}, but no transit traffic passes an IPv4 rule refusing what arrives on {} unmarked, so no answer meets one.", request.transit_interface),
        );
    }
    let svm = seen.src_valid_mark_all || seen.src_valid_mark_uplink;
    let svm_key = SysctlKey::ipv4_conf(uplink, "src_valid_mark");
    let marked = marks(request, ruleset, uplink);
    if svm && marked {
        return Check::pass(
            NAME,
            format!("{rp_key} is {rp}, {svm_key} is on and the table marks what arrives on {uplink}: the reverse-path lookup of an answer passes the gate."),
        );
    }
    let mut missing = Vec::new();
    if !svm {
        missing.push(format!("{svm_key} is 0 (and conf.all's too)"));
    }
    if !marked {
        missing.push(format!(
            "no prerouting rule of table inet {} marks what arrives on {uplink} (or on every interface) with {:#x}",
            request.table, request.gate_mark
        ));
    }
    Check::fail(
        NAME,
        format!(
            "{rp_key} is {rp} (the larger of conf.all's and {uplink}'s) and {}: the reverse-path lookup of every answer from {uplink} to the transit network meets the gate's prohibit unmarked, so the answers are dropped (the router is closed, and broken).",
            missing.join(" and ")
        ),
        format!(
            "`sysctl -w net.ipv4.conf.all.src_valid_mark=1` and a prerouting rule in the table that marks the replies to the transit network, `iifname != \"{}\" ct direction reply ct original ip saddr {} meta mark set meta mark | {:#010x}` (the deevnet.net.transit_router role does both); or `sysctl -w {rp_key}=0` with conf.all's 0; persist it in /etc/sysctl.d",
            request.transit_interface, request.transit_network, request.gate_mark
        ),
    )
}
