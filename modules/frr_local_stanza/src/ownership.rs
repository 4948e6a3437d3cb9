//! Stanzas an owner wrote: with `owner`, the module records in `owner_record` (a JSON file
//! outside `frr.conf.local`) what each call added to the file, and on the next call removes
//! what the owner wrote earlier but no longer declares. Nothing the owner did not write is
//! touched. The design, and why the writes come in this order: `docs/frr-local-ownership.md`.
//!
//! Why a record file and no marker lines: Proxmox's merge keeps only the lines it understands
//! and drops `!` comments inside stanzas (docs/proxmox-frr-merge.md, B.4), so a marker in
//! `frr.conf.local` would not survive in `frr.conf` and could break the stanza it sits in.
//!
//! What is claimed ([`claims`]): only what the module itself put in the file. A declared stanza
//! the file did not have is the owner's whole (in its mode); of a stanza that was there (the
//! operator's), only the lines the module added. What the owner already held it keeps.
//!
//! What "no longer declared" removes ([`take_back`]):
//! * a stanza claimed in `exact` mode: the whole stanza (the owner owned all of it);
//! * a stanza claimed in `merge` mode: only the claimed commands (others' lines stay; a block
//!   left empty goes, as the module never leaves an empty stanza);
//! * a command dropped from a `merge` stanza that is still declared: that command.
//!
//! A claim never outlives its write ([`Ownership`]): claims the run is about to make are
//! recorded as pending on the write of the file, tied to the file's content before and after;
//! a later reader trusts them only when the file is the one that write produced.

use crate::count_step;
use crate::grammar;
use crate::parse;
use crate::stanza::{self, Checks, Mode, Stanza, State};
use deevnet_runtime::file_policy::Target;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

mod record_file;
pub use record_file::{RecordFile, Rendered, DEFAULT_RECORD, MAX_RECORD_BYTES};

/// What one owner added to one stanza.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub header: String,
    pub mode: Mode,
    #[serde(default)]
    pub lines: Vec<String>,
    #[serde(default)]
    pub children: Vec<Entry>,
}

/// A write of the file that was under way: its claims hold only if it landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    /// [`fingerprint`] of the file before the write.
    pub before: String,
    /// [`fingerprint`] of the file the write produces.
    pub after: String,
    /// The owner's claims once the write has landed.
    pub entries: Vec<Entry>,
}

/// The record file: per `frr.conf.local` (its canonical path), per owner, what it added;
/// and the claims of a write under way.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub version: u32,
    pub files: BTreeMap<String, BTreeMap<String, Vec<Entry>>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pending: BTreeMap<String, BTreeMap<String, Pending>>,
}

/// The version written: 2 has `pending` and claims only what the module added.
pub const VERSION: u32 = 2;
/// Version 1 (claims of what was declared, no `pending`) is still read.
const READABLE: std::ops::RangeInclusive<u32> = 1..=VERSION;

/// The file's content in a few bytes: its length and FNV-1a (64 bits), stable from one build
/// to the next (std's hasher is not), enough to tell the file before a write from after it.
pub fn fingerprint(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{}:{hash:016x}", text.len())
}

impl Record {
    pub(crate) fn empty() -> Record {
        Record {
            version: VERSION,
            ..Record::default()
        }
    }

    /// Reads a record file's text; empty is an empty record. The messages never quote the
    /// record's content (it names stanzas, and their lines may hold secrets).
    pub fn parse(text: &str, shown: &str) -> Result<Record, String> {
        Record::parse_knowing(text, shown, &HashSet::new())
    }

