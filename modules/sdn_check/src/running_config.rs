//! The SDN configuration as Proxmox holds it: the five kinds of object ([`ObjectKind`]), each
//! object's type and values ([`Object`]), and the applied configuration,
//! `/etc/pve/sdn/.running-config` ([`parse`]): JSON with `version` and, per kind,
//! `{"ids": {ID: {"type": …, key: value, …}}}` (docs/proxmox-sdn.md §1). Pure.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The kinds of SDN object, each a section of `.running-config` and a `.cfg` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    Zone,
    Vnet,
    Subnet,
    Controller,
    Fabric,
}

impl ObjectKind {
    pub const ALL: [ObjectKind; 5] = [
        ObjectKind::Zone,
        ObjectKind::Vnet,
        ObjectKind::Subnet,
        ObjectKind::Controller,
        ObjectKind::Fabric,
    ];

    /// The word in the result's `pending` (`kind: zone`).
    pub fn word(self) -> &'static str {
        match self {
            ObjectKind::Zone => "zone",
            ObjectKind::Vnet => "vnet",
            ObjectKind::Subnet => "subnet",
            ObjectKind::Controller => "controller",
            ObjectKind::Fabric => "fabric",
        }
    }

    /// The key of `.running-config` (`zones`).
    pub fn running_key(self) -> &'static str {
        match self {
            ObjectKind::Zone => "zones",
            ObjectKind::Vnet => "vnets",
            ObjectKind::Subnet => "subnets",
            ObjectKind::Controller => "controllers",
            ObjectKind::Fabric => "fabrics",
        }
    }

    /// The section-config file in `config_dir` (`zones.cfg`).
    pub fn file_name(self) -> &'static str {
        match self {
            ObjectKind::Zone => "zones.cfg",
            ObjectKind::Vnet => "vnets.cfg",
            ObjectKind::Subnet => "subnets.cfg",
            ObjectKind::Controller => "controllers.cfg",
            ObjectKind::Fabric => "fabrics.cfg",
        }
    }
}

/// One SDN object: its section type (`evpn`, `vnet`, `subnet`, `openfabric_node`) and its
/// values. From `.running-config` the values are typed as Proxmox stored them (`nodes` as
/// `{"hv01": 1}`); from a `.cfg` file they are strings (a key given on several lines: a list).
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub section_type: String,
    pub values: Map<String, Value>,
}

/// Unit tests count the values read, the derivation's unit of work: its bound holds for any
/// input size where a duration would not (tests::derive's 10,000 VNets).
#[cfg(test)]
pub(crate) mod reads {
    use std::cell::Cell;

    thread_local! {
        static VALUES_READ: Cell<u64> = const { Cell::new(0) };
    }

    pub(crate) fn count() {
        VALUES_READ.with(|reads| reads.set(reads.get() + 1));
    }

    /// The values read on this thread since the last call.
    pub(crate) fn take() -> u64 {
        VALUES_READ.with(|reads| reads.replace(0))
    }
}

impl Object {
    /// A value as text: a string, a number, `1` for true.
    pub fn text(&self, key: &str) -> Option<String> {
        #[cfg(test)]
        reads::count();
        match self.values.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
            _ => None,
        }
    }

    /// A list value: `{"hv01": 1, "hv02": 1}` (a decoded node list), a JSON list, or the
    /// `.cfg` form, words separated by `,`, `;` or spaces; empty when absent.
    pub fn list(&self, key: &str) -> Vec<String> {
        #[cfg(test)]
        reads::count();
        match self.values.get(key) {
            Some(Value::Object(map)) => map.keys().cloned().collect(),
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect(),
            Some(_) => self.text(key).map(|t| split_list(&t)).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// A boolean option: Proxmox writes `1` (also `true`/`yes`/`on` are read as true).
    pub fn flag(&self, key: &str) -> bool {
        self.text(key)
            .is_some_and(|t| matches!(t.trim(), "1" | "true" | "yes" | "on"))
    }
}

/// Words of a Proxmox list value (`PVE::Tools::split_list`: `,`, `;` and whitespace).
pub fn split_list(text: &str) -> Vec<String> {
    text.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The objects of one kind, by ID.
pub type Objects = BTreeMap<String, Object>;

/// The applied configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunningConfig {
    pub version: u64,
    pub objects: BTreeMap<ObjectKind, Objects>,
}

impl RunningConfig {
    pub fn of(&self, kind: ObjectKind) -> &Objects {
        static EMPTY: Objects = BTreeMap::new();
        self.objects.get(&kind).unwrap_or(&EMPTY)
    }
}

/// Reads `.running-config`'s JSON; `source` (`running_config=/etc/pve/sdn/.running-config`)
/// names the file in errors. A kind that is absent (`fabrics` before Proxmox VE 9) has no
/// objects; any other key is not read.
pub fn parse(text: &str, source: &str) -> Result<RunningConfig, String> {
    let fix = "it is written by `pvesh set /cluster/sdn`: apply the SDN again, or give the right running_config";
    let root: Value =
        serde_json::from_str(text).map_err(|e| format!("{source} is not JSON ({e}); {fix}"))?;
    let Value::Object(root) = root else {
        return Err(format!("{source} is not a JSON object; {fix}"));
    };
    let version = match root.get("version") {
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or_default(),
        Some(Value::String(s)) if s.parse::<u64>().is_ok() => s.parse().unwrap_or_default(),
        Some(other) => {
            return Err(format!(
                "{source}: `version` is {other}, not a whole number; {fix}"
            ))
        }
        None => return Err(format!("{source} has no `version`; {fix}")),
    };
    let mut objects = BTreeMap::new();
    for kind in ObjectKind::ALL {
        let key = kind.running_key();
        let Some(section) = root.get(key) else {
            continue;
        };
        let ids = match section {
            Value::Object(section) => match section.get("ids") {
                Some(Value::Object(ids)) => ids,
                None => continue,
                Some(_) => {
                    return Err(format!(
                        "{source}: `{key}.ids` is not an object of IDs; {fix}"
                    ))
                }
            },
            _ => return Err(format!("{source}: `{key}` is not an object; {fix}")),
        };
        let mut of_kind = Objects::new();
        for (id, value) in ids {
            let Value::Object(values) = value else {
                return Err(format!(
                    "{source}: `{key}.ids.{id}` is not an object; {fix}"
                ));
            };
            let Some(Value::String(section_type)) = values.get("type") else {
                return Err(format!("{source}: `{key}.ids.{id}` has no `type`; {fix}"));
            };
            of_kind.insert(
                id.clone(),
                Object {
                    section_type: section_type.clone(),
                    values: values.clone(),
                },
            );
        }
        objects.insert(kind, of_kind);
    }
    Ok(RunningConfig { version, objects })
}
