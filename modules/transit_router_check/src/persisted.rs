//! The persisted ruleset against the running one: the table as nft lists it after loading the
//! file in a scratch network namespace, compared object by object (sets with their elements,
//! chains with hook, priority and policy, rules in order), handles and counter values left out.

use crate::nft::{Owner, Ruleset};
use serde_json::Value;

/// What the persisted file gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Persisted {
    /// The file is absent.
    Missing,
    /// Not read (untrusted, not a regular file) or not loaded (nft's error): why.
    Refused(String),
    /// The table nft listed after loading the file in a scratch namespace.
    Loaded(Ruleset),
}

/// One object of the table, as compared: its kind and its body without handle or counts.
fn comparable(object: &Value, owner: &Owner) -> Option<String> {
    let (kind, body) = object.as_object()?.iter().next()?;
    let family = body.get("family").and_then(Value::as_str)?;
    let table = match kind.as_str() {
        "table" => body.get("name"),
        _ => body.get("table"),
    }
    .and_then(Value::as_str)?;
    if family != owner.family || table != owner.table {
        return None;
    }
    let mut body = body.clone();
    if let Some(map) = body.as_object_mut() {
        for key in ["handle", "family", "table"] {
            map.remove(key);
        }
    }
    forget_counts(&mut body);
    let text = body.to_string();
    Some(format!("{kind} {text}"))
}

/// Counters count differently in each namespace: only that there is one matters.
fn forget_counts(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "counter" && inner.is_object() {
                    *inner = Value::Null;
                } else {
                    forget_counts(inner);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(forget_counts),
        _ => {}
    }
}

/// The table's objects of `ruleset`, comparable, in order.
pub fn table_objects(ruleset: &Ruleset, owner: &Owner) -> Vec<String> {
    ruleset
        .objects
        .iter()
        .filter_map(|o| comparable(o, owner))
        .collect()
}

/// What the running table lacks of the file's (`missing`) and holds beyond it (`extra`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Difference {
    pub missing: Vec<String>,
    pub extra: Vec<String>,
    /// Same objects, another order (rules of a chain in another order).
    pub reordered: bool,
}

impl Difference {
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && !self.reordered
    }
}

/// Compares the table of the persisted file with the running one.
pub fn compare(persisted: &Ruleset, running: &Ruleset, owner: &Owner) -> Difference {
    let wanted = table_objects(persisted, owner);
    let running = table_objects(running, owner);
    let mut unmatched = running.clone();
    let mut missing = Vec::new();
    for object in &wanted {
        match unmatched.iter().position(|o| o == object) {
            Some(at) => {
                unmatched.remove(at);
            }
            None => missing.push(object.clone()),
        }
    }
    let reordered = missing.is_empty() && unmatched.is_empty() && wanted != running;
    Difference {
        missing,
        extra: unmatched,
        reordered,
    }
}
