//! Two plays on one frr.conf.local at the same moment: the folder lock serialises them, so both
//! stanzas end in the file; a run blocked past lock_timeout fails with the reason, in time.

use deevnet_runtime::test_support::kill9;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn start(dir: &Path, name: &str, args: Value, pause_ms: u64) -> Child {
    let file = dir.join(format!("{name}.json"));
    fs::write(&file, args.to_string()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_frr_local_stanza"))
        .arg(file)
        .env("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS", pause_ms.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn result(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn vrf(path: &Path, name: &str) -> Value {
    json!({"path": path, "stanzas": [{"header": format!("vrf {name}"), "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]})
}

#[test]
fn two_runs_at_the_same_moment_both_land() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frr.conf.local");
        fs::write(&path, "").unwrap();
        // The pause holds each run inside its write, under the lock, so the two overlap.
        let a = start(dir.path(), "a", vrf(&path, "vrf_a"), 100);
        let b = start(dir.path(), "b", vrf(&path, "vrf_b"), 100);
        let (ra, rb) = (result(a), result(b));
        assert_eq!(ra["changed"], json!(true), "round {round}: {ra}");
        assert_eq!(rb["changed"], json!(true), "round {round}: {rb}");
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("vrf vrf_a\n") && text.contains("vrf vrf_b\n"),
            "round {round}: a stanza was lost:\n{text}"
        );
    }
}

#[test]
fn a_run_blocked_past_lock_timeout_fails_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frr.conf.local");
    // The first run holds the lock for 4 s (paused before its rename).
    let holder = start(dir.path(), "holder", vrf(&path, "vrf_a"), 4000);
    kill9::wait_until_writing(dir.path(), "the first run");
    let mut args = vrf(&path, "vrf_b");
    args["lock_timeout"] = json!(1);
    let started = Instant::now();
    let blocked = result(start(dir.path(), "blocked", args, 0));
    let waited = started.elapsed();
    assert_eq!(blocked["failed"], json!(true), "{blocked}");
    let msg = blocked["msg"].as_str().unwrap();
    assert!(
        msg.contains("another run holds the lock") && msg.contains("raise lock_timeout"),
        "{msg}"
    );
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(3),
        "waited {waited:?} for a 1 s lock_timeout"
    );
    let held = result(holder);
    assert_eq!(held["changed"], json!(true), "{held}");
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("vrf vrf_a\n") && !text.contains("vrf_b"),
        "{text}"
    );
}
