//! `deevnet.net.vrf_route_assert`: where tenant traffic really goes, asked of the kernel.
//!
//! The evaluation here runs against a [`Kernel`]: the node's (netlink and `/proc/sys`, in
//! [`kernel`]) or recorded answers in tests. For each declared VRF it checks that the VRF
//! exists, that its own table has the expected default route (Proxmox's `unreachable default
//! metric 4278198272` catch-all is reported, never taken for a usable default), how each
//! destination resolves for traffic in the VRF (`ip route get DST vrf NAME`) — an answer from
//! any table but the VRF's own is fall-through, a finding even when nothing else was expected —
//! and that the interfaces those routes leave by forward.

pub mod kernel;
pub mod plan;

use deevnet_runtime::netlink::{
    protocol_name, table_name, Family, Link, Links, Lookup, Route, RouteKind,
};
use plan::{DefaultExpectation, LookupCheck, VrfCheck};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::net::IpAddr;

/// What the checks ask of the node.
pub trait Kernel {
    fn links(&mut self) -> anyhow::Result<Links>;
    /// Every route of one table and family.
    fn routes(&mut self, family: Family, table: u32) -> anyhow::Result<Vec<Route>>;
    /// `ip route get DESTINATION`, pinned to `oif` (the VRF device's ifindex).
    fn route_get(&mut self, destination: IpAddr, oif: Option<u32>) -> anyhow::Result<Lookup>;
    /// The interface's `net.ipv4|ipv6.conf.<dev>.forwarding`; `None` when it has none.
    fn forwarding(&mut self, family: Family, dev: &str) -> anyhow::Result<Option<String>>;
}

/// A VRF as found on the node (the module's `vrfs` return value).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VrfState {
    pub name: String,
    pub ifindex: u32,
    pub table: u32,
    /// The default routes of the VRF's table, IPv4 and IPv6, of every type.
    pub defaults: Vec<DefaultRoute>,
    /// The IPv4 `unreachable default` that stops lookups from falling through.
    pub unreachable_catch_all: bool,
    pub unreachable_catch_all_ipv6: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DefaultRoute {
    pub family: &'static str,
    #[serde(rename = "type")]
    pub kind: String,
    pub gateway: Option<IpAddr>,
    pub dev: Option<String>,
    pub metric: Option<u32>,
    pub protocol: String,
}

/// One check and its outcome (the module's `checks` return value).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckResult {
    pub vrf: String,
    /// `vrf`, `default_route`, `lookup <dst>` or `forwarding <dev>`.
    pub check: String,
    pub ok: bool,
    pub expected: Value,
    pub actual: Value,
    /// The check on one line, as the failure message lists it.
    pub msg: String,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct Report {
    pub vrfs: Vec<VrfState>,
    pub checks: Vec<CheckResult>,
}

impl Report {
    /// One line per failed check; empty when all passed.
    pub fn failures(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|r| !r.ok)
            .map(|r| r.msg.as_str())
            .collect()
    }
}

