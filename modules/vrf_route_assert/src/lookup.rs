//! The lookup check: how one destination resolves for traffic in the VRF, or, with `iif`, for
//! a packet arriving by that interface ([`crate::input`]).

use crate::connected::ConnectedPrefix;
use crate::input::{Arrival, NotForwarded, ReversePath};
use crate::params::{ExpectedTable, LookupCheck};
use crate::{CheckResult, VrfView};
use deevnet_runtime::netlink::{table_name, Family, Links, Lookup, Refusal, Route, RouteKind};
use deevnet_runtime::sysctl::SysctlKey;
use serde_json::{json, Map, Value};

const LOCAL_TABLE: u32 = 255;
const MAIN_TABLE: u32 = 254;
const DEFAULT_TABLE: u32 = 253;

/// What a lookup came to: the kernel's answer, or what the arrival device's sysctls make of it
/// on the input path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Kernel(Lookup),
    /// Forwarding is off where the packet arrives.
    NotForwarded(NotForwarded),
    /// The arrival device's reverse-path filter drops the source.
    ReversePath(ReversePath),
    /// The kernel refuses the packet's addresses (EINVAL with rp_filter off and no blackhole
    /// for the destination): a martian, or a source the node routes back by a blackhole.
    Martian,
}

/// The table whose answers are the lookup's own (anything else is fall-through).
struct OwnTable {
    table: u32,
    /// How the messages name it.
    whose: String,
    /// The default VRF's lookups go through local, main and default: all three are its own.
    default_vrf: bool,
}

impl OwnTable {
    /// An output lookup's: the VRF's table (none for the default VRF); an input lookup's: the
    /// table of the VRF the arrival device is in, main for the default VRF.
    fn of(view: &VrfView, arrival: Option<&Arrival>) -> Option<OwnTable> {
        match arrival {
            Some(arrival) => Some(OwnTable {
                table: arrival.own_table(),
                whose: format!("{}'s own, where {} is", arrival.vrf_name(), arrival.iif),
                default_vrf: arrival.vrf.is_none(),
            }),
            None => view.own_table().map(|table| OwnTable {
                table,
                whose: "the VRF's own".to_string(),
                default_vrf: false,
            }),
        }
    }

    fn falls_through(&self, table: u32) -> bool {
        let default_vrf_table = [LOCAL_TABLE, MAIN_TABLE, DEFAULT_TABLE].contains(&table);
        table != self.table && !(self.default_vrf && default_vrf_table)
    }
}

/// The lookup check, and the interface the answer leaves by (when traffic leaves). `prefix` is
/// the connected prefix of a forbidden interface the lookup was generated for; `arrival` the
/// interface an input lookup's packet arrives by.
pub fn check_lookup(
    view: &VrfView,
    links: &Links,
    lookup: &LookupCheck,
    prefix: Option<&ConnectedPrefix>,
    arrival: Option<&Arrival>,
    answer: &Answer,
) -> (CheckResult, Option<(Family, String)>) {
    let own = OwnTable::of(view, arrival);
    let mut unmet: Vec<String> = Vec::new();
    let (mut actual, text, exit) = match answer {
        Answer::Kernel(Lookup::Route(route)) => {
            routed(links, lookup, own.as_ref(), route, &mut unmet)
        }
        refusal => {
            let (actual, text) = refused(links, lookup, arrival, refusal, &mut unmet);
            (actual, text, None)
        }
    };
    if let (Some(arrival), Value::Object(map)) = (arrival, &mut actual) {
        map.insert("src".into(), json!(lookup.src));
        map.insert("iif".into(), json!(arrival.iif));
    }
    let ok = unmet.is_empty();
    let vrf = view.name;
    let subject = subject(vrf, lookup, prefix, arrival);
    let mut msg = format!("{vrf}: {subject} {text}");
    if !ok {
        msg.push_str(&format!(", expected {}", unmet.join(", ")));
        if let Some(fix) = fix(lookup, arrival, answer) {
            msg.push_str(&format!("; {fix}"));
        }
    }
    let result = CheckResult {
        vrf: vrf.to_string(),
        check: format!("lookup {}", lookup.dst),
        ok,
        expected: expected(lookup, own.as_ref(), prefix),
        actual,
        msg,
    };
    (result, exit)
}

