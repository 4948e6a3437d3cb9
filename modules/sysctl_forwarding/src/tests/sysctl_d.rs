use crate::sysctl_d::*;
use deevnet_runtime::sysctl::SysctlKey;

#[test]
fn parses_the_forms_of_sysctl_d() {
    let text = "# c\n; c\n\nnet.ipv4.conf.all.forwarding = 1\n-net.ipv4.conf.vmbr0/50.rp_filter=0\n\
                    net.ipv4.conf.*.rp_filter = 2\n-net.ipv4.conf.all.rp_filter\nbroken line\n = 3\n";
    let parsed = parse(text);
    assert_eq!(parsed.len(), 4, "{parsed:?}");
    assert_eq!(
        parsed[0].target,
        Target::Key(SysctlKey::ipv4_conf("all", "forwarding"))
    );
    assert_eq!(parsed[0].value.as_deref(), Some("1"));
    assert_eq!(parsed[0].line, 4);
    assert_eq!(
        parsed[1].target,
        Target::Key(SysctlKey::ipv4_conf("vmbr0.50", "rp_filter"))
    );
    assert_eq!(
        parsed[2].target,
        Target::Glob("net/ipv4/conf/*/rp_filter".into())
    );
    assert_eq!(
        parsed[3].target,
        Target::Key(SysctlKey::ipv4_conf("all", "rp_filter"))
    );
    assert_eq!(parsed[3].value, None);
}

#[test]
fn globs_follow_fnmatch() {
    assert!(glob_matches(
        "net/ipv4/conf/*/rp_filter",
        "net/ipv4/conf/vmbr0.50/rp_filter"
    ));
    assert!(glob_matches(
        "net/*/forwarding",
        "net/ipv4/conf/all/forwarding"
    ));
    assert!(glob_matches(
        "net/ipv4/conf/vmbr?/forwarding",
        "net/ipv4/conf/vmbr0/forwarding"
    ));
    assert!(glob_matches(
        "net/ipv4/conf/[a-c]ll/x",
        "net/ipv4/conf/all/x"
    ));
    assert!(!glob_matches(
        "net/ipv4/conf/[!a]ll/x",
        "net/ipv4/conf/all/x"
    ));
    assert!(!glob_matches(
        "net/ipv4/conf/*/rp_filter",
        "net/ipv4/conf/all/forwarding"
    ));
    assert!(glob_matches("a[b", "a[b"));
    assert!(glob_matches("**", ""));
}