/// Runs every check of every VRF. An error is a failure to ask the kernel (no answer, no
/// permission), not a failed check.
pub fn assert_vrfs(kernel: &mut impl Kernel, checks: &[VrfCheck]) -> anyhow::Result<Report> {
    let links = kernel.links()?;
    let mut report = Report::default();
    for check in checks {
        let (found, actual, msg) = find_vrf(&links, &check.name);
        report.checks.push(CheckResult {
            vrf: check.name.clone(),
            check: "vrf".into(),
            ok: found.is_some(),
            expected: json!({"kind": "vrf"}),
            actual,
            msg,
        });
        // No other check means anything without the VRF.
        let Some((vrf, table)) = found else {
            continue;
        };
        let mut routes = kernel.routes(Family::V4, table)?;
        routes.extend(kernel.routes(Family::V6, table)?);
        let state = vrf_state(&links, vrf, table, &routes);

        // The interfaces the checked routes leave by, for the forwarding checks.
        let mut exits: BTreeSet<(Family, String)> = BTreeSet::new();
        if let Some(expectation) = &check.default_route {
            let (result, family) = check_default(&check.name, &state, expectation);
            report.checks.push(result);
            exits.extend(
                state
                    .defaults
                    .iter()
                    .filter(|d| d.family == family.name() && d.kind == "unicast")
                    .filter_map(|d| d.dev.clone())
                    .map(|dev| (family, dev)),
            );
        }
        for lookup in &check.lookups {
            let answer = kernel.route_get(lookup.dst, Some(vrf.index))?;
            let (result, exit) = check_lookup(&check.name, table, &links, lookup, &answer);
            report.checks.push(result);
            exits.extend(exit);
        }
        if check.forwarding {
            for (family, dev) in &exits {
                let value = kernel.forwarding(*family, dev)?;
                report
                    .checks
                    .push(check_forwarding(&check.name, *family, dev, value));
            }
        }
        report.vrfs.push(state);
    }
    Ok(report)
}

