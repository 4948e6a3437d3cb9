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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        configured_slaves(text, "bond0", "interfaces").names
    }

    #[test]
    fn the_bond_stanzas_slaves_in_file_order_each_once() {
        let text = "\
auto lo
iface lo inet loopback

auto bond0
iface bond0 inet manual
\tbond-slaves eno1 eno2
\tbond-mode active-backup
\tbond_slaves eno2 eno3
iface bond0 inet6 manual
    slaves eno4

iface bond1 inet manual
\tbond-slaves eno9
";
        assert_eq!(names(text), ["eno1", "eno2", "eno3", "eno4"]);
    }

    #[test]
    fn only_iface_lines_end_a_stanza_and_none_is_no_slave() {
        // As the Jinja read it: `auto` and `source` do not end bond0's stanza.
        let text = "iface bond0\n bond-slaves none\nauto vmbr0\nsource /etc/x\nslaves eno7\niface vmbr0\nslaves eno8\n";
        assert_eq!(names(text), ["eno7"]);
    }

    #[test]
    fn comments_other_bonds_and_prefixes_do_not_count() {
        let text = "iface bond0\n#bond-slaves eno1\n bond-slaves-extra eno2\niface bond00\n bond-slaves eno3\niface\n bond-slaves eno4\n";
        assert_eq!(names(text), Vec::<String>::new());
    }

    #[test]
    fn lines_and_words_are_cut_as_python_cuts_them() {
        // \r, \x0b, \x0c, \x1c-\x1e and U+2028 end lines; \x1f and U+00A0 separate words.
        let text = "iface bond0\rbond-slaves eno1\x1feno2\u{a0}eno3\x0biface x\x0cbond-slaves eno4\u{2028}iface bond0\x1cslaves eno5";
        assert_eq!(names(text), ["eno1", "eno2", "eno3", "eno5"]);
    }

    #[test]
    fn names_a_udev_rule_would_misread_are_left_out_and_reported() {
        let text = "iface bond0\n bond-slaves eno1 eno[1-2] a\"b way-too-long-name0 eno2\n";
        let found = configured_slaves(text, "bond0", "/etc/network/interfaces");
        assert_eq!(found.names, ["eno1", "eno2"]);
        assert_eq!(found.left_out.len(), 3, "{:?}", found.left_out);
        assert!(found.left_out[0].starts_with(
            "/etc/network/interfaces line 2: 'eno[1-2]' (bond-slaves of bond0) is left out of configured_slaves: '[' would change"
        ), "{:?}", found.left_out);
        assert!(
            found.left_out[2].contains("not a valid interface name"),
            "{:?}",
            found.left_out
        );
    }
}
