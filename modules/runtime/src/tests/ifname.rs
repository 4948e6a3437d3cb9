use crate::ifname::validate;

#[test]
fn kernel_rules() {
    for good in [
        "vmbr0",
        "vmbr0.50",
        "bond0.40.201",
        "a",
        "fifteen_chars_x",
        "vrf_tdemo",
    ] {
        assert!(validate("interfaces", good).is_ok(), "{good}");
    }
    for bad in [
        "",
        ".",
        "..",
        "../../kernel",
        "a/b",
        "sixteen_chars_xx",
        "a b",
        "eth0:1",
        "a\n",
    ] {
        let err = validate("interfaces", bad).unwrap_err();
        assert!(err.starts_with("interfaces: '"), "{err}");
    }
}
