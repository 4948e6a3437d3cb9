//! The sysctl.d file format, read the way systemd-sysctl reads it (sysctl.d(5)).
//!
//! ```text
//! # comment            ; comment
//! net.ipv4.conf.all.forwarding = 1
//! -net.ipv4.conf.vmbr0/50.rp_filter = 0     (a leading '-': failure to set is not an error)
//! net.ipv4.conf.*.rp_filter = 2             (a glob: every matching key without an explicit one)
//! -net.ipv4.conf.all.rp_filter              (no value: excluded from the globs)
//! ```
//! Lines systemd would reject are skipped, as systemd skips them (it logs and goes on).

use deevnet_runtime::sysctl::SysctlKey;

/// What an assignment applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Key(SysctlKey),
    /// A glob over `/proc/sys` paths (`net/ipv4/conf/*/rp_filter`).
    Glob(String),
}

/// One meaningful line of a sysctl.d file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub target: Target,
    /// `None` for an exclusion (`-key` with no `=`).
    pub value: Option<String>,
    /// 1-based line number, for messages.
    pub line: usize,
}

/// Parses a whole file; never fails.
pub fn parse(text: &str) -> Vec<Assignment> {
    let mut out = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let line = line.strip_prefix('-').unwrap_or(line);
        let (key_text, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (line.trim(), None),
        };
        if key_text.is_empty() {
            continue;
        }
        let key = SysctlKey::parse(key_text);
        let is_glob = key_text.contains(['*', '?', '[']);
        // systemd accepts a key without a value only as a glob exclusion of a plain key.
        if value.is_none() && !raw.trim_start().starts_with('-') {
            continue;
        }
        let target = if is_glob && value.is_some() {
            Target::Glob(key.components().join("/"))
        } else {
            Target::Key(key)
        };
        out.push(Assignment {
            target,
            value,
            line: index + 1,
        });
    }
    out
}

/// `fnmatch(3)` without flags, as systemd-sysctl matches globs: `*` and `?` cross `/`, and
/// `[...]` is a character class (with `!` or `^` for negation).
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matcher with one backtrack point for the last `*`: linear enough for keys.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = match_class(&p, pi, t[ti]) {
                        if matched {
                            pi = next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == '[' {
                        // An unclosed '[' is a literal.
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((star_pi, star_ti)) => {
                pi = star_pi + 1;
                ti = star_ti + 1;
                star = Some((star_pi, star_ti + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Matches `c` against the class starting at `p[start] == '['`; returns whether it matched and
/// the index after the class, or `None` when the class is not closed.
fn match_class(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = matches!(p.get(i), Some('!') | Some('^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}
