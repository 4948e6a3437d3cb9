//! The module on a real kernel: a namespace with a veth pair standing in for the transit
//! interface and the uplink, the persisted ruleset and the unit in a temp folder.

use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::path::PathBuf;

const BINARY: &str = env!("CARGO_BIN_EXE_transit_router_check");
pub const RULESET: &str = include_str!("../data/enforced.nft");

pub struct Router {
    pub ns: TestNamespace,
    dir: tempfile::TempDir,
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl Router {
    /// Forwarding on, nothing else: no table, no gate.
    pub fn new() -> Router {
        Router::with_links(|ns| ns.ip("link add tr-transit type veth peer name tr-up"))
    }

    /// The same, its interfaces made by `links`.
    pub fn with_links(links: impl FnOnce(&TestNamespace)) -> Router {
        let ns = TestNamespace::new("dvn-tr");
        links(&ns);
        let router = Router {
            ns,
            dir: tempfile::tempdir().expect("temp folder"),
        };
        router.sh("echo 1 > /proc/sys/net/ipv4/ip_forward");
        std::fs::write(router.path("transit.nft"), RULESET).expect("ruleset file");
        let wants = router.path("sysinit.target.wants");
        std::fs::create_dir(&wants).expect("wants folder");
        std::fs::write(
            router.path("transit.service"),
            "[Unit]\nReloadPropagatedFrom=nftables.service\n[Install]\nWantedBy=sysinit.target\n",
        )
        .expect("unit");
        std::os::unix::fs::symlink(
            router.path("transit.service"),
            wants.join("transit.service"),
        )
        .expect("enabling link");
        router
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn sh(&self, script: &str) -> String {
        let output = self
            .ns
            .command("sh")
            .args(["-c", script])
            .output()
            .expect("sh");
        assert!(
            output.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn enforce(&self) {
        self.sh(&format!(
            "ip -4 rule add priority 100 iif tr-transit fwmark 0/0x400000 prohibit && ip -6 rule add priority 100 iif tr-transit prohibit && nft -f {}",
            self.path("transit.nft").display()
        ));
    }

    pub fn run(&self, changes: Value) -> (bool, Value) {
        let mut args = json!({
            "transit_interface": "tr-transit",
            "transit_network": "198.51.100.0/24",
            "uplink": "tr-up",
            "loadbalancer_ranges": ["10.96.100.0/28"],
            "vpc_ranges": ["10.202.0.0/24", "192.0.2.0/24"],
            "private_ranges": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"],
            "ruleset_path": self.path("transit.nft"),
            "unit_path": self.path("transit.service"),
            "nftables_conf_path": self.path("nftables.conf"),
        });
        if let (Some(args), Some(changes)) = (args.as_object_mut(), changes.as_object()) {
            args.extend(changes.clone());
        }
        self.ns.run_module(BINARY, &args)
    }
}

/// `violations` as a list of names.
pub fn violations(result: &Value) -> Vec<&str> {
    result["violations"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn the_enforced_router_passes_and_the_persisted_load_changes_nothing_here() {
    let router = Router::new();
    router.enforce();
    let before = router.sh("nft list ruleset; ip rule; ip -6 rule");
    let (ok, result) = router.run(json!({}));
    assert!(ok, "{result:#}");
    assert_eq!(result["state"], "enforced", "{result:#}");
    assert_eq!(result["changed"], false);
    assert_eq!(router.sh("nft list ruleset; ip rule; ip -6 rule"), before);
}

#[test]
fn a_persisted_file_loaded_while_the_table_is_gone_stays_out_of_the_namespace() {
    let router = Router::new();
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(result["state"], "open", "{result:#}");
    let persisted = &result["checks"][8];
    assert_eq!(persisted["name"], "persisted");
    assert!(
        persisted["message"].as_str().is_some_and(
            |m| m.contains("defines table inet deevnet_transit, but it is not running")
        ),
        "{persisted:#}"
    );
    assert_eq!(
        router.sh("nft list ruleset"),
        "",
        "the scratch load reached the namespace"
    );
}

#[test]
fn a_broken_persisted_file_is_named_with_nfts_error() {
    let router = Router::new();
    router.enforce();
    std::fs::write(
        router.path("transit.nft"),
        "table inet deevnet_transit { chain x { bogus } }\n",
    )
    .expect("write");
    let (ok, result) = router.run(json!({}));
    assert!(!ok);
    assert_eq!(violations(&result), ["persisted"]);
    let msg = result["msg"].as_str().unwrap_or_default();
    assert!(
        msg.contains("does not load in a scratch network namespace"),
        "{msg}"
    );
    // nft was handed the content the file policy read (on stdin), not the path to open again.
    assert!(msg.contains("/usr/sbin/nft -f - failed"), "{msg}");
}

#[test]
fn an_uplink_the_node_lacks_is_refused_naming_the_option() {
    let router = Router::new();
    let (ok, result) = router.run(json!({"uplink": "eth9"}));
    assert!(!ok);
    let msg = result["msg"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("uplink: 'eth9' does not exist on this node"),
        "{msg}"
    );
    assert!(
        result.get("state").is_none(),
        "no verdict without the uplink: {result:#}"
    );
}