/// The failed check of an input lookup whose `iif` the node does not have.
pub fn unknown_iif(vrf: &str, lookup: &LookupCheck, iif: &str) -> CheckResult {
    CheckResult {
        vrf: vrf.to_string(),
        check: format!("lookup {}", lookup.dst),
        ok: false,
        expected: json!({"iif": iif}),
        actual: json!({"type": "no_interface", "src": lookup.src, "iif": iif}),
        msg: format!(
            "{vrf}: {} from {} arriving by {iif}: the node has no interface named {iif}; give \
             the interface the packet arrives by as ip link names it (such as the uplink nic5, \
             or the VRF's L3VNI bridge vrfbr_<zone>), or apply the network that creates it",
            lookup.dst,
            lookup.src.map(|src| src.to_string()).unwrap_or_default()
        ),
    }
}

/// What was looked up: the destination, and the packet's source and arrival interface.
fn subject(
    vrf: &str,
    lookup: &LookupCheck,
    prefix: Option<&ConnectedPrefix>,
    arrival: Option<&Arrival>,
) -> String {
    let mut subject = lookup.dst.to_string();
    if let Some(connected) = prefix {
        subject.push_str(&format!(
            " (in {}, connected on {})",
            connected.prefix, connected.dev
        ));
    }
    if let Some(src) = lookup.src {
        subject.push_str(&format!(" from {src}"));
    }
    if let Some(arrival) = arrival {
        subject.push_str(&format!(" arriving by {}", arrival.iif));
        let in_vrf = arrival.vrf.as_ref().map_or("default", |v| v.name.as_str());
        if in_vrf != vrf {
            subject.push_str(&format!(" (in {})", arrival.vrf_name()));
        }
    }
    subject
}

/// `via GW dev DEV`, as much of it as the route has.
fn path(links: &Links, route: &Route) -> String {
    let dev = route.oif.map(|index| links.name_of(index));
    match (&route.gateway, &dev) {
        (Some(gateway), Some(dev)) => format!("via {gateway} dev {dev}"),
        (Some(gateway), None) => format!("via {gateway}"),
        (None, Some(dev)) => format!("via dev {dev}"),
        (None, None) => "with no interface".to_string(),
    }
}

/// A route answered: its actual value and text, what it leaves by, and the unmet expectations.
fn routed(
    links: &Links,
    lookup: &LookupCheck,
    own: Option<&OwnTable>,
    route: &Route,
    unmet: &mut Vec<String>,
) -> (Value, String, Option<(Family, String)>) {
    let dev = route.oif.map(|index| links.name_of(index));
    let fall_through = own.is_some_and(|own| own.falls_through(route.table));
    let table_text = match (route.table, fall_through) {
        (0, true) => "no table matched: assumed on-link, fall-through".to_string(),
        (0, false) => "no table matched: assumed on-link".to_string(),
        (table, true) => format!("table {}: fall-through", table_name(table)),
        (table, false) => format!("table {}", table_name(table)),
    };
    let verb = match route.kind {
        RouteKind::Unicast => "resolves".to_string(),
        RouteKind::Local => "is local to the node, delivered".to_string(),
        other => format!("resolves as {}", other.name()),
    };
    if lookup.reachable == Some(false) {
        unmet.push("unreachable".into());
    }
    if let Some(via) = lookup.via.filter(|via| route.gateway != Some(*via)) {
        unmet.push(format!("via {via}"));
    }
    if let Some(expected) = lookup.dev.as_ref().filter(|e| dev.as_ref() != Some(*e)) {
        unmet.push(format!("dev {expected}"));
    }
    if let Some(forbidden) = lookup.not_dev.as_ref().filter(|f| dev.as_ref() == Some(*f)) {
        unmet.push(format!("not dev {forbidden}"));
    }
    match (lookup.table, own) {
        (Some(ExpectedTable::Id(table)), _) if route.table != table => {
            unmet.push(format!("table {}", table_name(table)))
        }
        (None, Some(own)) if fall_through && unmet.is_empty() => unmet.push(format!(
            "an answer from table {} ({})",
            table_name(own.table),
            own.whose
        )),
        _ => {}
    }
    let actual = json!({
        "type": route.kind.name(),
        "via": route.gateway,
        "dev": dev,
        "table": route.table,
        "fall_through": fall_through,
    });
    let exit = match (route.kind, dev) {
        // A local answer leaves by no interface.
        (RouteKind::Local, _) | (_, None) => None,
        (_, Some(dev)) => Some((route.family, dev)),
    };
    let text = format!("{verb} {} ({table_text})", path(links, route));
    (actual, text, exit)
}