/// The VRF device and its table when `name` is one; what was found (the result's `actual`)
/// and the check's line either way.
fn find_vrf<'a>(links: &'a Links, name: &str) -> (Option<(&'a Link, u32)>, Value, String) {
    let no_vrf = format!("{name}: the tenant has no VRF on this node");
    let Some(link) = links.by_name(name) else {
        return (
            None,
            Value::Null,
            format!("{no_vrf} (no interface named {name})"),
        );
    };
    let actual = json!({"kind": link.kind, "table": link.vrf_table, "ifindex": link.index});
    match (link.is_vrf(), link.vrf_table) {
        (true, Some(table)) => (
            Some((link, table)),
            actual,
            format!("{name}: VRF with table {table}, ifindex {}", link.index),
        ),
        (true, None) => (
            None,
            actual,
            format!("{name}: the kernel reports no routing table for this VRF"),
        ),
        (false, _) => {
            let kind = link
                .kind
                .as_deref()
                .unwrap_or("physical or loopback interface");
            (
                None,
                actual,
                format!("{no_vrf} ({name} is a {kind}, not a VRF)"),
            )
        }
    }
}

fn vrf_state(links: &Links, vrf: &Link, table: u32, routes: &[Route]) -> VrfState {
    let defaults: Vec<DefaultRoute> = routes
        .iter()
        .filter(|r| r.is_default())
        .flat_map(|route| default_routes(links, route))
        .collect();
    let catch_all = |family: Family| {
        routes
            .iter()
            .any(|r| r.is_default() && r.family == family && r.kind == RouteKind::Unreachable)
    };
    VrfState {
        name: vrf.name.clone(),
        ifindex: vrf.index,
        table,
        defaults,
        unreachable_catch_all: catch_all(Family::V4),
        unreachable_catch_all_ipv6: catch_all(Family::V6),
    }
}

/// A default route as reported: one entry per path of a multipath route.
fn default_routes(links: &Links, route: &Route) -> Vec<DefaultRoute> {
    route
        .paths()
        .into_iter()
        .map(|(gateway, oif)| DefaultRoute {
            family: route.family.name(),
            kind: route.kind.name(),
            gateway,
            dev: oif.map(|index| links.name_of(index)),
            metric: route.metric,
            protocol: protocol_name(route.protocol),
        })
        .collect()
}

fn describe_default(route: &DefaultRoute) -> String {
    let mut text = match route.kind.as_str() {
        "unicast" => "default".to_string(),
        kind => format!("{kind} default"),
    };
    if let Some(gateway) = route.gateway {
        text.push_str(&format!(" via {gateway}"));
    }
    if let Some(dev) = &route.dev {
        text.push_str(&format!(" dev {dev}"));
    }
    if let Some(metric) = route.metric {
        text.push_str(&format!(" metric {metric}"));
    }
    text
}

fn describe_expected_default(expectation: &DefaultExpectation) -> String {
    let mut parts = Vec::new();
    if let Some(via) = expectation.via {
        parts.push(format!("via {via}"));
    }
    if let Some(dev) = &expectation.dev {
        parts.push(format!("dev {dev}"));
    }
    parts.join(" ")
}

/// The default-route check, and the family it looked at (the gateway's, IPv4 without one).
fn check_default(
    vrf: &str,
    state: &VrfState,
    expectation: &DefaultExpectation,
) -> (CheckResult, Family) {
    let family = expectation
        .via
        .as_ref()
        .map(Family::of)
        .unwrap_or(Family::V4);
    let of_family: Vec<&DefaultRoute> = state
        .defaults
        .iter()
        .filter(|d| d.family == family.name())
        .collect();
    let usable: Vec<&&DefaultRoute> = of_family.iter().filter(|d| d.kind == "unicast").collect();
    let matches = |d: &DefaultRoute| {
        expectation.via.is_none_or(|via| d.gateway == Some(via))
            && expectation
                .dev
                .as_ref()
                .is_none_or(|dev| d.dev.as_ref() == Some(dev))
    };
    let ok = usable.iter().any(|d| matches(d));
    let wanted = describe_expected_default(expectation);
    let table = state.table;
    let catch_all = match family {
        Family::V4 => state.unreachable_catch_all,
        Family::V6 => state.unreachable_catch_all_ipv6,
    };
    let msg = if ok {
        format!("{vrf}: default {wanted} (table {table})")
    } else if !usable.is_empty() {
        let found: Vec<String> = usable.iter().map(|d| describe_default(d)).collect();
        format!(
            "{vrf}: table {table} has {}, expected default {wanted}",
            found.join(" and ")
        )
    } else if catch_all {
        let found: Vec<String> = of_family.iter().map(|d| describe_default(d)).collect();
        format!(
            "{vrf}: table {table} has only the catch-all ({}), no usable {} default; expected \
             default {wanted}",
            found.join(", "),
            family.name()
        )
    } else if of_family.is_empty() {
        format!(
            "{vrf}: table {table} has no {} default route and no unreachable catch-all, so \
             lookups fall through to the main table; expected default {wanted}",
            family.name()
        )
    } else {
        let found: Vec<String> = of_family.iter().map(|d| describe_default(d)).collect();
        format!(
            "{vrf}: table {table} has no usable {} default ({}); expected default {wanted}",
            family.name(),
            found.join(", ")
        )
    };
    let result = CheckResult {
        vrf: vrf.to_string(),
        check: "default_route".into(),
        ok,
        expected: json!({
            "family": family.name(),
            "via": expectation.via,
            "dev": expectation.dev,
        }),
        actual: json!(of_family),
        msg,
    };
    (result, family)
}

/// The lookup check, and the interface the answer leaves by (when traffic leaves).
fn check_lookup(
    vrf: &str,
    vrf_table: u32,
    links: &Links,
    lookup: &LookupCheck,
    answer: &Lookup,
) -> (CheckResult, Option<(Family, String)>) {
    let dst = lookup.dst;
    let mut unmet: Vec<String> = Vec::new();
    let (actual, text, exit) = match answer {
        Lookup::Route(route) => {
            let dev = route.oif.map(|index| links.name_of(index));
            let fall_through = route.table != vrf_table;
            let table_text = match (route.table, fall_through) {
                (0, _) => "no table matched: assumed on-link, fall-through".to_string(),
                (table, true) => format!("table {}: fall-through", table_name(table)),
                (table, false) => format!("table {}", table_name(table)),
            };
            let path = match (&route.gateway, &dev) {
                (Some(gateway), Some(dev)) => format!("via {gateway} dev {dev}"),
                (Some(gateway), None) => format!("via {gateway}"),
                (None, Some(dev)) => format!("via dev {dev}"),
                (None, None) => "with no interface".to_string(),
            };
            let verb = match route.kind {
                RouteKind::Unicast => "resolves".to_string(),
                RouteKind::Local => "is local to the node, delivered".to_string(),
                other => format!("resolves as {}", other.name()),
            };
            if lookup.reachable == Some(false) {
                unmet.push("unreachable".into());
            }
            if let Some(via) = lookup.via {
                if route.gateway != Some(via) {
                    unmet.push(format!("via {via}"));
                }
            }
            if let Some(expected) = &lookup.dev {
                if dev.as_ref() != Some(expected) {
                    unmet.push(format!("dev {expected}"));
                }
            }
            if let Some(forbidden) = &lookup.not_dev {
                if dev.as_ref() == Some(forbidden) {
                    unmet.push(format!("not dev {forbidden}"));
                }
            }
            match lookup.table {
                Some(table) if route.table != table => {
                    unmet.push(format!("table {}", table_name(table)))
                }
                None if fall_through && unmet.is_empty() => unmet.push(format!(
                    "an answer from table {} (the VRF's own)",
                    table_name(vrf_table)
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
            (actual, format!("{verb} {path} ({table_text})"), exit)
        }
        Lookup::Refused(refusal) => {
            if lookup.reachable == Some(true) {
                unmet.push("reachable".into());
            }
            if let Some(via) = lookup.via {
                unmet.push(format!("via {via}"));
            }
            if let Some(dev) = &lookup.dev {
                unmet.push(format!("dev {dev}"));
            }
            if let Some(table) = lookup.table {
                // A refusal names no table, so the expectation cannot be confirmed.
                unmet.push(format!("an answer from table {}", table_name(table)));
            }
            let actual = json!({"type": "refused", "reason": refusal.describe()});
            (actual, format!("is {}", refusal.describe()), None)
        }
    };
    let ok = unmet.is_empty();
    let msg = if ok {
        format!("{vrf}: {dst} {text}")
    } else {
        format!("{vrf}: {dst} {text}, expected {}", unmet.join(", "))
    };
    let mut expected = Map::new();
    if let Some(via) = lookup.via {
        expected.insert("via".into(), json!(via));
    }
    for (key, value) in [("dev", &lookup.dev), ("not_dev", &lookup.not_dev)] {
        if let Some(value) = value {
            expected.insert(key.into(), json!(value));
        }
    }
    expected.insert("table".into(), json!(lookup.table.unwrap_or(vrf_table)));
    if let Some(reachable) = lookup.reachable {
        expected.insert("reachable".into(), json!(reachable));
    }
    let result = CheckResult {
        vrf: vrf.to_string(),
        check: format!("lookup {dst}"),
        ok,
        expected: Value::Object(expected),
        actual,
        msg,
    };
    (result, exit)
}

fn check_forwarding(vrf: &str, family: Family, dev: &str, value: Option<String>) -> CheckResult {
    let key = match family {
        Family::V4 => deevnet_runtime::sysctl::SysctlKey::ipv4_conf(dev, "forwarding"),
        Family::V6 => deevnet_runtime::sysctl::SysctlKey::ipv6_conf(dev, "forwarding"),
    };
    let ok = value.as_deref() == Some("1");
    let msg = match value.as_deref() {
        Some("1") => format!("{vrf}: {dev} forwards {} ({key} = 1)", family.name()),
        Some(other) => format!(
            "{vrf}: {dev} has {} forwarding off ({key} = {other}), expected 1: tenant traffic \
             leaves by it and replies coming back by it are not forwarded",
            family.name()
        ),
        None => format!("{vrf}: {dev} has no {key} (the interface vanished?), expected 1",),
    };
    CheckResult {
        vrf: vrf.to_string(),
        check: format!("forwarding {dev}"),
        ok,
        expected: json!("1"),
        actual: json!(value),
        msg,
    }
}

#[cfg(test)]
mod tests;
