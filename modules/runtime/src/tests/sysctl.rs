use crate::sysctl::*;
use std::path::PathBuf;

#[test]
fn dotted_interface_names_use_slashes_in_the_dotted_form() {
    let key = SysctlKey::ipv4_conf("vmbr0.50", "forwarding");
    assert_eq!(key.to_string(), "net.ipv4.conf.vmbr0/50.forwarding");
    assert_eq!(
        key.proc_path(),
        PathBuf::from("/proc/sys/net/ipv4/conf/vmbr0.50/forwarding")
    );
}

#[test]
fn both_spellings_parse_to_the_same_key() {
    let key = SysctlKey::ipv4_conf("bond0.40.201", "rp_filter");
    assert_eq!(
        SysctlKey::parse("net.ipv4.conf.bond0/40/201.rp_filter"),
        key
    );
    assert_eq!(
        SysctlKey::parse("net/ipv4/conf/bond0.40.201/rp_filter"),
        key
    );
    assert_eq!(
        SysctlKey::parse(" net.ipv4.ip_forward "),
        SysctlKey::new(&["net", "ipv4", "ip_forward"])
    );
    // The trap: the dotted form without slashes names another key.
    assert_ne!(
        SysctlKey::parse("net.ipv4.conf.vmbr0.50.forwarding"),
        SysctlKey::ipv4_conf("vmbr0.50", "forwarding")
    );
}

#[test]
fn runtime_values_are_read_from_proc() {
    assert_eq!(
        SysctlKey::ipv4_conf("lo", "forwarding")
            .read()
            .unwrap()
            .as_deref()
            .map(|v| v == "0" || v == "1"),
        Some(true)
    );
    assert_eq!(
        SysctlKey::ipv4_conf("no-such-if0", "forwarding")
            .read()
            .unwrap(),
        None
    );
}
