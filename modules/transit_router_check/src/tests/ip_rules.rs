use crate::gate::parse;

#[test]
fn a_negated_rule_is_no_gate() {
    // `ip -j -4 rule show` after `ip -4 rule add not priority 100 iif tr-transit fwmark 0/0x400000 prohibit`.
    let json = r#"[{"priority":0,"src":"all","table":"local"},{"priority":100,"not":null,"src":"all","fwmark":"0","fwmask":"0x400000","iif":"tr-transit","action":"prohibit"}]"#;
    let rules = parse(json).expect("ip's JSON");
    assert!(rules[1].not && !rules[0].not);
    assert!(!rules[1].is_ipv4_gate(100, "tr-transit", 0x40_0000));
    let plain = parse(&json.replace("\"not\":null,", "")).expect("ip's JSON");
    assert!(plain[1].is_ipv4_gate(100, "tr-transit", 0x40_0000));
}
