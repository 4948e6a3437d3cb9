//! A VRF's table as found (its default routes and catch-alls) and the default-route checks.

use crate::params::DefaultExpectation;
use crate::{CheckResult, VrfView};
use deevnet_runtime::netlink::{protocol_name, table_name, Family, Links, Route, RouteKind};
use serde::Serialize;
use serde_json::json;
use std::net::IpAddr;

/// A VRF as found on the node (the module's `vrfs` return value).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct VrfState {
    pub name: String,
    /// The VRF device's ifindex; 0 for the default VRF, which has none.
    pub ifindex: u32,
    pub table: u32,
    /// The default routes of the VRF's table, IPv4 and IPv6, of every type.
    pub defaults: Vec<DefaultRoute>,
    /// The IPv4 `unreachable default` that stops lookups from falling through.
    pub unreachable_catch_all: bool,
    pub unreachable_catch_all_ipv6: bool,
}

impl VrfState {
    /// The usable defaults of a family: (family, dev) of each path, for the exit checks.
    pub fn unicast_exits(&self, family: Family) -> Vec<(Family, String)> {
        self.usable(family)
            .filter_map(|d| d.dev.clone())
            .map(|dev| (family, dev))
            .collect()
    }

    fn usable(&self, family: Family) -> impl Iterator<Item = &DefaultRoute> {
        self.defaults
            .iter()
            .filter(move |d| d.family == family.name() && d.kind == "unicast")
    }
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

pub fn vrf_state(links: &Links, view: &VrfView, routes: &[Route]) -> VrfState {
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
        name: view.name.to_string(),
        ifindex: view.device.map_or(0, |d| d.index),
        table: view.table,
        defaults,
        unreachable_catch_all: catch_all(Family::V4),
        unreachable_catch_all_ipv6: catch_all(Family::V6),
    }
}

/// A default route as reported: one entry per path of a multipath route.
pub fn default_routes(links: &Links, route: &Route) -> Vec<DefaultRoute> {
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

/// `default via GW dev DEV metric M`, `unreachable default metric M`, as `ip route` prints.
pub fn describe_default(route: &DefaultRoute) -> String {
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

/// `default via GW dev DEV`, or `a usable IPv4 default` when any will do.
fn describe_expected_default(expectation: &DefaultExpectation) -> String {
    let mut parts = vec!["default".to_string()];
    if let Some(via) = expectation.via {
        parts.push(format!("via {via}"));
    }
    if let Some(dev) = &expectation.dev {
        parts.push(format!("dev {dev}"));
    }
    if parts.len() == 1 {
        return format!("a usable {} default", expectation.family.name());
    }
    parts.join(" ")
}

/// The default-route check of one family.
pub fn check_default(
    view: &VrfView,
    state: &VrfState,
    expectation: &DefaultExpectation,
) -> CheckResult {
    let vrf = view.name;
    let family = expectation.family;
    let of_family: Vec<&DefaultRoute> = state
        .defaults
        .iter()
        .filter(|d| d.family == family.name())
        .collect();
    let usable: Vec<&DefaultRoute> = state.usable(family).collect();
    let matches = |d: &DefaultRoute| {
        expectation.via.is_none_or(|via| d.gateway == Some(via))
            && expectation
                .dev
                .as_ref()
                .is_none_or(|dev| d.dev.as_ref() == Some(dev))
    };
    let matching = usable.iter().find(|d| matches(d));
    let wanted = describe_expected_default(expectation);
    let table = table_name(view.table);
    let catch_all = match family {
        Family::V4 => state.unreachable_catch_all,
        Family::V6 => state.unreachable_catch_all_ipv6,
    };
    let described = |routes: &[&DefaultRoute]| {
        routes
            .iter()
            .map(|d| describe_default(d))
            .collect::<Vec<_>>()
    };
    let msg = if let Some(found) = matching {
        format!(
            "{vrf}: {} {} (table {table})",
            family.name(),
            describe_default(found)
        )
    } else if !usable.is_empty() {
        format!(
            "{vrf}: table {table} has {}, expected {wanted}",
            described(&usable).join(" and ")
        )
    } else if catch_all {
        format!(
            "{vrf}: table {table} has only the catch-all ({}), no usable {} default; expected \
             {wanted}",
            described(&of_family).join(", "),
            family.name()
        )
    } else if of_family.is_empty() && view.own_table().is_some() {
        format!(
            "{vrf}: table {table} has no {} default route and no unreachable catch-all, so \
             lookups fall through to the main table; expected {wanted}",
            family.name()
        )
    } else if of_family.is_empty() {
        format!(
            "{vrf}: table {table} has no {} default route; expected {wanted}",
            family.name()
        )
    } else {
        format!(
            "{vrf}: table {table} has no usable {} default ({}); expected {wanted}",
            family.name(),
            described(&of_family).join(", ")
        )
    };
    CheckResult {
        vrf: vrf.to_string(),
        check: "default_route".into(),
        ok: matching.is_some(),
        expected: json!({
            "family": family.name(),
            "via": expectation.via,
            "dev": expectation.dev,
        }),
        actual: json!(of_family),
        msg,
    }
}

/// The default VRF without a usable IPv4 default but with an IPv6 one: the all-exit fabric's
/// first trap, a fabric whose BGP peers are activated only for IPv6. The finding says so.
pub fn explain_single_stack(
    state: &VrfState,
    expectation: &DefaultExpectation,
    result: &mut CheckResult,
) {
    if expectation.family != Family::V4 || state.usable(Family::V4).next().is_some() {
        return;
    }
    let v6: Vec<String> = state.usable(Family::V6).map(describe_default).collect();
    if v6.is_empty() {
        return;
    }
    result.msg = format!(
        "{}: table main has no usable IPv4 default but has the IPv6 {}: the fabric activates \
         only IPv6 (its BGP peers are activated only in address-family ipv6 unicast), so no \
         IPv4 default is learned; activate the peers in address-family ipv4 unicast (in \
         frr.conf.local: router bgp ASN / address-family ipv4 unicast / neighbor PEER activate \
         / exit-address-family) or define the fabric dual-stack",
        state.name,
        v6.join(" and ")
    );
}
