//! Stanzas an owner wrote: with `owner`, the module records in `owner_record` (a JSON file
//! outside `frr.conf.local`) what each call declared, and on the next call removes what the
//! owner wrote earlier but no longer declares. Nothing the owner did not write is touched.
//!
//! Why a record file and no marker lines: Proxmox's merge keeps only the lines it understands
//! and drops `!` comments inside stanzas (docs/proxmox-frr-merge.md, B.4), so a marker in
//! `frr.conf.local` would not survive in `frr.conf` and could break the stanza it sits in.
//!
//! What "no longer declared" removes:
//! * a stanza recorded in `exact` mode: the whole stanza (the owner owned all of it);
//! * a stanza recorded in `merge` mode: only the commands the owner declared (others' lines
//!   stay; a block left empty goes, as the module never leaves an empty stanza);
//! * a command dropped from a `merge` stanza that is still declared: that command.

use crate::grammar;
use crate::stanza::{Mode, Stanza, State};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

mod record_file;
pub use record_file::RecordFile;

/// What one owner declared for one stanza.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub header: String,
    pub mode: Mode,
    #[serde(default)]
    pub lines: Vec<String>,
    #[serde(default)]
    pub children: Vec<Entry>,
}

/// The record file: per `frr.conf.local` (its canonical path), per owner, what it declared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    pub files: BTreeMap<String, BTreeMap<String, Vec<Entry>>>,
}

pub const VERSION: u32 = 1;

impl Record {
    /// Reads a record file's text; empty or missing is an empty record.
    pub fn parse(text: Option<&str>, shown: &str) -> Result<Record, String> {
        let text = text.unwrap_or_default();
        if text.trim().is_empty() {
            return Ok(Record {
                version: VERSION,
                files: BTreeMap::new(),
            });
        }
        let record: Record = serde_json::from_str(text).map_err(|e| {
            format!(
                "owner_record={shown} is not a record this module wrote ({e}); restore it from its backup, or remove it (the owners' stanzas then stay in place, unowned); nothing was changed"
            )
        })?;
        if record.version != VERSION {
            return Err(format!(
                "owner_record={shown} has version {}, this module reads version {VERSION}; use the module version that wrote it; nothing was changed",
                record.version
            ));
        }
        Ok(record)
    }

    /// The file's text: the same record always gives the same bytes.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// What `owner` recorded for `file`.
    pub fn entries(&self, file: &str, owner: &str) -> &[Entry] {
        self.files
            .get(file)
            .and_then(|owners| owners.get(owner))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The record with `owner`'s entries for `file` replaced (an empty list removes the owner,
    /// and a file left without owners goes).
    pub fn with_entries(&self, file: &str, owner: &str, entries: Vec<Entry>) -> Record {
        let mut record = self.clone();
        record.version = VERSION;
        let owners = record.files.entry(file.to_string()).or_default();
        if entries.is_empty() {
            owners.remove(owner);
        } else {
            owners.insert(owner.to_string(), entries);
        }
        if owners.is_empty() {
            record.files.remove(file);
        }
        record
    }
}

/// What the checked `stanzas` declare: every stanza (and child) kept present.
pub fn declared(stanzas: &[Stanza]) -> Vec<Entry> {
    stanzas
        .iter()
        .filter(|s| s.state == State::Present)
        .map(|s| Entry {
            header: s.header.clone(),
            mode: s.mode,
            lines: s.lines.clone(),
            children: declared(&s.children),
        })
        .collect()
}

/// Both lists, each header once: the record kept while the file is being written, so that a
/// run killed between the two writes never forgets a stanza it may have written.
pub fn union(earlier: &[Entry], now: &[Entry]) -> Vec<Entry> {
    let mut out: Vec<Entry> = now.to_vec();
    for entry in earlier {
        match out.iter_mut().find(|e| same(&e.header, &entry.header)) {
            Some(kept) => {
                for line in &entry.lines {
                    if !kept.lines.contains(line) {
                        kept.lines.push(line.clone());
                    }
                }
                kept.children = union(&entry.children, &kept.children);
            }
            None => out.push(entry.clone()),
        }
    }
    out
}

/// `stanzas` (checked) with what the owner recorded earlier and no longer declares taken back:
/// an undeclared stanza is appended (removed, or its commands withdrawn), a declared `merge`
/// stanza withdraws its dropped commands.
pub fn take_back(stanzas: Vec<Stanza>, recorded: &[Entry]) -> Vec<Stanza> {
    let mut out = stanzas;
    let by_header: HashMap<String, &Entry> = recorded
        .iter()
        .map(|e| (grammar::stanza_identity(&e.header), e))
        .collect();
    for stanza in &mut out {
        if let Some(entry) = by_header.get(&grammar::stanza_identity(&stanza.header)) {
            withdraw_dropped(stanza, entry);
        }
    }
    for entry in recorded {
        let declared = out.iter().any(|s| same(&s.header, &entry.header));
        if !declared {
            out.push(undeclared(entry));
        }
    }
    out
}

fn same(a: &str, b: &str) -> bool {
    grammar::stanza_identity(a) == grammar::stanza_identity(b)
}

/// A recorded stanza the owner no longer declares, as the stanza that takes it back.
fn undeclared(entry: &Entry) -> Stanza {
    match entry.mode {
        Mode::Exact => Stanza {
            header: entry.header.clone(),
            lines: Vec::new(),
            children: Vec::new(),
            state: State::Absent,
            mode: Mode::Exact,
            withdraw: Vec::new(),
        },
        Mode::Merge => Stanza {
            header: entry.header.clone(),
            lines: Vec::new(),
            children: entry.children.iter().map(undeclared).collect(),
            state: State::Present,
            mode: Mode::Merge,
            withdraw: entry.lines.clone(),
        },
    }
}

/// A declared `merge` stanza also withdraws the commands it recorded and no longer declares.
fn withdraw_dropped(stanza: &mut Stanza, entry: &Entry) {
    if stanza.state != State::Present || stanza.mode != Mode::Merge || entry.mode != Mode::Merge {
        return;
    }
    stanza.withdraw = entry
        .lines
        .iter()
        .filter(|line| !stanza.lines.contains(line))
        .cloned()
        .collect();
    for child_entry in &entry.children {
        match stanza
            .children
            .iter_mut()
            .find(|c| c.header == child_entry.header)
        {
            Some(child) => withdraw_dropped(child, child_entry),
            None => stanza.children.push(undeclared(child_entry)),
        }
    }
}

#[cfg(test)]
mod tests;
