//! The `stanzas` option: what the task asks for, checked before anything is read or written.
//!
//! Every refusal names the item (`stanzas[2].lines[0]`), the value, what goes wrong and what
//! to write instead.

use crate::grammar::{self, ProxmoxHeader};
use crate::rules;
use serde::Deserialize;
use std::collections::HashMap;

deevnet_runtime::choices! {
#[derive(Default)]
pub enum State {
    #[default]
    Present = "present",
    Absent = "absent",
}
}

deevnet_runtime::choices! {
#[derive(Hash, Default)]
pub enum Mode {
    /// The body becomes exactly `lines` (and `children`).
    #[default]
    Exact = "exact",
    /// `lines` and `children` are added where missing; nothing is removed.
    Merge = "merge",
}
}

/// One item of `stanzas` (or of its `children`), as the task gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Stanza {
    pub header: String,
    #[serde(default)]
    pub lines: Vec<String>,
    #[serde(default)]
    pub children: Vec<Stanza>,
    #[serde(default)]
    pub state: State,
    #[serde(default)]
    pub mode: Mode,
    /// Merge mode: commands an owner wrote earlier and no longer declares, removed from the
    /// body before `lines` are added (never given by a task; see [`crate::ownership`]).
    #[serde(skip)]
    pub withdraw: Vec<String>,
}

impl Stanza {
    /// A present stanza with `lines` and no children, as tests and callers in code build one.
    pub fn present(header: &str, lines: &[&str], mode: Mode) -> Stanza {
        Stanza {
            header: header.into(),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            children: Vec::new(),
            state: State::Present,
            mode,
            withdraw: Vec::new(),
        }
    }
}

/// How strictly headers are held to what Proxmox recognises (`lint=error` refuses the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks<'a> {
    pub refuse_unrecognised_headers: bool,
    pub asn: Option<&'a str>,
}

/// Checks `stanzas` and returns them normalised (whitespace collapsed as frr-reload does).
pub fn check(stanzas: &[Stanza], checks: Checks) -> Result<Vec<Stanza>, String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(stanzas.len());
    for (i, stanza) in stanzas.iter().enumerate() {
        let path = format!("stanzas[{i}]");
        let checked = check_top_level(stanza, &path, checks)?;
        let identity = grammar::stanza_identity(&checked.header);
        if let Some(first) = seen.insert(identity, i) {
            return Err(format!(
                "{path}.header='{}': stanzas[{first}] names the same stanza; give each stanza once in a call (put all its lines in one item)",
                stanza.header
            ));
        }
        out.push(checked);
    }
    Ok(out)
}

fn check_top_level(stanza: &Stanza, path: &str, checks: Checks) -> Result<Stanza, String> {
    let header = check_text(&stanza.header, &format!("{path}.header"))?;
    if header.starts_with("address-family ") {
        return Err(format!(
            "{path}.header='{}' is an address-family, which lives inside `router bgp …`; give it as an item of that stanza's children",
            stanza.header
        ));
    }
    let proxmox = grammar::proxmox_header(&header);
    let frr_block = grammar::opening_keyword(grammar::TOP_LEVEL, &header).is_some();
    if proxmox.is_none() && checks.refuse_unrecognised_headers {
        let (rule, advice) = rules::not_a_stanza(&header);
        return Err(format!(
            "{path}.header='{}' is refused ({}): {advice}. With lint=warn or lint=off the module writes it anyway",
            stanza.header, rule.name
        ));
    }
    if let (Some(expected), Some((asn, vrf))) = (checks.asn, grammar::bgp_instance(&header)) {
        if asn != expected {
            return Err(format!(
                "{path}.header='{}': ASN {asn} differs from asn={expected}, the generated router's; Proxmox would emit a second BGP instance that bgpd rejects (spec B.6 E5). Write `router bgp {expected}{}`",
                stanza.header,
                vrf.map(|v| format!(" vrf {v}")).unwrap_or_default()
            ));
        }
    }
    let one_line =
        matches!(proxmox, Some(ProxmoxHeader::List)) || (proxmox.is_none() && !frr_block);
    if !one_line && !frr_block {
        // Proxmox would keep it as a block, but frr-reload opens no context there: its lines
        // would read as top-level commands, and every run would add them again.
        return Err(format!(
            "{path}.header='{}' opens no context FRR knows (e.g. `router openfabric NAME` needs the space and a name); check the spelling",
            stanza.header
        ));
    }
    if one_line && (!stanza.lines.is_empty() || !stanza.children.is_empty()) {
        return Err(format!(
            "{path}: `{header}` is a one-line stanza with no body, but lines or children are given; put the whole entry in header and leave lines and children empty"
        ));
    }
    let children_allowed = header.starts_with("router bgp ");
    if !stanza.children.is_empty() && !children_allowed {
        let why = if header.starts_with("vrf ") {
            "a vrf stanza has no nested stanzas in Proxmox's merge"
        } else {
            "only a `router bgp …` stanza has nested stanzas (its address-families) that Proxmox's merge keeps"
        };
        return Err(format!(
            "{path}.children: {why}; put the commands of `{header}` in {path}.lines"
        ));
    }
    let lines = check_lines(stanza, &[header.as_str()], path)?;
    let children = check_children(stanza, &header, path)?;
    let has_body = !lines.is_empty() || children.iter().any(|c| c.state == State::Present);
    if stanza.state == State::Present && !one_line && !has_body {
        return Err(format!(
            "{path}: `{header}` has an empty body; the module never writes an empty stanza (Proxmox 1.3.0 fails on one, spec B.6 E2). Give {path}.lines, or state: absent to remove it"
        ));
    }
    Ok(Stanza {
        header,
        lines,
        children,
        state: stanza.state,
        mode: stanza.mode,
        withdraw: Vec::new(),
    })
}

