//! The lookup check: how one destination resolves for traffic in the VRF.

use crate::connected::ConnectedPrefix;
use crate::params::LookupCheck;
use crate::{CheckResult, VrfView};
use deevnet_runtime::netlink::{table_name, Family, Links, Lookup, RouteKind};
use serde_json::{json, Map, Value};

/// The lookup check, and the interface the answer leaves by (when traffic leaves). `prefix` is
/// the connected prefix of a forbidden interface the lookup was generated for.
pub fn check_lookup(
    view: &VrfView,
    links: &Links,
    lookup: &LookupCheck,
    prefix: Option<&ConnectedPrefix>,
    answer: &Lookup,
) -> (CheckResult, Option<(Family, String)>) {
    let vrf = view.name;
    let dst = match prefix {
        Some(connected) => format!(
            "{} (in {}, connected on {})",
            lookup.dst, connected.prefix, connected.dev
        ),
        None => lookup.dst.to_string(),
    };
    let mut unmet: Vec<String> = Vec::new();
    let (actual, text, exit) = match answer {
        Lookup::Route(route) => {
            let dev = route.oif.map(|index| links.name_of(index));
            let fall_through = view.own_table().is_some_and(|own| route.table != own);
            let table_text = match (route.table, fall_through) {
                (0, true) => "no table matched: assumed on-link, fall-through".to_string(),
                (0, false) => "no table matched: assumed on-link".to_string(),
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
            match (lookup.table, view.own_table()) {
                (Some(table), _) if route.table != table => {
                    unmet.push(format!("table {}", table_name(table)))
                }
                (None, Some(own)) if fall_through && unmet.is_empty() => unmet.push(format!(
                    "an answer from table {} (the VRF's own)",
                    table_name(own)
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
    if let Some(table) = lookup.table.or(view.own_table()) {
        expected.insert("table".into(), json!(table));
    }
    if let Some(reachable) = lookup.reachable {
        expected.insert("reachable".into(), json!(reachable));
    }
    if let Some(connected) = prefix {
        expected.insert("connected_prefix".into(), json!(connected.prefix));
    }
    let result = CheckResult {
        vrf: vrf.to_string(),
        check: format!("lookup {}", lookup.dst),
        ok,
        expected: Value::Object(expected),
        actual,
        msg,
    };
    (result, exit)
}
