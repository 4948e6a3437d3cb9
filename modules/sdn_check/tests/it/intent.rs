//! The binary on Proxmox-format files (tests/data) copied to a private temporary folder, with
//! `kernel: false`: the result's keys, drift failing or warning, every bad file refused with
//! its path and the fix, and nothing written.

use deevnet_runtime::test_support::module_run::run_for;
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

const BINARY: &str = env!("CARGO_BIN_EXE_sdn_check");

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// `scenario`'s files in a private folder: `sdn/` (the running configuration and the `.cfg`
/// files of `cfg_from`), `interfaces.d/sdn` and `interfaces`.
struct Node {
    dir: tempfile::TempDir,
}

impl Node {
    fn new(scenario: &str, cfg_from: &str) -> Node {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sdn")).unwrap();
        fs::create_dir(dir.path().join("interfaces.d")).unwrap();
        fs::copy(
            data(&format!("{scenario}/.running-config")),
            dir.path().join("sdn/.running-config"),
        )
        .unwrap();
        for file in [
            "zones.cfg",
            "vnets.cfg",
            "subnets.cfg",
            "controllers.cfg",
            "fabrics.cfg",
        ] {
            let from = data(&format!("{cfg_from}/{file}"));
            if from.exists() {
                fs::copy(from, dir.path().join("sdn").join(file)).unwrap();
            }
        }
        fs::copy(
            data(&format!("{cfg_from}/sdn")),
            dir.path().join("interfaces.d/sdn"),
        )
        .unwrap();
        fs::copy(
            data(&format!("{scenario}/interfaces")),
            dir.path().join("interfaces"),
        )
        .unwrap();
        Node { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn args(&self, extra: Value) -> Value {
        let mut args = json!({
            "node": "hv02",
            "running_config": self.path("sdn/.running-config"),
            "config_dir": self.path("sdn"),
            "interfaces_sdn": self.path("interfaces.d/sdn"),
            "interfaces": self.path("interfaces"),
            "kernel": false,
        });
        for (key, value) in extra.as_object().unwrap() {
            args[key] = value.clone();
        }
        args
    }

    fn run(&self, extra: Value) -> Value {
        run_for(BINARY, &self.args(extra), Duration::from_secs(20)).expect("sdn_check finished")
    }

    /// Every file and its bytes, to prove a run wrote nothing.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        for dir in ["sdn", "interfaces.d", ""] {
            for entry in fs::read_dir(self.path(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    files.push((path.clone(), fs::read(&path).unwrap()));
                }
            }
        }
        files.sort();
        files
    }
}

const RESULT_KEYS: [&str; 9] = [
    "sdn_applied",
    "node",
    "version",
    "pending",
    "zones",
    "tenants",
    "drift",
    "kernel",
    "skipped_config",
];

fn assert_ok(result: &Value) {
    assert_ne!(result.get("failed"), Some(&json!(true)), "{result}");
}

fn assert_all_keys(result: &Value) {
    for key in RESULT_KEYS {
        assert!(result.get(key).is_some(), "{key} missing from {result}");
    }
}

