//! Changes made but not applied, and a node that has not reloaded (docs/proxmox-sdn.md §9).
//! Pure.

use crate::finding::Finding;
use crate::running_config::{split_list, Object, ObjectKind, Objects, RunningConfig};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The fix of every pending change.
pub const APPLY_FIX: &str = "apply the SDN: `pvesh set /cluster/sdn`";
/// The fix of a node that has not reloaded (Proxmox's own status words in parentheses).
pub fn reload_fix() -> String {
    format!(
        "reload this node's network (Proxmox: local sdn network configuration is too old, please reload): {}",
        crate::finding::reload_advice()
    )
}

/// One SDN object whose `.cfg` section differs from the running configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingChange {
    pub kind: &'static str,
    pub id: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
}

/// Keys that say nothing about the object (`digest`, `id`), and a subnet's keys Proxmox
/// derives from its ID when it reads it (`zone`, `cidr`, `network`, `mask`).
fn derived_keys(kind: ObjectKind) -> &'static [&'static str] {
    match kind {
        ObjectKind::Subnet => &["digest", "id", "zone", "cidr", "network", "mask"],
        _ => &["digest", "id"],
    }
}

/// A value in one comparable form: a node list `{"hv01": 1}` and `hv01,hv02` both become the
/// sorted words; numbers and `1`/true become their text; a list stays a list of texts.
fn canonical(key: &str, value: &Value) -> Value {
    let words = |mut w: Vec<String>| {
        w.sort();
        Value::from(w.join(","))
    };
    match value {
        // A decoded node list `{"hv01": 1}`; another object (a decoded property string such
        // as a fabric interface) as its `key=value` words, as the .cfg file writes them.
        Value::Object(map) if map.values().all(|v| v == &Value::from(1)) => {
            words(map.keys().cloned().collect())
        }
        Value::Object(map) => words(
            map.iter()
                .map(|(k, v)| match canonical(k, v) {
                    Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                })
                .collect(),
        ),
        Value::String(s) if matches!(key, "nodes" | "exitnodes" | "peers") => words(split_list(s)),
        Value::String(s) => Value::from(s.trim().to_string()),
        Value::Number(n) => Value::from(n.to_string()),
        Value::Bool(b) => Value::from(if *b { "1" } else { "0" }),
        // A key on one line of a .cfg file is a single value; the JSON may hold it as a list.
        Value::Array(items) if items.len() == 1 => canonical(key, &items[0]),
        Value::Array(items) => Value::Array(items.iter().map(|v| canonical(key, v)).collect()),
        Value::Null => Value::Null,
    }
}

fn comparable(kind: ObjectKind, object: &Object) -> BTreeMap<String, Value> {
    let mut values: BTreeMap<String, Value> = object
        .values
        .iter()
        .filter(|(k, _)| !derived_keys(kind).contains(&k.as_str()) && k.as_str() != "type")
        .map(|(k, v)| (k.clone(), canonical(k, v)))
        .collect();
    values.insert("type".into(), Value::from(object.section_type.clone()));
    values
}

/// Each object whose `.cfg` section (`pending`, by kind) differs from the running
/// configuration: added, removed or changed, by kind then ID.
pub fn pending_changes(
    pending: &BTreeMap<ObjectKind, Objects>,
    running: &RunningConfig,
) -> Vec<PendingChange> {
    let empty = Objects::new();
    let mut changes = Vec::new();
    for kind in ObjectKind::ALL {
        let cfg = pending.get(&kind).unwrap_or(&empty);
        let applied = running.of(kind);
        let ids: BTreeSet<&String> = cfg.keys().chain(applied.keys()).collect();
        for id in ids {
            let change = match (cfg.get(id), applied.get(id)) {
                (Some(_), None) => "added",
                (None, Some(_)) => "removed",
                (Some(a), Some(b)) if comparable(kind, a) != comparable(kind, b) => "changed",
                _ => continue,
            };
            changes.push(PendingChange {
                kind: kind.word(),
                id: id.clone(),
                change,
            });
        }
    }
    changes
}

/// A drift finding per pending change.
pub fn pending_findings(changes: &[PendingChange]) -> Vec<Finding> {
    changes
        .iter()
        .map(|c| Finding {
            object: format!("{} {}", c.kind, c.id),
            declared: format!("{} in {}", c.change, config_file(c.kind)),
            found: "not in the running configuration (.running-config) yet".into(),
            fix: APPLY_FIX.into(),
            awaits_reload: false,
        })
        .collect()
}

fn config_file(kind: &str) -> &'static str {
    ObjectKind::ALL
        .into_iter()
        .find(|k| k.word() == kind)
        .map(ObjectKind::file_name)
        .unwrap_or("the .cfg files")
}

/// §9: the node generated its network from an older version than the running one, or never
/// did while zones apply to it.
pub fn not_reloaded(
    interfaces_sdn: &str,
    running: u64,
    applied: Option<u64>,
    zones_apply: bool,
) -> Option<Finding> {
    let found = match applied {
        Some(applied) if applied < running => format!("#version:{applied}"),
        Some(_) => return None,
        None if zones_apply => "no generated file".to_string(),
        None => return None,
    };
    Some(Finding {
        object: interfaces_sdn.to_string(),
        declared: format!("#version:{running} (the running SDN configuration)"),
        found,
        fix: reload_fix(),
        awaits_reload: true,
    })
}

/// Marks the kernel's findings that only this node's reload explains: on a node that applied
/// an older version than the cluster runs (or none), a finding about a device its generated
/// file (`applied_devices`) does not declare. Between the waves of an SDN apply, those are the
/// rollout's own; every other kernel finding is drift the node had before.
pub fn mark_awaiting_reload(
    findings: &mut [Finding],
    running: u64,
    applied: Option<u64>,
    applied_devices: &BTreeSet<String>,
) {
    if applied.is_some_and(|applied| applied >= running) {
        return;
    }
    for finding in findings {
        finding.awaits_reload = !applied_devices.contains(&finding.object);
    }
}
