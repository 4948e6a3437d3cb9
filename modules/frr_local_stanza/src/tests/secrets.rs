use crate::secrets::*;

#[test]
fn the_secrets_frr_knows_are_found_and_their_markers_kept() {
    let cases: &[(&str, &[&str])] = &[
        (" neighbor 10.0.0.1 password S3cret!", &["S3cret!"]),
        ("password zebra", &["zebra"]),
        ("enable password 7 0822455D0A16", &["0822455D0A16"]),
        ("password 1234", &["1234"]),
        (" ip ospf authentication-key K1", &["K1"]),
        (" ip ospf message-digest-key 1 md5 K2", &["K2"]),
        (" isis password md5 K3", &["K3"]),
        (" area-password md5 K4 authenticate snp validate", &["K4"]),
        (" domain-password clear K5", &["K5"]),
        ("  key-string K6", &["K6"]),
        (" ipv6 ospf6 authentication keyid 1 sha256 key K7", &["K7"]),
        (" ip rip authentication string K8", &["K8"]),
        ("key chain KC", &[]),
        (" key 1", &[]),
        ("vrf vrf_a", &[]),
        (" ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default", &[]),
    ];
    for (line, expected) in cases {
        assert_eq!(&secret_words(line), expected, "{line}");
    }
}

#[test]
fn every_string_of_a_result_is_masked_keys_too() {
    let mut secrets = Secrets::default();
    secrets.learn("router bgp 1\n neighbor X password a\"b\\c\n");
    let mut result = serde_json::json!({
        "msg": "line 2: `neighbor X password a\"b\\c` …",
        "diff": [{"after": "{\"lines\": [\"neighbor X password a\\\"b\\\\c\"]}"}],
        "stanzas": {"password a\"b\\c": "added"},
        "changed": true,
    });
    secrets.mask_json(&mut result);
    let text = result.to_string();
    assert!(!text.contains("a\\\"b"), "{text}");
    assert!(text.contains("password ********"), "{text}");
    assert_eq!(result["changed"], serde_json::json!(true));
}
