//! The whole module, files and kernel, in a network namespace of the test's own: the binary
//! runs there (`ip netns exec`) with `kernel: true` on a VXLAN zone and a simple zone (this
//! kernel has no VRF), so main.rs's wiring of the kernel side is what is proven: nothing when
//! the namespace is as the SDN declares, the finding with its fix when a device differs, a
//! failure unless `drift: warn`.

use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

const BINARY: &str = env!("CARGO_BIN_EXE_sdn_check");

/// Zone zvx (VXLAN, port 4790, MTU 1400) with VNet vx0 (VNI 500); zone zsimple with VNet
/// simple0 and its gateway 192.168.50.1/24. Applied at version 3 on hv02.
const RUNNING_CONFIG: &str = r#"{"version":3,
 "zones":{"ids":{"zvx":{"type":"vxlan","peers":"10.20.51.21,10.20.51.22","vxlan-port":4790,"mtu":1400},
                 "zsimple":{"type":"simple","nodes":{"hv01":1,"hv02":1}}}},
 "vnets":{"ids":{"vx0":{"type":"vnet","zone":"zvx","tag":500},
                 "simple0":{"type":"vnet","zone":"zsimple"}}},
 "subnets":{"ids":{"zsimple-192.168.50.0-24":{"type":"subnet","vnet":"simple0","gateway":"192.168.50.1"}}},
 "controllers":{"ids":{}}}"#;

/// The same, as the section-config files hold it when nothing is pending.
const CFG_FILES: [(&str, &str); 3] = [
    (
        "zones.cfg",
        "vxlan: zvx\n\tpeers 10.20.51.21,10.20.51.22\n\tvxlan-port 4790\n\tmtu 1400\n\n\
         simple: zsimple\n\tnodes hv01,hv02\n",
    ),
    (
        "vnets.cfg",
        "vnet: vx0\n\tzone zvx\n\ttag 500\n\nvnet: simple0\n\tzone zsimple\n",
    ),
    (
        "subnets.cfg",
        "subnet: zsimple-192.168.50.0-24\n\tvnet simple0\n\tgateway 192.168.50.1\n",
    ),
];

const INTERFACES: &str = "auto vmbr0\niface vmbr0 inet static\n\taddress 10.20.51.22/24\n";

fn write_files(dir: &Path) -> Value {
    fs::create_dir(dir.join("sdn")).unwrap();
    fs::write(dir.join("sdn/.running-config"), RUNNING_CONFIG).unwrap();
    for (name, text) in CFG_FILES {
        fs::write(dir.join("sdn").join(name), text).unwrap();
    }
    fs::write(dir.join("interfaces.d-sdn"), "#version:3\n").unwrap();
    fs::write(dir.join("interfaces"), INTERFACES).unwrap();
    json!({
        "node": "hv02",
        "running_config": dir.join("sdn/.running-config"),
        "config_dir": dir.join("sdn"),
        "interfaces_sdn": dir.join("interfaces.d-sdn"),
        "interfaces": dir.join("interfaces"),
    })
}

/// The devices Proxmox's generator makes for both zones, as ifupdown2 brings them up.
fn build_as_declared(ns: &TestNamespace, vni: u32) {
    ns.ip(&format!(
        "link add vxlan_vx0 type vxlan id {vni} dstport 4790 local 10.20.51.22"
    ));
    ns.ip("link set vxlan_vx0 mtu 1400");
    ns.ip("link add vx0 type bridge");
    ns.ip("link set vxlan_vx0 master vx0");
    ns.ip("link set vx0 mtu 1400");
    ns.ip("link add simple0 type bridge");
    ns.ip("addr add 192.168.50.1/24 dev simple0");
    for link in ["vxlan_vx0", "vx0", "simple0"] {
        ns.ip(&format!("link set {link} up"));
    }
    let forwarding = ns
        .command("sysctl")
        .args(["-qw", "net.ipv4.conf.simple0.forwarding=1"])
        .status()
        .unwrap();
    assert!(forwarding.success());
}

fn run_in(ns: &TestNamespace, args: &Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("args.json");
    fs::write(&file, args.to_string()).unwrap();
    let output = ns.command(BINARY).arg(&file).output().unwrap();
    serde_json::from_slice(&output.stdout).expect("one JSON result")
}

fn failed(result: &Value) -> bool {
    result["failed"] == json!(true)
}

#[test]
fn the_kernel_as_declared_has_no_drift_and_a_changed_vni_is_named_with_its_fix() {
    let ns = TestNamespace::new("sdnbin");
    let files = tempfile::tempdir().unwrap();
    let args = write_files(files.path());
    build_as_declared(&ns, 500);

    let result = run_in(&ns, &args);
    assert!(!failed(&result), "{result:#}");
    assert_eq!(result["kernel"], json!(true));
    assert_eq!(result["drift"], json!([]), "{result:#}");
    assert_eq!(result["changed"], json!(false));

    // The VNI cannot change in place: the device made with another one is drift.
    ns.ip("link del vxlan_vx0");
    ns.ip("link add vxlan_vx0 type vxlan id 501 dstport 4790 local 10.20.51.22");
    ns.ip("link set vxlan_vx0 mtu 1400");
    ns.ip("link set vxlan_vx0 master vx0");
    ns.ip("link set vx0 mtu 1400");
    // Up, as ifupdown2 leaves it: a device left down is a finding of its own.
    ns.ip("link set vxlan_vx0 up");
    let result = run_in(&ns, &args);
    assert!(failed(&result), "{result:#}");
    let drift = result["drift"].as_array().unwrap();
    assert_eq!(drift.len(), 1, "{result:#}");
    assert_eq!(drift[0]["object"], json!("vxlan_vx0"));
    assert!(
        drift[0]["fix"]
            .as_str()
            .unwrap()
            .ends_with(&deevnet_runtime::advice::reload_interfaces(
                deevnet_runtime::advice::THIS_NODE
            )),
        "{result:#}"
    );
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.contains("vxlan_vx0"), "{msg}");

    // drift: warn reports the same finding as a warning and does not fail.
    let mut warn = args.clone();
    warn["drift"] = json!("warn");
    let result = run_in(&ns, &warn);
    assert!(!failed(&result), "{result:#}");
    let warnings = result["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("vxlan_vx0")),
        "{result:#}"
    );

    // kernel: false leaves the kernel alone: the files alone agree.
    let mut files_only = args.clone();
    files_only["kernel"] = json!(false);
    let result = run_in(&ns, &files_only);
    assert!(!failed(&result), "{result:#}");
    assert_eq!(result["kernel"], json!(false));
}