fn check_children(stanza: &Stanza, parent: &str, path: &str) -> Result<Vec<Stanza>, String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (j, child) in stanza.children.iter().enumerate() {
        let child_path = format!("{path}.children[{j}]");
        let header = check_text(&child.header, &format!("{child_path}.header"))?;
        if !header.starts_with("address-family ") {
            return Err(format!(
                "{child_path}.header='{}': the only nested stanza Proxmox's merge keeps is `address-family …` under `router bgp …`; put the line in {path}.lines, or give an address-family",
                child.header
            ));
        }
        if !child.children.is_empty() {
            return Err(format!(
                "{child_path}.children: Proxmox's merge does not nest deeper than an address-family under its router; put the commands in {child_path}.lines"
            ));
        }
        if let Some(first) = seen.insert(header.clone(), j) {
            return Err(format!(
                "{child_path}.header='{}': {path}.children[{first}] names the same address-family; give it once",
                child.header
            ));
        }
        let lines = check_lines(child, &[parent, header.as_str()], &child_path)?;
        if child.state == State::Present && lines.is_empty() {
            return Err(format!(
                "{child_path}: `{header}` has an empty body; give {child_path}.lines, or state: absent"
            ));
        }
        out.push(Stanza {
            header,
            lines,
            children: Vec::new(),
            state: child.state,
            mode: child.mode,
            withdraw: Vec::new(),
        });
    }
    Ok(out)
}

/// The keywords that open a context inside the stanza reached through `headers` (a top-level
/// header, then nested ones), as frr-reload's grammar has them.
fn keywords_inside(headers: &[&str]) -> &'static [grammar::Keyword] {
    let mut level = grammar::TOP_LEVEL;
    for header in headers {
        match grammar::opening_keyword(level, header) {
            Some(keyword) => level = keyword.children,
            None => return &[],
        }
    }
    level
}

/// `headers`: the stanza's own header, after its parent's for a nested stanza.
fn check_lines(stanza: &Stanza, headers: &[&str], path: &str) -> Result<Vec<String>, String> {
    let header = headers.last().copied().unwrap_or_default();
    let mut out = Vec::with_capacity(stanza.lines.len());
    for (k, line) in stanza.lines.iter().enumerate() {
        let line_path = format!("{path}.lines[{k}]");
        let text = check_text(line, &line_path)?;
        if grammar::proxmox_header(&text).is_some() {
            return Err(format!(
                "{line_path}='{line}' is a stanza header, not a line of `{header}`: Proxmox 1.2.x would start a new stanza there; give it as a stanza of its own"
            ));
        }
        if text.starts_with("address-family ") {
            return Err(format!(
                "{line_path}='{line}' opens an address-family; give it as an item of {path}.children with its own lines"
            ));
        }
        let nested = grammar::opening_keyword(keywords_inside(headers), &text);
        if let Some(keyword) = nested {
            // frr-reload would put the lines after it inside that context, not in `header`.
            return Err(format!(
                "{line_path}='{line}' opens a context (`{}`) nested in `{header}`, which the module does not manage; write that part of the file by hand",
                keyword.prefix.trim()
            ));
        }
        if let Some(keyword) = grammar::opening_keyword(grammar::TOP_LEVEL, &text) {
            // frr-reload ends every open context at a top-level keyword, wherever it stands.
            return Err(format!(
                "{line_path}='{line}' starts a top-level context (`{}`), which would end `{header}` there; give it as a stanza of its own",
                keyword.prefix.trim()
            ));
        }
        out.push(text);
    }
    Ok(out)
}

/// One header or line: a single line of text that Proxmox's merge keeps as it is.
fn check_text(value: &str, path: &str) -> Result<String, String> {
    if value.contains(['\n', '\r']) {
        return Err(format!(
            "{path}={value:?} holds a line break; give each line as its own list item"
        ));
    }
    if let Some((at, control)) = value
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_control() && *c != '\t')
    {
        // NUL and its kin would be written into the file as they are: FRR, frr-reload and
        // Proxmox's merge read it as lines of text, and each of them cuts, splits or refuses
        // such a line its own way. A tab is read as a space by all three (and written as one).
        return Err(format!(
            "{path}={value:?} contains the control character U+{:04X} (character {}); headers and lines are plain text: remove it",
            u32::from(control),
            at + 1
        ));
    }
    let text = grammar::normalise(value);
    if text.is_empty() {
        return Err(format!("{path} is empty; give the text of the line"));
    }
    if text.contains('!') {
        return Err(format!(
            "{path}='{value}' holds `!`: Proxmox's merge drops every line that holds one (spec B.7); remove the `!` and what follows it"
        ));
    }
    if text.starts_with('#') {
        // Written back it reads as a comment, never found again: added anew on every run.
        return Err(format!(
            "{path}='{value}' is a comment (`#`), which the module cannot find again in the file; remove it"
        ));
    }
    if text == "end" {
        return Err(format!(
            "{path}='end': `end` closes every context in frr-reload and Proxmox copies it as is (spec B.6); remove it, the module closes stanzas with `exit`"
        ));
    }
    if text.starts_with("exit") {
        return Err(format!(
            "{path}='{value}': terminators are written by the module (`exit`, ` exit-address-family`); remove the line"
        ));
    }
    Ok(text)
}