/// A refused lookup: its actual value and text, and the unmet expectations (those that need a
/// route).
fn refused(
    links: &Links,
    lookup: &LookupCheck,
    arrival: Option<&Arrival>,
    answer: &Answer,
    unmet: &mut Vec<String>,
) -> (Value, String) {
    if lookup.reachable == Some(true) {
        unmet.push("reachable".into());
    }
    if let Some(via) = lookup.via {
        unmet.push(format!("via {via}"));
    }
    if let Some(dev) = &lookup.dev {
        unmet.push(format!("dev {dev}"));
    }
    if let Some(ExpectedTable::Id(table)) = lookup.table {
        // A refusal names no table, so the expectation cannot be confirmed.
        unmet.push(format!("an answer from table {}", table_name(table)));
    }
    let iif = arrival.map_or("", |arrival| arrival.iif.as_str());
    match answer {
        Answer::Kernel(Lookup::Refused(refusal)) => {
            let mut text = format!("is {}", refusal.describe());
            if *refusal == Refusal::NoRoute && lookup.src.is_some() && arrival.is_none() {
                text.push_str(
                    " (the kernel answers so too when src is not an address of this node: \
                     without iif, the lookup is the node's own traffic)",
                );
            }
            (json!({"type": "refused", "reason": refusal.name()}), text)
        }
        Answer::NotForwarded(not_forwarded) => not_forwarded_outcome(iif, not_forwarded),
        Answer::ReversePath(reverse) => reverse_path_outcome(links, lookup, iif, reverse),
        // A route never comes here (check_lookup takes it to `routed`).
        Answer::Martian | Answer::Kernel(Lookup::Route(_)) => (
            json!({"type": "refused", "reason": "martian"}),
            "is dropped as a martian: the kernel refuses its source or destination (loopback, \
             multicast, broadcast, 0.0.0.0, a source that is the node's own address or that \
             it routes back by a blackhole)"
                .to_string(),
        ),
    }
}

fn sysctl_values(sysctls: &[(SysctlKey, Option<String>)]) -> String {
    let shown: Vec<String> = sysctls
        .iter()
        .map(|(key, value)| format!("{key} = {}", value.as_deref().unwrap_or("missing")))
        .collect();
    shown.join(", ")
}

fn not_forwarded_outcome(iif: &str, not_forwarded: &NotForwarded) -> (Value, String) {
    let sysctls: Map<String, Value> = not_forwarded
        .sysctls
        .iter()
        .map(|(key, value)| (key.to_string(), json!(value)))
        .collect();
    let values = sysctl_values(&not_forwarded.sysctls);
    let text = match not_forwarded.family {
        Family::V4 => format!("is not forwarded: {iif} has IPv4 forwarding off ({values})"),
        Family::V6 => format!(
            "is not forwarded: IPv6 forwarding is off for packets arriving by {iif} ({values})"
        ),
    };
    let actual = json!({"type": "refused", "reason": "not_forwarded", "sysctls": sysctls});
    (actual, text)
}

