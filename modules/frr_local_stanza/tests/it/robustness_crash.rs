//! Crash consistency: frr_local_stanza killed with SIGKILL at random points while it replaces
//! frr.conf.local leaves exactly the old or the new file, with its mode and owner.

use deevnet_runtime::test_support::kill9;
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};

const BINARY: &str = env!("CARGO_BIN_EXE_frr_local_stanza");

/// The arguments file, the target, its old content and the content the module writes.
fn crash_setup(dir: &Path) -> (PathBuf, PathBuf, &'static str, String) {
    let target = dir.join("frr.conf.local");
    let old = "vrf vrf_old\n ip route 10.0.0.0/8 10.0.0.1\nexit\n!\n";
    let args = json!({"path": target, "stanzas": [
        {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]},
        {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0"}]});
    let args_file = dir.join("args.json");
    fs::write(&args_file, args.to_string()).unwrap();
    // The new content, from a run on a scratch copy.
    let scratch = tempfile::tempdir().unwrap();
    let scratch_target = scratch.path().join("frr.conf.local");
    fs::write(&scratch_target, old).unwrap();
    let mut scratch_args = args.clone();
    scratch_args["path"] = json!(scratch_target);
    let scratch_file = scratch.path().join("args.json");
    fs::write(&scratch_file, scratch_args.to_string()).unwrap();
    let out = std::process::Command::new(BINARY)
        .arg(&scratch_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let new = fs::read_to_string(&scratch_target).unwrap();
    assert_ne!(new, old);
    (args_file, target, old, new)
}

#[test]
fn kill_9_at_random_points_leaves_the_old_or_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let (args_file, target, old, new) = crash_setup(dir.path());
    kill9::kill_during_writes(Path::new(BINARY), &args_file, &target, old, &new, 60);
}

/// `make soak`: SOAK_TRIALS (default 10,000) kills; the count of partial or lost files is 0.
#[test]
#[ignore = "long: run by `make soak`"]
fn soak_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let (args_file, target, old, new) = crash_setup(dir.path());
    kill9::soak(
        "frr_local_stanza",
        Path::new(BINARY),
        &args_file,
        &target,
        old,
        &new,
    );
}