#[test]
fn the_intent_of_an_evpn_node_in_check_mode_too() {
    let node = Node::new("evpn", "evpn");
    let before = node.snapshot();
    for check_mode in [false, true] {
        let result = node.run(json!({"_ansible_check_mode": check_mode}));
        assert_ok(&result);
        assert_eq!(result["changed"], json!(false));
        assert_all_keys(&result);
        assert_eq!(result["node"], json!("hv02"));
        assert_eq!(result["version"], json!({"running": 7, "applied": 7}));
        assert_eq!(result["pending"], json!([]));
        assert_eq!(result["drift"], json!([]));
        assert_eq!(result["kernel"], json!(false));
        assert_eq!(
            result["tenants"],
            json!([
                {"name": "tdemo", "vrf": "vrf_tdemo", "l3vni_bridge": "vrfbr_tdemo", "exit_node": true},
                {"name": "tprod", "vrf": "vrf_tprod", "l3vni_bridge": "vrfbr_tprod", "exit_node": false},
            ])
        );
        let tdemo = &result["zones"][0];
        assert_eq!(
            tdemo,
            &json!({
                "name": "tdemo", "type": "evpn", "vrf": "vrf_tdemo", "l3vni": 10000,
                "l3vni_vxlan": "vrfvx_tdemo", "l3vni_bridge": "vrfbr_tdemo", "exit_node": true,
                "primary_exit_node": "hv02", "local_routing": false, "vtep": "10.20.51.22",
                "vxlan_port": null, "mtu": 8950, "generated": true,
                "vnets": [{"name": "tdemo0", "vni": 11000, "vlan": null, "vlan_aware": false,
                           "vxlan_device": "vxlan_tdemo0", "mtu": 8950, "subnets": [
                    {"cidr": "10.20.129.0/24", "gateway": "10.20.129.1", "snat": true},
                    {"cidr": "2001:db8:129::/64", "gateway": "2001:db8:129::1", "snat": false}]}]
            })
        );
        // Ansible reads a true `skipped` as a skipped task (the ad hoc run said SKIPPED):
        // what was skipped is `skipped_config`.
        assert!(result.get("skipped").is_none(), "{result}");
        // A `source` line of interfaces (other than Proxmox's own interfaces.d/*) is not
        // followed, and said so.
        let skipped = result["skipped_config"].as_array().unwrap();
        assert_eq!(skipped.len(), 1);
        assert_eq!(result["warnings"], json!(skipped));
        assert!(result["msg"]
            .as_str()
            .unwrap()
            .starts_with("node hv02: 2 zone(s), 2 tenant(s), SDN version 7; 0 drift finding(s)"));
    }
    assert_eq!(node.snapshot(), before, "nothing was written");
}

#[test]
fn pending_changes_and_a_node_not_reloaded_fail_unless_drift_warn() {
    let node = Node::new("evpn", "pending");
    let failed = node.run(json!({}));
    assert_eq!(failed["failed"], json!(true), "{failed}");
    assert_eq!(failed["changed"], json!(false));
    assert_all_keys(&failed);
    assert_eq!(failed["version"], json!({"running": 7, "applied": 6}));
    assert_eq!(
        failed["pending"],
        json!([
            {"kind": "zone", "id": "tdemo", "change": "changed"},
            {"kind": "zone", "id": "tedge", "change": "removed"},
            {"kind": "zone", "id": "tnew", "change": "added"},
            {"kind": "subnet", "id": "tdemo-10.20.130.0-24", "change": "added"},
        ])
    );
    let msg = failed["msg"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "node hv02: 5 SDN drift finding(s) (drift: warn reports them without failing):\n"
        ),
        "{msg}"
    );
    assert!(msg.contains("zone tnew: declared added in zones.cfg, found not in the running configuration (.running-config) yet; apply the SDN: `pvesh set /cluster/sdn`"), "{msg}");
    assert!(msg.contains(&format!(
        "{}: declared #version:7 (the running SDN configuration), found #version:6; reload this node's network (Proxmox: local sdn network configuration is too old, please reload): {}",
        node.path("interfaces.d/sdn").display(),
        deevnet_runtime::advice::reload_interfaces(deevnet_runtime::advice::THIS_NODE)
    )), "{msg}");

    let warned = node.run(json!({"drift": "warn"}));
    assert_ok(&warned);
    assert_eq!(warned["drift"], failed["drift"]);
    let warnings = warned["warnings"].as_array().unwrap();
    assert_eq!(
        warnings
            .iter()
            .filter(|w| w.as_str().unwrap().starts_with("SDN drift: "))
            .count(),
        5
    );
}

