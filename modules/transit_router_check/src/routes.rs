//! The routes as `ip -j -4 route show table all` prints them, and the ones into a VPC range.

use deevnet_runtime::nft::ranges::{any_overlap, Range};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One route of `ip -j -4 route show table all`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct IpRoute {
    /// Absent: a unicast route.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub dst: String,
    /// Absent: `main`.
    pub table: Option<String>,
    pub dev: Option<String>,
    pub gateway: Option<String>,
}

/// A route into a VPC range, as the result shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VpcRoute {
    pub dst: String,
    pub table: String,
    pub dev: Option<String>,
    pub gateway: Option<String>,
}

/// Parses `ip -j route show`.
pub fn parse(json: &str) -> Result<Vec<IpRoute>, String> {
    serde_json::from_str(json).map_err(|e| format!("JSON that does not parse: {e}"))
}

/// The unicast routes (prefix length above 0) whose destination overlaps a VPC range;
/// blackhole, unreachable, prohibit, local and broadcast routes carry nothing there.
pub fn into_vpc(routes: &[IpRoute], vpc_ranges: &[Range]) -> Vec<VpcRoute> {
    routes
        .iter()
        .filter(|r| r.kind.as_deref().is_none_or(|k| k == "unicast"))
        .filter_map(|r| {
            let dst = Range::parse_cidr(&r.dst)?;
            let default = dst.first == 0 && dst.last == u32::MAX;
            (!default && any_overlap(&[dst], vpc_ranges)).then(|| VpcRoute {
                dst: r.dst.clone(),
                table: r.table.clone().unwrap_or_else(|| "main".into()),
                dev: r.dev.clone(),
                gateway: r.gateway.clone(),
            })
        })
        .collect()
}

/// The routes of table `local` that forward: the kernel's own there are `local` and `broadcast`
/// (and `multicast`, `anycast`); any other route there is looked up by the rule at priority 0,
/// ahead of the routing gate.
pub fn forwarding_in_local_table(routes: &[IpRoute]) -> Vec<String> {
    routes
        .iter()
        .filter(|r| r.table.as_deref() == Some("local"))
        .filter(|r| {
            !matches!(
                r.kind.as_deref(),
                Some("local" | "broadcast" | "multicast" | "anycast")
            )
        })
        .map(|r| {
            let kind = r.kind.as_deref().unwrap_or("unicast");
            let dev = r
                .dev
                .as_deref()
                .map(|d| format!(" dev {d}"))
                .unwrap_or_default();
            format!("{kind} {}{dev} in table local", r.dst)
        })
        .collect()
}

/// How many addresses the kernel is asked about at most; past it the answer is a violation.
pub const MAX_PROBES: usize = 256;

/// The addresses of the VPC ranges to ask the kernel about: each range's first address and, for
/// every route (any table) and every rule's `to` prefix that overlaps it, where that prefix starts
/// and ends inside it. Between two of them every lookup meets the same routes and rules, so each
/// answer the kernel can give for a VPC address is given for one of them.
pub fn probe_points(vpc: &[Range], routes: &[IpRoute], rule_dsts: &[Range]) -> Vec<u32> {
    let prefixes: Vec<Range> = routes
        .iter()
        .filter_map(|r| Range::parse_cidr(&r.dst))
        .chain(rule_dsts.iter().copied())
        .collect();
    let mut points: Vec<u32> = Vec::new();
    for range in vpc {
        points.push(range.first);
        for prefix in prefixes.iter().filter(|p| p.overlaps(range)) {
            points.push(prefix.first.max(range.first));
            if let Some(after) = prefix.last.checked_add(1) {
                if after <= range.last {
                    points.push(after);
                }
            }
        }
    }
    points.sort_unstable();
    points.dedup();
    points
}

/// What the kernel answered `ip -j route get fibmatch <address> from <source> iif <transit> mark
/// <gate_mark>`: the route a marked transit packet meets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// It is forwarded by `route` (`dst`, `type`, `gateway`, `dev`, `table` as ip prints them),
    /// out of `dev`.
    Forwarded { route: String, dev: Option<String> },
    /// It is delivered locally or refused; why.
    NotForwarded(String),
    /// An answer the module cannot read.
    Unreadable(String),
}

/// The kernel's refusals of a forwarded lookup, by ip's message: a `prohibit` route or rule,
/// an `unreachable` route or forwarding off, no route, a `blackhole` route (or a martian), the
/// reverse-path filter.
const REFUSALS: &[(&str, &str)] = &[
    ("RTNETLINK answers: Permission denied", "prohibited"),
    ("RTNETLINK answers: No route to host", "unreachable"),
    ("RTNETLINK answers: Network is unreachable", "no route"),
    ("RTNETLINK answers: Invalid argument", "blackholed"),
    (
        "RTNETLINK answers: Invalid cross-device link",
        "refused by the reverse-path filter",
    ),
];

/// Reads one answer of `ip -j route get fibmatch`: its output, or the error the trusted runner
/// gave (which ends with ip's message).
pub fn read_lookup(answer: &Result<String, String>) -> Lookup {
    let json = match answer {
        Ok(json) => json,
        Err(why) => {
            return match REFUSALS
                .iter()
                .find(|(message, _)| why.trim_end().ends_with(message))
            {
                Some((_, refusal)) => Lookup::NotForwarded((*refusal).to_string()),
                None => Lookup::Unreadable(why.clone()),
            }
        }
    };
    let route = serde_json::from_str::<Vec<Value>>(json)
        .ok()
        .and_then(|routes| routes.into_iter().next());
    let Some(route) = route else {
        return Lookup::Unreadable(format!("an answer that is not one route: {}", json.trim()));
    };
    let field = |key: &str| route.get(key).and_then(Value::as_str).map(str::to_string);
    if let Some(kind @ ("local" | "broadcast" | "multicast")) = field("type").as_deref() {
        return Lookup::NotForwarded(format!("delivered as {kind}"));
    }
    let mut words = vec![field("dst").unwrap_or_else(|| "?".into())];
    for key in ["type", "gateway", "dev", "table"] {
        if let Some(value) = field(key) {
            let shown = if key == "gateway" { "via" } else { key };
            words.push(format!("{shown} {value}"));
        }
    }
    if field("table").is_none() {
        words.push("table main".into());
    }
    Lookup::Forwarded {
        route: words.join(" "),
        dev: field("dev"),
    }
}
