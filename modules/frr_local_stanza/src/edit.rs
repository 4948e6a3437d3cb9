//! Applies the checked `stanzas` to a file: managed stanzas are rendered in the portable
//! emission profile (spec C.1), everything else is kept byte for byte.
//!
//! The file is cut into pieces, one per top-level context or loose line; a managed stanza's
//! first occurrence is replaced in place, its further occurrences (frr-reload merges
//! duplicate blocks, A.3) are removed, new stanzas go beside their list (numbered entries) or
//! at the end, between `!` separators.

use crate::count_step;
use crate::grammar::{self, ListEntry};
use crate::parse::{self, Context};
use crate::stanza::{Mode, Stanza, State};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Added,
    Updated,
    Removed,
    Unchanged,
}

#[derive(Debug)]
pub struct Edited {
    pub text: String,
    /// Each requested top-level header with what happened to it, in request order.
    pub changes: Vec<(String, Change)>,
}

/// A stanza as it will be written: header, body (commands and comments), nested stanzas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    header: String,
    body: Vec<Line>,
    children: Vec<Node>,
    is_block: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    text: String,
    comment: bool,
}

impl Node {
    fn from_context(context: &Context) -> Node {
        Node {
            header: context.header.clone(),
            body: context
                .body
                .iter()
                .map(|l| Line {
                    text: l.text.clone(),
                    comment: l.comment,
                })
                .collect(),
            children: context.children.iter().map(Node::from_context).collect(),
            is_block: context.is_block,
        }
    }

    /// frr-reload's view of repeated blocks: one context with the lines of all (spec A.3).
    pub(crate) fn join(mut self, other: Node) -> Node {
        self.body.extend(other.body);
        for child in other.children {
            match self.children.iter().position(|c| c.header == child.header) {
                Some(at) => {
                    let mine = self.children.remove(at);
                    self.children.insert(at, mine.join(child));
                }
                None => self.children.push(child),
            }
        }
        self
    }

    fn has_command(&self, text: &str) -> bool {
        self.body.iter().any(|l| !l.comment && l.text == text)
    }

    fn is_empty(&self) -> bool {
        self.body.iter().all(|l| l.comment) && self.children.is_empty()
    }
}

/// What `stanza` asks the existing node (if any) to become; `None` for no stanza.
pub(crate) fn desired(stanza: &Stanza, existing: Option<Node>) -> Option<Node> {
    if stanza.state == State::Absent {
        return None;
    }
    let is_block = grammar::opening_keyword(grammar::TOP_LEVEL, &stanza.header).is_some()
        || !stanza.lines.is_empty()
        || !stanza.children.is_empty()
        || stanza.header.starts_with("address-family ");
    let commands = |lines: &[String]| -> Vec<Line> {
        lines
            .iter()
            .map(|text| Line {
                text: text.clone(),
                comment: false,
            })
            .collect()
    };
    let node = match (stanza.mode, existing) {
        (Mode::Exact, existing) => {
            let mut node = Node {
                header: stanza.header.clone(),
                body: commands(&stanza.lines),
                children: Vec::new(),
                is_block,
            };
            for child in &stanza.children {
                let before = existing
                    .as_ref()
                    .and_then(|e| e.children.iter().find(|c| c.header == child.header))
                    .cloned();
                node.children.extend(desired(child, before));
            }
            node
        }
        (Mode::Merge, existing) => {
            let mut node = existing.unwrap_or(Node {
                header: stanza.header.clone(),
                body: Vec::new(),
                children: Vec::new(),
                is_block,
            });
            node.body
                .retain(|l| l.comment || !stanza.withdraw.contains(&l.text));
            for line in &stanza.lines {
                if !node.has_command(line) {
                    node.body.push(Line {
                        text: line.clone(),
                        comment: false,
                    });
                }
            }
            for child in &stanza.children {
                match node.children.iter().position(|c| c.header == child.header) {
                    Some(at) => {
                        let before = node.children.remove(at);
                        if let Some(after) = desired(child, Some(before)) {
                            node.children.insert(at, after);
                        }
                    }
                    None => node.children.extend(desired(child, None)),
                }
            }
            node
        }
    };
    // Never an empty stanza (spec C.1 rule 5): a block left with nothing is removed.
    (!(node.is_block && node.is_empty())).then_some(node)
}