#[test]
fn other_zone_types_and_skipped_ones() {
    let node = Node::new("zones", "zones");
    let result = node.run(json!({}));
    assert_ok(&result);
    let names: Vec<&str> = result["zones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["zfoo", "zqinq", "zsimple", "zvlan", "zvx"]);
    assert_eq!(
        result["skipped_config"],
        json!([
            "zone z9: type 'faucet' is not one sdn_check knows; skipped",
            "zone zfoo: key 'frobnicate' is not one sdn_check knows for a simple zone; skipped",
        ])
    );
    assert_eq!(result["warnings"], result["skipped_config"]);
}

fn failure(node: &Node, extra: Value) -> String {
    let result = node.run(extra);
    assert_eq!(result["failed"], json!(true), "{result}");
    result["msg"].as_str().unwrap().to_string()
}

#[test]
fn an_unknown_node_fails_naming_it() {
    let node = Node::new("evpn", "evpn");
    let msg = failure(&node, json!({"node": "hv09"}));
    assert!(
        msg.starts_with("node: 'hv09' is neither this host ("),
        "{msg}"
    );
    assert!(msg.ends_with("nor a node the SDN configuration names (hv01, hv02, hv03); give the node's name as Proxmox knows it (`pvecm nodes`), or leave node out for this host"), "{msg}");
    assert_eq!(
        failure(&node, json!({"node": "hv02.example.org"})),
        "node: 'hv02.example.org' is not a Proxmox node name (letters, digits and '-', no domain); give the name `pvecm nodes` shows, e.g. hv02, or leave node out for this host"
    );
}

#[test]
fn missing_malformed_oversized_and_untrusted_files_fail_with_path_and_fix() {
    let node = Node::new("evpn", "evpn");
    let running = node.path("sdn/.running-config");
    let shown = running.display().to_string();

    fs::remove_file(&running).unwrap();
    let fix = "apply the SDN in Proxmox (Datacenter > SDN > Apply, or `pvesh set /cluster/sdn`), or, on a node without Proxmox's SDN, do not read it (the role deevnet.net.proxmox_node_network: proxmox_node_network_sdn: ignore), or give the right running_config";
    let result = node.run(json!({}));
    assert_eq!(
        result["msg"],
        json!(format!("running_config={shown} does not exist: the SDN was never applied on this cluster (Proxmox writes the file when it applies the SDN); {fix}"))
    );
    assert_eq!(
        (
            &result["failed"],
            &result["sdn_applied"],
            &result["changed"]
        ),
        (&json!(true), &json!(false), &json!(false))
    );

    fs::write(&running, "{\"version\": 7,").unwrap();
    let msg = failure(&node, json!({}));
    assert!(
        msg.starts_with(&format!("running_config={shown} is not JSON (")),
        "{msg}"
    );

    fs::write(&running, vec![b' '; 5 * 1024 * 1024]).unwrap();
    assert_eq!(
        failure(&node, json!({})),
        format!("running_config={shown} is 5242880 bytes, more than the 4 MiB an SDN or network file holds; give the right running_config; nothing was read from it")
    );

    // Writable by group: another user than root could have written it.
    fs::copy(data("evpn/.running-config"), &running).unwrap();
    fs::set_permissions(&running, fs::Permissions::from_mode(0o664)).unwrap();
    let msg = failure(&node, json!({}));
    assert!(
        msg.starts_with(&format!(
            "running_config={shown} could have been written by another user than root"
        )),
        "{msg}"
    );
    fs::set_permissions(&running, fs::Permissions::from_mode(0o644)).unwrap();

    // A link another user owns is not followed.
    let zones = node.path("sdn/zones.cfg");
    fs::rename(&zones, node.path("zones.real")).unwrap();
    symlink(node.path("zones.real"), &zones).unwrap();
    std::os::unix::fs::lchown(&zones, Some(65534), Some(65534)).unwrap();
    let msg = failure(&node, json!({}));
    assert!(
        msg.starts_with(&format!("config_dir={}", zones.display())),
        "{msg}"
    );
    assert!(msg.contains("link"), "{msg}");
    fs::remove_file(&zones).unwrap();
    fs::rename(node.path("zones.real"), &zones).unwrap();

    fs::write(&zones, "evpn tdemo\n").unwrap();
    let msg = failure(&node, json!({}));
    assert!(
        msg.starts_with(&format!(
            "config_dir={} line 1: 'evpn tdemo' is neither a section line",
            zones.display()
        )),
        "{msg}"
    );
    fs::copy(data("evpn/zones.cfg"), &zones).unwrap();

    let sdn = node.path("interfaces.d/sdn");
    fs::write(&sdn, "auto vrf_tdemo\n").unwrap();
    let msg = failure(&node, json!({}));
    assert!(
        msg.starts_with(&format!(
            "interfaces_sdn={}: the first line is 'auto vrf_tdemo', not `#version:N`",
            sdn.display()
        )),
        "{msg}"
    );
    // Missing: never generated; zones apply, so that is drift.
    fs::remove_file(&sdn).unwrap();
    let result = node.run(json!({"drift": "warn"}));
    assert_eq!(result["version"]["applied"], json!(null));
    assert_eq!(result["drift"][0]["found"], json!("no generated file"));

    let interfaces = node.path("interfaces");
    fs::remove_file(&interfaces).unwrap();
    let msg = failure(&node, json!({}));
    assert_eq!(msg, format!("interfaces={} does not exist: the node's own addresses (which pick its VTEP) are read from it; give the node's network configuration file", interfaces.display()));

    assert_eq!(
        failure(&node, json!({"config_dir": "pve/sdn"})),
        "config_dir: 'pve/sdn' is not an absolute path; give the full path, e.g. /etc/pve/sdn"
    );
}

#[test]
fn the_argument_spec_lists_every_option() {
    let out = std::process::Command::new(BINARY)
        .arg("--argument-spec")
        .output()
        .unwrap();
    let spec: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut options: Vec<&String> = spec["argument_spec"].as_object().unwrap().keys().collect();
    options.sort();
    assert_eq!(
        options,
        [
            "config_dir",
            "drift",
            "interfaces",
            "interfaces_sdn",
            "kernel",
            "node",
            "running_config"
        ]
    );
    assert_eq!(spec["supports_check_mode"], json!(true));
    assert_eq!(
        spec["argument_spec"]["drift"]["choices"],
        json!(["fail", "warn"])
    );
}

#[test]
fn an_absent_sdn_folder_names_the_real_choices_never_to_create_it() {
    let dir = tempfile::tempdir().unwrap();
    let pve = dir.path().join("pve");
    let running = pve.join("sdn/.running-config");
    let args = json!({"node": "hv02", "running_config": running, "config_dir": pve.join("sdn"),
                      "interfaces_sdn": dir.path().join("sdn"), "interfaces": dir.path().join("interfaces"),
                      "kernel": false});
    let result = run_for(BINARY, &args, Duration::from_secs(20)).expect("sdn_check finished");
    let msg = result["msg"].as_str().unwrap();
    assert_eq!(
        msg,
        format!(
            "running_config={} does not exist: nor does {}: no SDN was ever applied on this cluster, or this is not a Proxmox VE node (/etc/pve is Proxmox's cluster file system, mounted by pve-cluster; its folders are never created by hand); apply the SDN in Proxmox (Datacenter > SDN > Apply, or `pvesh set /cluster/sdn`), or, on a node without Proxmox's SDN, do not read it (the role deevnet.net.proxmox_node_network: proxmox_node_network_sdn: ignore), or give the right running_config",
            running.display(),
            pve.display()
        )
    );
    assert!(!msg.contains("create it"), "{msg}");
    assert_eq!(result["sdn_applied"], json!(false));
    assert!(!pve.exists(), "nothing was created");
}
