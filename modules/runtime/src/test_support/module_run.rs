//! Running a module binary from a test: one run on arguments, bounded in time, and shell
//! scripts in a private mount namespace. Shared by the robustness tests of each module that
//! manages a file (`#[path]` include, like `kill9.rs`).

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Runs `binary` on `args` (written next to nothing it manages), waiting at most `limit`;
/// `None` when it was still running then (it is killed).
pub fn run_for(binary: impl AsRef<Path>, args: &Value, limit: Duration) -> Option<Value> {
    let args_dir = tempfile::tempdir().unwrap();
    let file = args_dir.path().join("args.json");
    fs::write(&file, args.to_string()).unwrap();
    let mut child = Command::new(binary.as_ref())
        .arg(&file)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Some(serde_json::from_slice(&out.stdout).expect("one JSON result"))
}

/// Runs `script` with `sh` in a private mount namespace (its mounts vanish with it).
pub fn in_private_mounts(script: &str) -> Output {
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .output()
        .unwrap()
}
