use crate::managed_file::*;
use std::collections::BTreeMap;

#[test]
fn each_interface_forwards_under_its_own_key_in_both_families_with_ipv6() {
    let interfaces = ["vmbr0.50".to_string()];
    let v4 = render(&desired_settings(false, &interfaces, &BTreeMap::new(), &[]));
    assert!(
        v4.contains("\n-net.ipv4.conf.vmbr0/50.forwarding = 1\n"),
        "{v4}"
    );
    assert!(!v4.contains("ipv6"), "{v4}");
    let both = render(&desired_settings(true, &interfaces, &BTreeMap::new(), &[]));
    assert!(
        both.contains("\n-net.ipv6.conf.vmbr0/50.forwarding = 1\n"),
        "{both}"
    );
    // systemd-sysctl reads it back as the key of that one interface.
    let parsed = crate::sysctl_d::parse(&both);
    assert_eq!(parsed.len(), 6);
}

#[test]
fn renders_dotted_interfaces_with_slashes_and_optional_prefix() {
    let rp: BTreeMap<String, u8> = [("vmbr0.50".to_string(), 2), ("all".to_string(), 0)].into();
    let text = render(&desired_settings(false, &[], &rp, &[]));
    assert!(
        text.contains("\nnet.ipv4.conf.all.forwarding = 1\nnet.ipv4.conf.default.forwarding = 1\n"),
        "{text}"
    );
    assert!(
        text.contains("\nnet.ipv4.conf.all.rp_filter = 0\n"),
        "{text}"
    );
    assert!(
        text.contains("\n-net.ipv4.conf.vmbr0/50.rp_filter = 2\n"),
        "{text}"
    );
    assert!(!text.contains("ipv6"), "{text}");
    // What we write parses back to the same keys and values.
    let parsed = crate::sysctl_d::parse(&text);
    assert_eq!(parsed.len(), 4);
}

#[test]
fn ipv6_adds_its_own_keys() {
    let text = render(&desired_settings(true, &[], &BTreeMap::new(), &[]));
    assert!(
        text.contains("net.ipv6.conf.all.forwarding = 1\nnet.ipv6.conf.default.forwarding = 1\n"),
        "{text}"
    );
}

#[test]
fn src_valid_mark_is_one_per_name_optional_for_an_interface() {
    let names = ["all".to_string(), "vmbr0.50".to_string()];
    let text = render(&desired_settings(false, &[], &BTreeMap::new(), &names));
    assert!(
        text.contains(
            "\nnet.ipv4.conf.all.src_valid_mark = 1\n-net.ipv4.conf.vmbr0/50.src_valid_mark = 1\n"
        ),
        "{text}"
    );
    // One comment says why, whatever the count of names.
    assert_eq!(text.matches("packet's mark").count(), 1, "{text}");
    let parsed = crate::sysctl_d::parse(&text);
    assert_eq!(parsed.len(), 4);
}