/// The portable emission profile (spec C.1): header at column 0, one space per level,
/// router-level lines before the address-families, `exit` / ` exit-address-family`.
fn render(node: &Node) -> String {
    let mut out = String::new();
    render_into(node, 0, &mut out);
    out
}

fn render_into(node: &Node, depth: usize, out: &mut String) {
    let indent = " ".repeat(depth);
    out.push_str(&format!("{indent}{}\n", node.header));
    if !node.is_block {
        return;
    }
    for line in &node.body {
        out.push_str(&format!("{indent} {}\n", line.text));
    }
    for child in &node.children {
        render_into(child, depth + 1, out);
    }
    let terminator = if depth == 0 {
        "exit"
    } else if node.header.starts_with("address-family ") {
        "exit-address-family"
    } else if node.header.starts_with("vni ") {
        "exit-vni"
    } else {
        "exit"
    };
    out.push_str(&format!("{indent}{terminator}\n"));
}

pub(crate) struct Piece<'c> {
    text: String,
    pub(crate) context: Option<&'c Context>,
    pub(crate) list: Option<ListEntry>,
    pub(crate) separator: bool,
    pub(crate) removed: bool,
}

/// The file as pieces, one per stanza or loose line, in order, none removed yet.
pub(crate) fn pieces<'c>(file: &'c parse::ConfigFile) -> Vec<Piece<'c>> {
    file.items
        .iter()
        .map(|item| match item {
            parse::Item::Stanza(context) => Piece {
                text: file.text_of(context.header_index, context.last_index),
                context: Some(context),
                list: (!context.is_block)
                    .then(|| grammar::list_entry(&context.header))
                    .flatten(),
                separator: false,
                removed: false,
            },
            parse::Item::Loose(index) => Piece {
                text: file.text_of(*index, *index),
                context: None,
                list: None,
                separator: file.lines[*index].text.trim() == "!",
                removed: false,
            },
        })
        .collect()
}

/// The piece of a stanza that is not in the file yet.
pub(crate) fn new_piece<'c>(node: &Node) -> Piece<'c> {
    Piece {
        text: render(node),
        context: None,
        list: (!node.is_block)
            .then(|| grammar::list_entry(&node.header))
            .flatten(),
        separator: false,
        removed: false,
    }
}

/// Applies `stanzas` (already checked) to `source`.
pub fn apply(source: &str, stanzas: &[Stanza]) -> Edited {
    let file = parse::parse(source);
    let mut pieces = pieces(&file);
    let mut by_identity: HashMap<String, Vec<usize>> = HashMap::new();
    for (at, piece) in pieces.iter().enumerate() {
        if let Some(context) = piece.context {
            by_identity
                .entry(grammar::stanza_identity(&context.header))
                .or_default()
                .push(at);
        }
    }

    let mut changes = Vec::with_capacity(stanzas.len());
    let mut added: Vec<Piece> = Vec::new();
    let mut removed_any = false;
    for stanza in stanzas {
        let found = by_identity
            .get(&grammar::stanza_identity(&stanza.header))
            .cloned()
            .unwrap_or_default();
        let existing = found
            .iter()
            .filter_map(|&at| pieces[at].context.map(Node::from_context))
            .reduce(Node::join);
        let change = match (found.first(), desired(stanza, existing.clone())) {
            (None, None) => Change::Unchanged,
            (Some(_), None) => {
                for &at in &found {
                    pieces[at].removed = true;
                }
                removed_any = true;
                Change::Removed
            }
            (None, Some(node)) => {
                added.push(new_piece(&node));
                Change::Added
            }
            (Some(&first), Some(node)) => {
                let rendered = render(&node);
                let untouched = found.len() == 1
                    && (existing.as_ref() == Some(&node) && stanza.mode == Mode::Merge
                        || pieces[first].text.trim_end_matches(['\r', '\n'])
                            == rendered.trim_end_matches('\n'));
                if untouched {
                    Change::Unchanged
                } else {
                    pieces[first].text = rendered;
                    for &at in &found[1..] {
                        pieces[at].removed = true;
                    }
                    removed_any |= found.len() > 1;
                    Change::Updated
                }
            }
        };
        changes.push((stanza.header.clone(), change));
    }
    if removed_any {
        drop_doubled_separators(&mut pieces);
    }
    let placed = place(&pieces, added);
    Edited {
        text: join(&pieces, placed),
        changes,
    }
}

