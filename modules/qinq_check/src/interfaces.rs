//! The bond's configured slaves, as ifupdown2's `/etc/network/interfaces` lists them, read the
//! way the role's Jinja read them before (so the udev rule it writes covers the same NICs):
//!
//! - lines as Python's `str.splitlines()` cuts them, words as `str.split()` does;
//! - an `iface NAME` line opens NAME's stanza, which runs to the next `iface` line (`auto`,
//!   `allow-*`, `source` and `mapping` lines do not end it);
//! - in the bond's stanzas, the words after `bond-slaves`, `slaves` or `bond_slaves` are slaves,
//!   in file order, each once; `none` means no slave;
//! - `source` lines are not followed (the Jinja did not follow them).
//!
//! The names end up in a root udev rule (`KERNEL=="NAME", RUN+="… ethtool -K NAME …"`), so one
//! that is not a plain interface name (letters, digits, `.`, `_`, `-`, within the kernel's
//! rules) is left out, and reported.

/// What the file says about the bond's slaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfiguredSlaves {
    /// The slave names, in file order, each once.
    pub names: Vec<String>,
    /// Why each left-out word was left out, with its line (1-based).
    pub left_out: Vec<String>,
}

const SLAVE_KEYWORDS: [&str; 3] = ["bond-slaves", "slaves", "bond_slaves"];

/// The slaves `bond`'s stanzas list in `text`; `source` names the file in messages.
pub fn configured_slaves(text: &str, bond: &str, source: &str) -> ConfiguredSlaves {
    let mut found = ConfiguredSlaves::default();
    let mut in_bond = false;
    for (index, line) in python_lines(text).enumerate() {
        let words = python_words(line);
        match words.first() {
            Some(&"iface") => in_bond = words.get(1) == Some(&bond),
            Some(keyword) if in_bond && SLAVE_KEYWORDS.contains(keyword) => {
                for &name in &words[1..] {
                    if name == "none" || found.names.iter().any(|n| n == name) {
                        continue;
                    }
                    match plain_interface_name(name) {
                        Ok(()) => found.names.push(name.to_string()),
                        Err(why) => found.left_out.push(format!(
                            "{source} line {}: '{name}' ({keyword} of {bond}) is left out of configured_slaves: {why}",
                            index + 1
                        )),
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// A name a udev rule and a command line take literally.
fn plain_interface_name(name: &str) -> Result<(), String> {
    deevnet_runtime::ifname::validate("slave", name).map_err(|_| {
        "it is not a valid interface name (1 to 15 bytes, no '/', ':' or whitespace)".to_string()
    })?;
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        Some(c) => Err(format!(
            "'{c}' would change the meaning of the udev rule that keeps txvlan off (a glob or a quote); name the NIC with letters, digits, '.', '_' and '-' only, or list it plainly"
        )),
        None => Ok(()),
    }
}

/// Lines as Python's `str.splitlines()` ends them (a `\r\n` pair gives one extra empty line,
/// which holds no word and so changes nothing).
fn python_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split([
        '\n', '\r', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\u{85}', '\u{2028}', '\u{2029}',
    ])
}

/// Words as Python's `str.split()` cuts them: on Unicode whitespace, which for Python also
/// holds the separators U+001C to U+001F.
fn python_words(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
        .filter(|word| !word.is_empty())
        .collect()
}