    /// [`Record::parse`], taking the entries in `checked` as checked already (the owner's
    /// declared stanzas, whole, which passed the same checks as the task's): on a steady run
    /// the record then costs its reading only.
    pub fn parse_knowing(
        text: &str,
        shown: &str,
        checked: &HashSet<Entry>,
    ) -> Result<Record, String> {
        let not_ours = |why: String| {
            format!(
                "owner_record={shown} is not a record this module wrote ({why}); restore it from its backup, or remove it (the owners' stanzas then stay in place, unowned); nothing was changed"
            )
        };
        if text.len() > MAX_RECORD_BYTES {
            return Err(too_large(shown, text.len(), "is"));
        }
        if text.trim().is_empty() {
            return Ok(Record::empty());
        }
        let record: Record = serde_json::from_str(text).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Data => "not the record's shape",
                _ => "not JSON",
            };
            // serde's own message quotes the value it choked on: only its place is given.
            not_ours(format!("{what} at line {} column {}", e.line(), e.column()))
        })?;
        if !READABLE.contains(&record.version) {
            return Err(format!(
                "owner_record={shown} has version {}, this module reads versions {} to {}; use the module version that wrote it; nothing was changed",
                record.version,
                READABLE.start(),
                READABLE.end()
            ));
        }
        for (file, owners) in &record.files {
            for (owner, entries) in owners {
                check_entries(entries, checked).map_err(|at| {
                    not_ours(format!(
                        "entry {at} of owner {owner:?} for {file} is not a stanza the module writes for an owner"
                    ))
                })?;
            }
        }
        for (file, owners) in &record.pending {
            for (owner, pending) in owners {
                check_entries(&pending.entries, checked).map_err(|at| {
                    not_ours(format!(
                        "pending entry {at} of owner {owner:?} for {file} is not a stanza the module writes for an owner"
                    ))
                })?;
            }
        }
        Ok(record)
    }

    /// The file's text: the same record always gives the same bytes.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// What `owner` holds in `file` (pending claims not included: see [`Record::resolve`]).
    pub fn entries(&self, file: &str, owner: &str) -> &[Entry] {
        self.files
            .get(file)
            .and_then(|owners| owners.get(owner))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The record with the writes of `file` that were under way settled against the file's
    /// content now (`text`, read under the file's lock): a write that landed (the file is
    /// what it produced) makes its claims, one that did not (the file is what it was before)
    /// leaves the earlier claims; a file changed since by someone else keeps only the claims
    /// true either way (held before and after), so no claim names what may never have been
    /// written, at the price of forgetting what may have been.
    pub fn resolve(&self, file: &str, text: &str) -> Record {
        let mut record = self.clone();
        let Some(pending) = record.pending.remove(file) else {
            return record;
        };
        let now = fingerprint(text);
        for (owner, write) in pending {
            let earlier = record.entries(file, &owner).to_vec();
            let claims = if now == write.after {
                write.entries
            } else if now == write.before {
                earlier
            } else {
                common(&earlier, &write.entries)
            };
            record = record.with_claims(file, &owner, claims);
        }
        record
    }

    /// The record with `owner`'s claims in `file` replaced and no write of it pending (an
    /// empty list removes the owner, and a file left without owners goes).
    pub fn with_claims(&self, file: &str, owner: &str, entries: Vec<Entry>) -> Record {
        let mut record = self.clone();
        record.version = VERSION;
        remove_nested(&mut record.pending, file, owner);
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

    /// The record kept while `file` goes from `before` to `after`: the earlier claims stay
    /// as they are, the new ones wait on the write.
    pub fn with_pending(
        &self,
        file: &str,
        owner: &str,
        before: &str,
        after: &str,
        entries: Vec<Entry>,
    ) -> Record {
        let mut record = self.clone();
        record.version = VERSION;
        record.pending.entry(file.to_string()).or_default().insert(
            owner.to_string(),
            Pending {
                before: fingerprint(before),
                after: fingerprint(after),
                entries,
            },
        );
        record
    }
}

fn remove_nested<T>(map: &mut BTreeMap<String, BTreeMap<String, T>>, file: &str, owner: &str) {
    if let Some(owners) = map.get_mut(file) {
        owners.remove(owner);
        if owners.is_empty() {
            map.remove(file);
        }
    }
}

fn too_large(shown: &str, bytes: usize, verb: &str) -> String {
    format!(
        "owner_record={shown} {verb} {bytes} bytes, beyond the record's cap of {} MiB (about 20,000 stanzas of one line): the module reads and rewrites it whole on every run while it holds the locks; give the owners an owner_record each, or fewer stanzas per owner; nothing was changed",
        MAX_RECORD_BYTES / (1024 * 1024)
    )
}

/// The entries as the `stanzas` option would have them: only what a task with `owner` is
/// allowed to write (a header Proxmox's merge recognises, lines and address-families as
/// [`stanza::check`] accepts them). `Err(n)`: the first entry (1-based) that is not.
fn check_entries(entries: &[Entry], checked: &HashSet<Entry>) -> Result<(), usize> {
    fn as_stanza(entry: &Entry) -> Stanza {
        Stanza {
            header: entry.header.clone(),
            lines: entry.lines.clone(),
            children: entry.children.iter().map(as_stanza).collect(),
            state: State::Present,
            mode: entry.mode,
            withdraw: Vec::new(),
        }
    }
    let strict = Checks {
        refuse_unrecognised_headers: true,
        asn: None,
    };
    for (at, entry) in entries.iter().enumerate() {
        count_step();
        if checked.contains(entry) {
            continue;
        }
        let stanza = as_stanza(entry);
        let same = stanza::check(std::slice::from_ref(&stanza), strict)
            .is_ok_and(|checked| checked.first() == Some(&stanza));
        if !same {
            return Err(at + 1);
        }
    }
    // Each stanza once, as the option has them.
    let mut seen = HashSet::with_capacity(entries.len());
    match entries
        .iter()
        .position(|e| !seen.insert(grammar::stanza_identity(&e.header)))
    {
        Some(at) => Err(at + 1),
        None => Ok(()),
    }
}

/// With `owner`, a stanza is recorded, and the record is later trusted to delete it; so only
/// the stanzas a record may name are accepted: headers Proxmox's merge recognises.
pub fn check_owned(stanzas: &[Stanza]) -> Result<(), String> {
    match stanzas
        .iter()
        .position(|s| grammar::proxmox_header(&s.header).is_none())
    {
        None => Ok(()),
        Some(i) => Err(format!(
            "stanzas[{i}].header='{}' is not a stanza Proxmox's merge recognises, and with owner only such stanzas are recorded (a record naming anything else is refused, so that nobody can make the module delete `hostname …` or `line vty`); write it in a task without owner",
            stanzas[i].header
        )),
    }
}

/// A stanza as the file has it before the run: its commands and its nested stanzas.
#[derive(Default)]
struct InFile {
    commands: HashSet<String>,
    children: HashMap<String, InFile>,
}

impl InFile {
    fn add(&mut self, context: &parse::Context) {
        for command in context.commands() {
            count_step();
            self.commands.insert(command.to_string());
        }
        for child in &context.children {
            self.children
                .entry(child.header.clone())
                .or_default()
                .add(child);
        }
    }
}

/// The declared stanzas as whole entries: what a record may hold without another check.
pub fn checked_entries(declared: &[Stanza]) -> HashSet<Entry> {
    declared
        .iter()
        .filter(|s| s.state == State::Present)
        .map(whole)
        .collect()
}

/// The whole stanza as declared, for a stanza the module adds or the owner held whole.
pub(crate) fn whole(stanza: &Stanza) -> Entry {
    Entry {
        header: stanza.header.clone(),
        mode: stanza.mode,
        lines: stanza.lines.clone(),
        children: stanza
            .children
            .iter()
            .filter(|c| c.state == State::Present)
            .map(whole)
            .collect(),
    }
}

/// What the owner holds once `stanzas` (checked, as declared) are applied to `before`:
/// what it held and still declares, and what the module adds now. A stanza or a command the
/// file already had and the owner did not hold stays the operator's, so it is never taken
/// back (item 3 of issue 29: declaring the operator's stanza once must not adopt it).
pub fn claims(before: &str, stanzas: &[Stanza], held: &[Entry]) -> Vec<Entry> {
    let held: HashMap<String, &Entry> = held
        .iter()
        .map(|e| (grammar::stanza_identity(&e.header), e))
        .collect();
    let declared: Vec<(&Stanza, Option<&Entry>)> = stanzas
        .iter()
        .filter(|s| s.state == State::Present)
        .map(|s| (s, held.get(&grammar::stanza_identity(&s.header)).copied()))
        .collect();
    // The file before the run is read only for stanzas the owner did not hold whole (on a
    // steady run, none: the run's cost stays that of the run without owner).
    let mut in_file: HashMap<String, InFile> = HashMap::new();
    if declared.iter().any(|(s, held)| !holds_whole(s, *held)) {
        for item in &parse::parse(before).items {
            if let parse::Item::Stanza(context) = item {
                count_step();
                in_file
                    .entry(grammar::stanza_identity(&context.header))
                    .or_default()
                    .add(context);
            }
        }
    }
    declared
        .into_iter()
        .filter_map(|(s, held)| {
            count_step();
            if holds_whole(s, held) {
                return Some(whole(s));
            }
            claim(s, in_file.get(&grammar::stanza_identity(&s.header)), held)
        })
        .collect()
}

/// An `exact` stanza the owner held whole stays its whole.
fn holds_whole(stanza: &Stanza, held: Option<&Entry>) -> bool {
    stanza.mode == Mode::Exact && held.is_some_and(|e| e.mode == Mode::Exact)
}

/// One stanza's claim, from what the file had (`in_file`) and what the owner held.
fn claim(stanza: &Stanza, in_file: Option<&InFile>, held: Option<&Entry>) -> Option<Entry> {
    let Some(in_file) = in_file else {
        return Some(whole(stanza)); // added by this run
    };
    if holds_whole(stanza, held) {
        return Some(whole(stanza));
    }
    let held_whole = held.is_some_and(|e| e.mode == Mode::Exact);
    let held_lines: HashSet<&str> = held
        .map(|e| e.lines.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let lines: Vec<String> = stanza
        .lines
        .iter()
        .filter(|l| {
            count_step();
            held_whole || held_lines.contains(l.as_str()) || !in_file.commands.contains(*l)
        })
        .cloned()
        .collect();
    let held_children: HashMap<&str, &Entry> = held
        .map(|e| e.children.iter().map(|c| (c.header.as_str(), c)).collect())
        .unwrap_or_default();
    let children: Vec<Entry> = stanza
        .children
        .iter()
        .filter(|c| c.state == State::Present)
        .filter_map(|c| {
            if held_whole {
                return Some(whole(c));
            }
            let held = held_children.get(c.header.as_str()).copied();
            claim(c, in_file.children.get(&c.header), held)
        })
        .collect();
    if lines.is_empty() && children.is_empty() {
        return None;
    }
    Some(Entry {
        header: stanza.header.clone(),
        mode: Mode::Merge,
        lines,
        children,
    })
}

/// The claims in both lists: a stanza held whole in both stays whole, else the lines (and
/// nested stanzas) both hold.
fn common(a: &[Entry], b: &[Entry]) -> Vec<Entry> {
    let by_header: HashMap<&str, &Entry> = b.iter().map(|e| (e.header.as_str(), e)).collect();
    a.iter()
        .filter_map(|x| {
            let y = by_header.get(x.header.as_str())?;
            if x.mode == Mode::Exact && y.mode == Mode::Exact {
                return Some((*y).clone());
            }
            let all = |e: &Entry| e.mode == Mode::Exact;
            let y_lines: HashSet<&str> = y.lines.iter().map(String::as_str).collect();
            let lines: Vec<String> = if all(y) {
                x.lines.clone()
            } else if all(x) {
                y.lines.clone()
            } else {
                x.lines
                    .iter()
                    .filter(|l| y_lines.contains(l.as_str()))
                    .cloned()
                    .collect()
            };
            let children = if all(y) {
                x.children.clone()
            } else if all(x) {
                y.children.clone()
            } else {
                common(&x.children, &y.children)
            };
            (!lines.is_empty() || !children.is_empty()).then(|| Entry {
                header: x.header.clone(),
                mode: Mode::Merge,
                lines,
                children,
            })
        })
        .collect()
}

/// `stanzas` (checked) with what the owner holds and no longer declares taken back: an
/// undeclared stanza is appended (removed, or its commands withdrawn), a declared `merge`
/// stanza withdraws its dropped commands. One pass over each list.
pub fn take_back(stanzas: Vec<Stanza>, held: &[Entry]) -> Vec<Stanza> {
    let mut out = stanzas;
    let by_identity: HashMap<String, &Entry> = held
        .iter()
        .map(|e| (grammar::stanza_identity(&e.header), e))
        .collect();
    let mut declared: HashSet<String> = HashSet::with_capacity(out.len());
    for stanza in &mut out {
        count_step();
        let identity = grammar::stanza_identity(&stanza.header);
        if let Some(entry) = by_identity.get(&identity) {
            withdraw_dropped(stanza, entry);
        }
        declared.insert(identity);
    }
    for entry in held {
        count_step();
        if !declared.contains(&grammar::stanza_identity(&entry.header)) {
            out.push(undeclared(entry));
        }
    }
    out
}

/// A held stanza the owner no longer declares, as the stanza that takes it back.
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

/// A declared `merge` stanza also withdraws the commands it held and no longer declares.
fn withdraw_dropped(stanza: &mut Stanza, entry: &Entry) {
    if stanza.state != State::Present || stanza.mode != Mode::Merge || entry.mode != Mode::Merge {
        return;
    }
    let declared: HashSet<&str> = stanza.lines.iter().map(String::as_str).collect();
    stanza.withdraw = entry
        .lines
        .iter()
        .filter(|line| {
            count_step();
            !declared.contains(line.as_str())
        })
        .cloned()
        .collect();
    let children: HashMap<String, usize> = stanza
        .children
        .iter()
        .enumerate()
        .map(|(at, c)| (c.header.clone(), at))
        .collect();
    for child_entry in &entry.children {
        match children.get(&child_entry.header) {
            Some(&at) => withdraw_dropped(&mut stanza.children[at], child_entry),
            None => stanza.children.push(undeclared(child_entry)),
        }
    }
}

/// The owner's claims for one run, and the record's writes in their crash-safe order:
/// [`Ownership::before_file_write`], the file, [`Ownership::after_file_write`]; or
/// [`Ownership::after_file_write`] alone when the file does not change.
pub struct Ownership {
    record: RecordFile,
    file: String,
    owner: String,
    /// The record with the file's writes under way settled against the file.
    resolved: Record,
    /// Written before the file: the earlier claims, the new ones pending on the write.
    during: Option<Rendered>,
    /// Written after the file (or alone): the new claims.
    after: Option<Rendered>,
    /// The record's text as read, for the diff.
    read: String,
}

impl Ownership {
    /// Opens `record_path` (the `owner_record` option) for `owner`'s claims in `file` (the
    /// `path` target, whose content `text` was read under its lock). The record's lock is
    /// taken after the file's, always in that order.
    pub fn open(
        record_path: &Path,
        file: &Target,
        text: &str,
        (owner, declared): (&str, &[Stanza]),
        follow_untrusted_links: bool,
        lock_timeout: Duration,
        check_mode: bool,
    ) -> anyhow::Result<Ownership> {
        let record = RecordFile::open(
            record_path,
            file,
            &checked_entries(declared),
            follow_untrusted_links,
            lock_timeout,
            check_mode,
        )?;
        let key = file.key.display().to_string();
        let resolved = record.record.resolve(&key, text);
        Ok(Ownership {
            read: record.text.clone(),
            record,
            file: key,
            owner: owner.to_string(),
            resolved,
            during: None,
            after: None,
        })
    }

    /// What the owner holds in the file now.
    pub fn held(&self) -> &[Entry] {
        self.resolved.entries(&self.file, &self.owner)
    }

    /// The record as read (for the secrets it holds).
    pub fn record(&self) -> &Record {
        &self.record.record
    }

    /// Plans the record's writes for the file going from `before` to `after` under
    /// `declared` (the checked stanzas, before [`take_back`]); refuses a record beyond
    /// [`MAX_RECORD_BYTES`] before anything is written.
    pub fn plan(&mut self, before: &str, after: &str, declared: &[Stanza]) -> Result<(), String> {
        let claims = claims(before, declared, self.held());
        let during = (before != after && claims != self.held()).then(|| {
            self.resolved
                .with_pending(&self.file, &self.owner, before, after, claims.clone())
        });
        let settled = self.resolved.with_claims(&self.file, &self.owner, claims);
        let during = during
            .or_else(|| (before != after).then(|| self.resolved.clone()))
            .map(|r| Rendered::of(&r));
        let settled = Rendered::of(&settled);
        for record in during.iter().chain([&settled]) {
            if record.text.len() > MAX_RECORD_BYTES {
                return Err(too_large(
                    &self.record.shown(),
                    record.text.len(),
                    "would grow to",
                ));
            }
        }
        self.during = during;
        self.after = Some(settled);
        Ok(())
    }

    /// Whether the run changes the record (what it holds once the run is over). Asked
    /// before the writes.
    pub fn changes(&self) -> bool {
        self.after.as_ref().is_some_and(|a| self.record.differs(a))
    }

    /// The record's text before and after the run, for the diff.
    pub fn diff(&self) -> (String, String) {
        let after = self
            .after
            .as_ref()
            .map(|a| a.text.clone())
            .unwrap_or_default();
        (self.read.clone(), after)
    }

    /// Step 1 of a run that writes the file: the record with the earlier claims, and the new
    /// ones pending on that write (other owners' writes settled). Killed after it, the next
    /// run finds the file as it was and keeps the earlier claims only.
    pub fn before_file_write(&mut self) -> anyhow::Result<()> {
        match &self.during {
            Some(during) => self.record.write(during),
            None => Ok(()),
        }
    }

    /// Step 2 (step 1 when the file does not change): the record with the new claims.
    /// Killed before it, the next run finds the file the write produced and makes the
    /// pending claims.
    pub fn after_file_write(&mut self) -> anyhow::Result<()> {
        match &self.after {
            Some(after) => self.record.write(after),
            None => Ok(()),
        }
    }
}
