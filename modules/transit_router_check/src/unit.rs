//! Whether the rules come back after a reload and a boot: the unit is enabled for boot and
//! reloads with nftables.service, or `/etc/nftables.conf` includes the persisted file.

use std::path::Path;

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

/// `ReloadPropagatedFrom=nftables.service` in `[Unit]`.
pub fn reloads_with_nftables(unit: &str) -> bool {
    unit.lines().map(str::trim).any(|line| {
        line.strip_prefix("ReloadPropagatedFrom=")
            .is_some_and(|v| v.split_whitespace().any(|u| u == "nftables.service"))
    })
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
