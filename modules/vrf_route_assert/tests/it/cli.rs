//! The binary as Ansible runs it, on bad input: every error is a failed JSON result whose
//! message names the parameter, the value and the fix. None of these reach the kernel.

use assert_cmd::Command;
use serde_json::{json, Value};

fn run(args: Value) -> (Value, i32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("args.json");
    std::fs::write(&path, args.to_string()).unwrap();
    let output = Command::cargo_bin("vrf_route_assert")
        .unwrap()
        .arg(&path)
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    (result, output.status.code().unwrap_or(-1))
}

fn failure(args: Value) -> String {
    let (result, code) = run(args);
    assert_eq!(result["failed"], json!(true), "{result}");
    assert_eq!(code, 1);
    result["msg"].as_str().unwrap().to_string()
}

#[test]
fn an_invalid_address_names_parameter_and_value() {
    let msg = failure(json!({"vrf": "vrf_tdemo", "dst": "10.20.99.300"}));
    assert_eq!(
        msg,
        "dst: '10.20.99.300' is not an IP address; give one IPv4 or IPv6 address, such as \
         10.20.99.5 or 2001:db8::5"
    );
    let msg = failure(json!({"vrfs": [{"name": "vrf_tdemo", "default_via": "gw"}]}));
    assert!(
        msg.starts_with("vrfs[0].default_via: 'gw' is not an IP address;"),
        "{msg}"
    );
}

#[test]
fn a_prefix_is_not_a_destination() {
    let msg = failure(json!({"vrfs": [{"name": "vrf_tdemo",
                                       "lookups": [{"dst": "10.20.99.5"}, {"dst": "10.20.99.0/24"}]}]}));
    assert_eq!(
        msg,
        "vrfs[0].lookups[1].dst: '10.20.99.0/24' is a prefix; give one address (for a lookup, \
         an address inside it, such as 10.20.99.0)"
    );
}

#[test]
fn an_unknown_key_in_a_vrfs_entry_is_refused_with_the_supported_ones() {
    let msg = failure(json!({"vrfs": [{"name": "vrf_tdemo", "default_gw": "10.20.50.1"}]}));
    assert_eq!(
        msg,
        "Unsupported parameters for (deevnet.net.vrf_route_assert) module: default_gw found in \
         vrfs[0]. Supported parameters include: asymmetric_returns, default_dev, default_via, \
         forbidden_interfaces, forwarding, ipv6_default_dev, ipv6_default_via, l3vni_bridge, \
         lookups, name, no_fall_through."
    );
}

#[test]
fn vrf_and_vrfs_together_are_refused() {
    let msg = failure(json!({"vrf": "vrf_tdemo", "vrfs": [{"name": "vrf_tdemo"}]}));
    assert!(
        msg.starts_with("vrf and vrfs are mutually exclusive: give one VRF with vrf"),
        "{msg}"
    );
}

#[test]
fn a_lookup_without_destination_is_refused() {
    let msg = failure(json!({"vrfs": [{"name": "vrf_tdemo", "lookups": [{"dev": "vmbr0.50"}]}]}));
    assert_eq!(
        msg,
        "missing required arguments: dst found in vrfs[0].lookups[0]"
    );
    let msg = failure(json!({"vrf": "vrf_tdemo", "not_dev": "vmbr0"}));
    assert!(msg.starts_with("not_dev needs dst:"), "{msg}");
}

#[test]
fn a_vrf_name_longer_than_15_bytes_is_refused() {
    let msg = failure(json!({"vrfs": [{"name": "vrf_tenant_demo_1"}]}));
    assert_eq!(
        msg,
        "vrfs[0].name: 'vrf_tenant_demo_1' is not a valid interface name: it is longer than 15 \
         bytes (the kernel's IFNAMSIZ limit); give the name as `ip link` shows it, e.g. vmbr0.50"
    );
}

#[test]
fn ad_hoc_strings_are_coerced() {
    // `-a 'vrf=… dst=… reachable=no forwarding=off'` arrives as strings.
    let msg = failure(json!({"vrf": "vrf_tdemo", "dst": "10.0.0.1", "reachable": "maybe"}));
    assert!(
        msg.starts_with(
            "argument 'reachable' is of type str and we were unable to convert to bool"
        ),
        "{msg}"
    );
    let msg = failure(json!({"vrfs": [{"name": "vrf_tdemo"}], "forwarding": "off"}));
    assert!(
        msg.starts_with("forwarding belongs to the short form (with vrf); with vrfs, put it inside the entry (vrfs[].forwarding)"),
        "{msg}"
    );
}

#[test]
fn a_missing_args_file_is_a_json_failure() {
    let output = Command::cargo_bin("vrf_route_assert")
        .unwrap()
        .arg("/nonexistent/args.json")
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["failed"], json!(true));
    assert!(result["msg"]
        .as_str()
        .unwrap()
        .starts_with("cannot read the arguments file /nonexistent/args.json"));
}

#[test]
fn settle_timeout_and_undeclared_vrfs_out_of_range_are_refused() {
    let msg = failure(json!({"vrf": "vrf_tdemo", "settle_timeout": 900}));
    assert_eq!(
        msg,
        "settle_timeout=900 is out of range; give a number of seconds from 0 to 600 (0: check once)"
    );
    let msg = failure(json!({"vrf": "vrf_tdemo", "undeclared_vrfs": "report"}));
    assert_eq!(
        msg,
        "value of undeclared_vrfs must be one of: fail, warn, ignore, got: report"
    );
}

#[test]
fn the_default_vrf_refuses_the_tenant_checks() {
    let msg = failure(json!({"vrfs": [{"name": "default", "forbidden_interfaces": ["vmbr0"]}]}));
    assert!(
        msg.starts_with(
            "vrfs[0].forbidden_interfaces: not for the default VRF (default is the main table)"
        ),
        "{msg}"
    );
    let msg = failure(json!({"vrf": "default", "forwarding": true}));
    assert!(
        msg.starts_with("forwarding: not for the default VRF")
            && msg.ends_with("remove forwarding from this entry"),
        "{msg}"
    );
}

#[test]
fn ipv6_defaults_take_ipv6_gateways_only() {
    let msg = failure(json!({"vrfs": [{"name": "vrf_tdemo", "ipv6_default_via": "10.20.50.1"}]}));
    assert_eq!(
        msg,
        "vrfs[0].ipv6_default_via: '10.20.50.1' is an IPv4 address; give the IPv6 gateway (such \
         as fe80::1 or 2001:db8:50::1), or use default_via for the IPv4 default"
    );
}
