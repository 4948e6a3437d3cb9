//! `owner` and `owner_record`: the built binary takes back what an owner wrote and no longer
//! declares, in check mode and diff mode too, and touches nothing it did not write.

use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A run of the built binary (its exit status checked against `failed`), as the other tests.
fn run(dir: &Path, args: Value) -> Value {
    super::module::run(dir, args).result
}

fn tenant(vrf: &str) -> Value {
    json!({"header": format!("vrf {vrf}"), "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]})
}

const HAND_WRITTEN: &str = "! the operator's own\nvrf vrf_hand\n ip route 0.0.0.0/0 10.9.9.9 nexthop-vrf default\nexit\n!\n";

struct Node {
    dir: tempfile::TempDir,
}

impl Node {
    fn new() -> Node {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("frr.conf.local"), HAND_WRITTEN).unwrap();
        Node { dir }
    }
    fn conf(&self) -> String {
        fs::read_to_string(self.dir.path().join("frr.conf.local")).unwrap()
    }
    fn record(&self) -> std::path::PathBuf {
        self.dir.path().join("state/owners.json")
    }
    fn run(&self, owner: &str, stanzas: Value, check: bool) -> Value {
        run(
            self.dir.path(),
            json!({
                "path": self.dir.path().join("frr.conf.local"),
                "owner": owner,
                "owner_record": self.record(),
                "stanzas": stanzas,
                "_ansible_check_mode": check,
                "_ansible_diff": true,
            }),
        )
    }
}

#[test]
fn a_tenant_that_leaves_the_inventory_loses_its_stanza_on_the_next_run() {
    let node = Node::new();
    let first = node.run("role", json!([tenant("vrf_a"), tenant("vrf_b")]), false);
    assert_eq!(first["changed"], json!(true), "{first}");
    let with_both = node.conf();
    assert!(
        with_both.starts_with(HAND_WRITTEN) && with_both.contains("vrf vrf_b\n"),
        "{with_both}"
    );
    // The record lives outside the file, root's only, its folder made by the run.
    let record = fs::read_to_string(node.record()).unwrap();
    assert!(record.contains("\"vrf vrf_b\""), "{record}");
    assert_eq!(fs::metadata(node.record()).unwrap().mode() & 0o777, 0o600);
    assert!(
        !with_both.contains("owner") && !with_both.contains("role"),
        "no marker in the file: {with_both}"
    );

    // Check mode: the removal is shown (diff), nothing is changed.
    let check = node.run("role", json!([tenant("vrf_a")]), true);
    assert_eq!(check["changed"], json!(true), "{check}");
    assert_eq!(check["stanzas"]["vrf vrf_b"], json!("removed"), "{check}");
    assert!(
        !check["diff"][0]["after"]
            .as_str()
            .unwrap()
            .contains("vrf vrf_b"),
        "{check}"
    );
    assert_eq!(node.conf(), with_both);
    assert_eq!(fs::read_to_string(node.record()).unwrap(), record);

    // The real run: vrf_b gone, vrf_a and the hand-written content intact; then idempotent.
    let second = node.run("role", json!([tenant("vrf_a")]), false);
    assert_eq!(second["changed"], json!(true), "{second}");
    let after = node.conf();
    assert!(!after.contains("vrf_b"), "{after}");
    assert!(
        after.starts_with(HAND_WRITTEN) && after.contains("vrf vrf_a\n"),
        "{after}"
    );
    assert!(!fs::read_to_string(node.record()).unwrap().contains("vrf_b"));
    let third = node.run("role", json!([tenant("vrf_a")]), false);
    assert_eq!(third["changed"], json!(false), "{third}");
    assert_eq!(node.conf(), after);

    // Every tenant gone: only the hand-written content remains.
    node.run("role", json!([]), false);
    assert_eq!(node.conf(), HAND_WRITTEN);
}

#[test]
fn stanzas_another_owner_or_the_operator_wrote_are_never_taken_back() {
    let node = Node::new();
    node.run("role", json!([tenant("vrf_a")]), false);
    node.run("other", json!([tenant("vrf_o")]), false);
    let gone = node.run("role", json!([]), false);
    assert_eq!(gone["changed"], json!(true), "{gone}");
    let text = node.conf();
    assert!(!text.contains("vrf vrf_a"), "{text}");
    assert!(
        text.contains("vrf vrf_o\n") && text.starts_with(HAND_WRITTEN),
        "{text}"
    );
    // A name the record never held removes nothing.
    let unknown = node.run("nobody", json!([]), false);
    assert_eq!(unknown["changed"], json!(false), "{unknown}");
}

#[test]
fn merge_mode_takes_back_only_the_owners_commands() {
    let node = Node::new();
    let both = json!([{"header": "vrf vrf_hand", "mode": "merge",
        "lines": ["ipv6 route ::/0 2001:db8::1 nexthop-vrf default"]}]);
    node.run("role", both, false);
    assert!(node
        .conf()
        .contains(" ipv6 route ::/0 2001:db8::1 nexthop-vrf default\n"));
    node.run("role", json!([]), false);
    assert_eq!(node.conf(), HAND_WRITTEN, "the operator's own line stays");
}

#[test]
fn a_record_that_is_not_the_modules_fails_naming_it_and_changes_nothing() {
    let node = Node::new();
    fs::create_dir_all(node.record().parent().unwrap()).unwrap();
    fs::write(node.record(), "not json").unwrap();
    let result = node.run("role", json!([tenant("vrf_a")]), false);
    let msg = result["msg"].as_str().unwrap();
    assert_eq!(result["failed"], json!(true), "{result}");
    assert!(
        msg.contains("owner_record=") && msg.contains("is not a record this module wrote"),
        "{msg}"
    );
    assert_eq!(node.conf(), HAND_WRITTEN);
    let bad = node.run(" ", json!([]), false);
    assert!(
        bad["msg"]
            .as_str()
            .unwrap()
            .contains("owner=\" \" is not a name"),
        "{bad}"
    );
}

#[test]
fn check_mode_on_a_fresh_node_makes_no_record_folder() {
    let node = Node::new();
    let check = node.run("role", json!([tenant("vrf_a")]), true);
    assert_eq!(check["changed"], json!(true), "{check}");
    assert!(!node.record().parent().unwrap().exists());
}