/// New pieces placed around the file's pieces: `before[i]` and `after[i]` beside piece `i`,
/// `tail` before piece `tail_at` (`pieces.len()`: the end of the file).
pub(crate) struct Placed<'c> {
    before: Vec<Vec<Piece<'c>>>,
    after: Vec<Vec<Piece<'c>>>,
    tail_at: usize,
    tail: Vec<Piece<'c>>,
}

/// Where the new stanzas go: a numbered entry beside the entries of its list, in sequence
/// order; anything else at the end, between `!` separators (a new list's entries together,
/// where its first entry in request order goes).
///
/// All of them are placed in one pass, so adding N stanzas to a file of M pieces costs
/// O((N + M) log N), where inserting them one by one cost O(N × (N + M)): 200,000 new stanzas
/// took 55 s. The result is the one of inserting them one by one in request order, each after
/// the last entry of its list with a lower number or else before the list's first entry (the
/// tests hold it to that).
pub(crate) fn place<'c>(pieces: &[Piece<'c>], added: Vec<Piece<'c>>) -> Placed<'c> {
    let mut placed = Placed {
        before: std::iter::repeat_with(Vec::new)
            .take(pieces.len())
            .collect(),
        after: std::iter::repeat_with(Vec::new)
            .take(pieces.len())
            .collect(),
        tail_at: tail_position(pieces),
        tail: Vec::new(),
    };
    // The file's entries of each list, in file order.
    let mut lists: HashMap<&str, Vec<(u64, usize)>> = HashMap::new();
    for (at, piece) in pieces.iter().enumerate() {
        count_step();
        if let (Some(entry), false) = (&piece.list, piece.removed) {
            lists
                .entry(entry.list.as_str())
                .or_default()
                .push((entry.seq, at));
        }
    }
    // The new entries of each list the file has, and the tail in request order: single
    // stanzas, and one group per list the file does not have.
    let mut joining: HashMap<String, Vec<Piece<'c>>> = HashMap::new();
    let mut tail: Vec<Vec<Piece<'c>>> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for piece in added {
        count_step();
        let Some(list) = piece.list.as_ref().map(|e| e.list.clone()) else {
            tail.push(vec![piece]);
            continue;
        };
        if lists.contains_key(list.as_str()) {
            joining.entry(list).or_default().push(piece);
        } else if let Some(&group) = group_of.get(&list) {
            tail[group].push(piece);
        } else {
            group_of.insert(list, tail.len());
            tail.push(vec![piece]);
        }
    }
    for (list, new) in joining {
        join_list(&lists[list.as_str()], new, &mut placed);
    }
    let lead = pieces[..placed.tail_at]
        .iter()
        .rev()
        .find(|p| !p.removed)
        .is_some_and(|p| !p.separator);
    if lead && !tail.is_empty() {
        placed.tail.push(separator());
    }
    for mut item in tail {
        // A new list: its entries in the order one-by-one insertion leaves them.
        sort_entries(&mut item);
        placed.tail.extend(item);
        placed.tail.push(separator());
    }
    placed
}

/// Entries by number; of equal numbers the later request first, as inserting each before the
/// first entry with a number not lower would leave them.
fn sort_entries(entries: &mut [Piece]) {
    entries.reverse();
    entries.sort_by_key(|p| p.list.as_ref().map(|e| e.seq));
}

