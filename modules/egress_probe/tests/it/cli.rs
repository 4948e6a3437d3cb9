//! The binary as Ansible runs it, on input refused before the kernel is asked anything.

use assert_cmd::Command;
use deevnet_runtime::test_support::module_run::run_for;
use serde_json::{json, Value};
use std::time::Duration;

fn failure(args: Value) -> String {
    let binary = assert_cmd::cargo::cargo_bin("egress_probe");
    let result = run_for(binary, &args, Duration::from_secs(10)).expect("a run within 10s");
    assert_eq!(result["failed"], json!(true), "{result}");
    result["msg"].as_str().unwrap().to_string()
}

#[test]
fn the_argument_spec_is_the_declared_one() {
    let output = Command::cargo_bin("egress_probe")
        .unwrap()
        .arg("--argument-spec")
        .output()
        .unwrap();
    let spec: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(spec["supports_check_mode"], json!(true));
    let options = spec["argument_spec"].as_object().unwrap();
    let names: Vec<&str> = options.keys().map(String::as_str).collect();
    for name in [
        "vrf",
        "address",
        "targets",
        "vnet",
        "gateway",
        "count",
        "timeout",
        "forbidden_interfaces",
        "expect_egress_interface",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert_eq!(
        options["targets"]["options"]["proto"]["choices"],
        json!(["icmp", "tcp", "udp"])
    );
}

#[test]
fn bad_options_name_parameter_value_and_fix() {
    let base = json!({"vrf": "vrf_tdemo", "address": "10.20.129.250/24",
                      "targets": [{"address": "203.0.113.8"}]});
    let with = |key: &str, value: Value| {
        let mut args = base.clone();
        args[key] = value;
        failure(args)
    };
    assert_eq!(
        with("address", json!("10.20.129.250")),
        "address: '10.20.129.250' has no prefix length; give it as e.g. 10.20.129.250/24: an \
         unused address in the tenant's subnet, with the subnet's prefix length"
    );
    assert_eq!(
        with("count", json!(100)),
        "count=100 is out of range; give a number of probes per target from 1 to 20 (the probe \
         stays short and bounded)"
    );
    assert!(with("targets", json!([{"address": "224.0.0.1"}]))
        .starts_with("targets[0].address: 224.0.0.1 is a multicast address"));
    assert!(with(
        "targets",
        json!([{"address": "203.0.113.8", "proto": "sctp"}])
    )
    .contains("sctp"));
    assert!(with("bogus", json!(1)).contains("bogus"));
}
