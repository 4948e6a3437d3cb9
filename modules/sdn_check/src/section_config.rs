//! Proxmox's section-config format, as the SDN's `.cfg` files use it (`zones.cfg`, …):
//! a line `TYPE: ID` opens a section, indented `KEY VALUE` lines follow (a key alone is a
//! flag), a blank line ends it, `#` starts a comment line (docs/proxmox-sdn.md §1). Pure.

use crate::running_config::{Object, Objects};
use serde_json::Value;

/// The sections of one `.cfg` file by ID; `source` (`config_dir=/etc/pve/sdn (zones.cfg)`)
/// names the file in errors, with the line.
pub fn parse(text: &str, source: &str) -> Result<Objects, String> {
    let fix = "the file is Proxmox's own (written by the SDN API): fix it with `pvesh` or the GUI, or give another config_dir";
    let mut objects = Objects::new();
    let mut current: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            current = None;
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if !indented {
            let Some((section_type, id)) = trimmed.split_once(':') else {
                return Err(format!(
                    "{source} line {number}: '{trimmed}' is neither a section line (`TYPE: ID`) nor an indented `KEY VALUE` line; {fix}"
                ));
            };
            let (section_type, id) = (section_type.trim(), id.trim());
            let plain = |word: &str| !word.is_empty() && !word.contains(char::is_whitespace);
            if !plain(section_type) || !plain(id) {
                return Err(format!(
                    "{source} line {number}: '{trimmed}' is not a section line `TYPE: ID` (one word each); {fix}"
                ));
            }
            if objects.contains_key(id) {
                return Err(format!(
                    "{source} line {number}: section '{id}' is declared twice; {fix}"
                ));
            }
            objects.insert(
                id.to_string(),
                Object {
                    section_type: section_type.to_string(),
                    values: Default::default(),
                },
            );
            current = Some(id.to_string());
            continue;
        }
        let Some(id) = &current else {
            return Err(format!(
                "{source} line {number}: '{trimmed}' is outside any section (no `TYPE: ID` line above it); {fix}"
            ));
        };
        let (key, value) = match trimmed.split_once(char::is_whitespace) {
            Some((key, value)) => (key, value.trim()),
            None => (trimmed, "1"),
        };
        let Some(object) = objects.get_mut(id) else {
            continue; // `current` always names a section of `objects`
        };
        let values = &mut object.values;
        let value = Value::String(value.to_string());
        // A key on several lines (a fabric node's `interfaces`) is a list.
        match values.get_mut(key) {
            None => {
                values.insert(key.to_string(), value);
            }
            Some(Value::Array(items)) => items.push(value),
            Some(first) => {
                let first = first.take();
                values.insert(key.to_string(), Value::Array(vec![first, value]));
            }
        }
    }
    Ok(objects)
}
