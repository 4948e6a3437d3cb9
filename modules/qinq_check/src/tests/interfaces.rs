use crate::interfaces::*;

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
