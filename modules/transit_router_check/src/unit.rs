//! Whether the rules come back after a reload and a boot: the unit is enabled for boot and
//! reloads with nftables.service, or `/etc/nftables.conf` includes the persisted file.

use std::path::{Path, PathBuf};

/// The targets the unit's `[Install]` section names in `WantedBy=`.
pub fn wanted_by(unit: &str) -> Vec<String> {
    let mut section = String::new();
    let mut targets = Vec::new();
    for line in unit.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if section == "[Install]" {
            if let Some(value) = line.strip_prefix("WantedBy=") {
                targets.extend(value.split_whitespace().map(str::to_string));
            }
        }
    }
    targets
}

/// `ReloadPropagatedFrom=nftables.service` in `[Unit]` of the unit file alone.
pub fn reloads_with_nftables(unit: &str) -> bool {
    merge(unit, &[]).reloads_with_nftables()
}

/// systemd's folders of system units, the first one wins: a unit file of the same name in a folder
/// ahead of the unit's own is the one systemd loads, and drop-ins are read from all of them.
pub const UNIT_FOLDERS: &[&str] = &[
    "/etc/systemd/system.control",
    "/run/systemd/system.control",
    "/run/systemd/transient",
    "/run/systemd/generator.early",
    "/etc/systemd/system",
    "/etc/systemd/system.attached",
    "/run/systemd/system",
    "/run/systemd/system.attached",
    "/run/systemd/generator",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
    "/run/systemd/generator.late",
];

/// The drop-in folders' names of unit `name` (`a-b-c.service`), least specific first:
/// `service.d`, `a-.service.d`, `a-b-.service.d`, `a-b-c.service.d`.
pub fn dropin_names(name: &str) -> Vec<String> {
    let Some((stem, kind)) = name.rsplit_once('.') else {
        return vec![format!("{name}.d")];
    };
    let mut names = vec![format!("{kind}.d")];
    let dashes = stem.match_indices('-').map(|(at, _)| at);
    names.extend(dashes.map(|at| format!("{}-.{kind}.d", &stem[..at])));
    names.push(format!("{name}.d"));
    names
}

/// The folders systemd reads the unit's drop-ins from, in [`UNIT_FOLDERS`]'s order, the unit's
/// own folder first when it is none of them.
pub fn dropin_folders(unit_path: &Path) -> Vec<PathBuf> {
    let Some(name) = unit_path.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let own = unit_path.parent().map(Path::to_path_buf);
    let mut folders: Vec<PathBuf> = UNIT_FOLDERS.iter().map(PathBuf::from).collect();
    if let Some(own) = own.filter(|own| !folders.contains(own)) {
        folders.insert(0, own);
    }
    folders
        .iter()
        .flat_map(|folder| dropin_names(name).into_iter().map(move |d| folder.join(d)))
        .collect()
}

/// The drop-ins systemd applies, from the `*.conf` files found in each folder of
/// [`dropin_folders`] (in its order): a file name found first masks the same name further on;
/// they apply sorted by file name, whatever their folder.
pub fn effective_dropins(found: &[PathBuf]) -> Vec<PathBuf> {
    let mut chosen: Vec<PathBuf> = Vec::new();
    for path in found
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "conf"))
    {
        if !chosen.iter().any(|c| c.file_name() == path.file_name()) {
            chosen.push(path.clone());
        }
    }
    chosen.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    chosen
}

/// One drop-in: its path, and its text or why it was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropIn {
    pub path: String,
    pub text: Result<String, String>,
}

/// The unit as systemd merges it, in what the audit judges: `ReloadPropagatedFrom=` (a list, an
/// empty assignment resets it) and what the drop-ins change that the audit cannot judge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    pub reload_propagated_from: Vec<String>,
    /// Each drop-in that could not be read, or that changes what the unit runs or whether it runs
    /// (`Exec*=`, `Condition*=`, `Assert*=`, `Type=`), named with the key.
    pub unjudged: Vec<String>,
}

impl Merged {
    pub fn reloads_with_nftables(&self) -> bool {
        self.reload_propagated_from
            .iter()
            .any(|u| u == "nftables.service")
    }
}

/// The `(section, key, value)` assignments of a unit file, continuation lines joined.
fn assignments(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if pending.is_empty() && (line.starts_with('#') || line.starts_with(';')) {
            continue;
        }
        if let Some(continued) = line.strip_suffix('\\') {
            pending.push_str(continued);
            pending.push(' ');
            continue;
        }
        let whole = std::mem::take(&mut pending) + line;
        if whole.starts_with('[') {
            section = whole.trim().to_string();
        } else if let Some((key, value)) = whole.split_once('=') {
            found.push((
                section.clone(),
                key.trim().to_string(),
                value.trim().to_string(),
            ));
        }
    }
    found
}

/// Whether a drop-in's assignment changes what the unit runs or whether it runs.
fn unjudged_key(section: &str, key: &str) -> bool {
    match section {
        "[Service]" => key.starts_with("Exec") || key == "Type",
        "[Unit]" => key.starts_with("Condition") || key.starts_with("Assert"),
        _ => false,
    }
}

/// The unit file with its drop-ins laid over it, in order.
pub fn merge(unit: &str, dropins: &[DropIn]) -> Merged {
    let mut merged = Merged::default();
    let apply = |text: &str, from: Option<&str>, merged: &mut Merged| {
        for (section, key, value) in assignments(text) {
            if let Some(path) = from.filter(|_| unjudged_key(&section, &key)) {
                merged.unjudged.push(format!("{path} sets {key}="));
            }
            if section == "[Unit]" && key == "ReloadPropagatedFrom" {
                if value.is_empty() {
                    merged.reload_propagated_from.clear();
                }
                merged
                    .reload_propagated_from
                    .extend(value.split_whitespace().map(str::to_string));
            }
        }
    };
    apply(unit, None, &mut merged);
    for dropin in dropins {
        match &dropin.text {
            Ok(text) => apply(text, Some(&dropin.path), &mut merged),
            Err(why) => merged
                .unjudged
                .push(format!("{} is not read: {why}", dropin.path)),
        }
    }
    merged
}

/// The `include "..."` lines of an nft file that load `path` (its exact path, or a glob that
/// matches it).
pub fn includes(conf: &str, path: &Path) -> Option<String> {
    let wanted = path.to_string_lossy();
    conf.lines().map(str::trim).find_map(|line| {
        let pattern = line.strip_prefix("include")?.trim().trim_matches('"');
        glob_matches(pattern, &wanted).then(|| pattern.to_string())
    })
}

/// Shell-style `*` (not across `/`), `?` and literal characters; nft's include globs.
/// A file whose name starts with a dot matches only a pattern that spells the dot.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let spells_dot = |path: &str| path.rsplit('/').next().is_some_and(|n| n.starts_with('.'));
    if spells_dot(text) && !spells_dot(pattern) {
        return false;
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    glob_from(&pattern, &text)
}

fn glob_from(pattern: &[char], text: &[char]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some(('*', rest)) => (0..=text.len())
            .take_while(|&skip| skip == 0 || text[skip - 1] != '/')
            .any(|skip| glob_from(rest, &text[skip..])),
        Some(('?', rest)) => text
            .split_first()
            .is_some_and(|(c, tail)| *c != '/' && glob_from(rest, tail)),
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, tail)| t == c && glob_from(rest, tail)),
    }
}