/// Places the `new` entries of a list the file has (`existing`: number and piece, in file
/// order).
fn join_list<'c>(existing: &[(u64, usize)], mut new: Vec<Piece<'c>>, placed: &mut Placed<'c>) {
    let first = existing[0].1;
    let seq = |p: &Piece| p.list.as_ref().map_or(0, |e| e.seq);
    if existing.windows(2).all(|w| w[0].0 <= w[1].0) {
        // A numbered list in order (as FRR writes them): after the last lower number.
        sort_entries(&mut new);
        for piece in new {
            count_step();
            let lower = existing.partition_point(|(s, _)| *s < seq(&piece));
            match lower {
                0 => placed.before[first].push(piece),
                n => placed.after[existing[n - 1].1].push(piece),
            }
        }
        return;
    }
    // Out of order (by hand): one by one, as the rule says; O(entries of this list) each.
    enum Slot {
        File(usize),
        New(usize),
    }
    let mut order: Vec<(u64, Slot)> = existing
        .iter()
        .map(|&(s, at)| (s, Slot::File(at)))
        .collect();
    for (k, piece) in new.iter().enumerate() {
        let s = seq(piece);
        let at = order.iter().rposition(|(other, _)| {
            count_step();
            *other < s
        });
        order.insert(at.map_or(0, |at| at + 1), (s, Slot::New(k)));
    }
    let mut new: Vec<Option<Piece>> = new.into_iter().map(Some).collect();
    let mut last_file = None;
    for (_, slot) in order {
        match slot {
            Slot::File(at) => last_file = Some(at),
            Slot::New(k) => {
                // Each new entry has one slot.
                if let Some(piece) = new[k].take() {
                    match last_file {
                        None => placed.before[first].push(piece),
                        Some(at) => placed.after[at].push(piece),
                    }
                }
            }
        }
    }
}

/// After a block the file leaves open, a stanza would become part of it (to frr-reload and to
/// Proxmox alike): new stanzas go after the last stanza that is closed.
pub(crate) fn tail_position(pieces: &[Piece]) -> usize {
    let is_open = |p: &Piece| {
        !p.removed
            && p.context
                .is_some_and(|c| c.is_block && c.terminator.is_none())
    };
    let mut at = pieces.len();
    while let Some(last) = pieces[..at]
        .iter()
        .rposition(|p| !p.removed && p.context.is_some())
        .filter(|&last| is_open(&pieces[last]))
    {
        at = last;
    }
    at
}

pub(crate) fn separator<'c>() -> Piece<'c> {
    Piece {
        text: "!\n".into(),
        context: None,
        list: None,
        separator: true,
        removed: false,
    }
}

/// Removing a stanza that stood between two `!` lines would leave them doubled: drop the
/// second, so that adding and removing a stanza returns the file it started from.
fn drop_doubled_separators(pieces: &mut [Piece]) {
    let mut previous_is_separator = true; // the start of the file counts as one
    let mut removed_since = false;
    for piece in pieces.iter_mut() {
        if piece.removed {
            removed_since = true;
            continue;
        }
        if piece.separator && previous_is_separator && removed_since {
            piece.removed = true;
            continue;
        }
        previous_is_separator = piece.separator;
        removed_since = false;
    }
}

pub(crate) fn join<'c>(pieces: &[Piece<'c>], placed: Placed<'c>) -> String {
    let Placed {
        before,
        after,
        tail_at,
        mut tail,
    } = placed;
    let mut tail = Some(std::mem::take(&mut tail));
    let mut out = String::new();
    let mut push = |piece: &Piece| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&piece.text);
    };
    let mut before = before.into_iter();
    let mut after = after.into_iter();
    for (at, piece) in pieces.iter().enumerate() {
        if at == tail_at {
            tail.take().unwrap_or_default().iter().for_each(&mut push);
        }
        before.next().unwrap_or_default().iter().for_each(&mut push);
        if !piece.removed {
            push(piece);
        }
        after.next().unwrap_or_default().iter().for_each(&mut push);
    }
    tail.take().unwrap_or_default().iter().for_each(&mut push);
    out
}