fn reverse_path_outcome(
    links: &Links,
    lookup: &LookupCheck,
    iif: &str,
    reverse: &ReversePath,
) -> (Value, String) {
    let src = lookup.src.map(|src| src.to_string()).unwrap_or_default();
    let all_key = SysctlKey::ipv4_conf("all", "rp_filter");
    let own_key = SysctlKey::ipv4_conf(iif, "rp_filter");
    let shown = |value: &Option<String>| value.clone().unwrap_or("missing".into());
    let level = reverse
        .effective
        .map_or("unknown".to_string(), |level| level.to_string());
    let (back_text, route_back) = match &reverse.route_back {
        Lookup::Route(route) => (
            format!(
                "routes {src} back {} (table {})",
                path(links, route),
                table_name(route.table)
            ),
            json!({"type": route.kind.name(), "via": route.gateway,
                   "dev": route.oif.map(|index| links.name_of(index)), "table": route.table}),
        ),
        Lookup::Refused(refusal) => (
            format!("has no route back to {src}: it is {}", refusal.describe()),
            json!({"type": "refused", "reason": refusal.name()}),
        ),
    };
    let text = format!(
        "is dropped by {iif}'s reverse-path filter: effective rp_filter {level} (the larger of \
         {all_key} = {}, {own_key} = {}), and the node {back_text}",
        shown(&reverse.all),
        shown(&reverse.own)
    );
    let actual = json!({
        "type": "refused",
        "reason": "reverse_path",
        "rp_filter": {"all": reverse.all, "interface": reverse.own, "effective": reverse.effective},
        "route_back": route_back,
    });
    (actual, text)
}

/// What to change when a refusal on the input path fails the check.
fn fix(lookup: &LookupCheck, arrival: Option<&Arrival>, answer: &Answer) -> Option<String> {
    let iif = &arrival?.iif;
    match answer {
        Answer::NotForwarded(NotForwarded {
            family: Family::V4, ..
        }) => Some(format!(
            "set {}=1 (deevnet.net.sysctl_forwarding interfaces: [{iif}])",
            SysctlKey::ipv4_conf(iif, "forwarding")
        )),
        Answer::NotForwarded(_) => Some(format!(
            "set net.ipv6.conf.all.forwarding=1 (or, on kernels 6.17 and later, {}=1)",
            SysctlKey::ipv6_conf(iif, "force_forwarding")
        )),
        Answer::ReversePath(_) => Some(format!(
            "set rp_filter 0 on {iif} and all (deevnet.net.sysctl_forwarding rp_filter: {{all: \
             0, {iif}: 0}}), or route {} back by {iif}",
            lookup.src.map(|src| src.to_string()).unwrap_or_default()
        )),
        _ => None,
    }
}

/// The check's `expected`: the lookup's expectations, and the table its answer must come from.
fn expected(
    lookup: &LookupCheck,
    own: Option<&OwnTable>,
    prefix: Option<&ConnectedPrefix>,
) -> Value {
    let mut expected = Map::new();
    if let Some(via) = lookup.via {
        expected.insert("via".into(), json!(via));
    }
    for (key, value) in [("dev", &lookup.dev), ("not_dev", &lookup.not_dev)] {
        if let Some(value) = value {
            expected.insert(key.into(), json!(value));
        }
    }
    let table = match (lookup.table, own) {
        (Some(ExpectedTable::Id(table)), _) => Some(json!(table)),
        (Some(ExpectedTable::Any), _) => Some(json!("any")),
        (None, own) => own.map(|own| json!(own.table)),
    };
    if let Some(table) = table {
        expected.insert("table".into(), table);
    }
    if let Some(reachable) = lookup.reachable {
        expected.insert("reachable".into(), json!(reachable));
    }
    if let Some(connected) = prefix {
        expected.insert("connected_prefix".into(), json!(connected.prefix));
    }
    Value::Object(expected)
}
