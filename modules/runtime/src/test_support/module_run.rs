//! Running a module binary from a test: one run on arguments, bounded in time; a program
//! started with its input on stdin and a module's one JSON result read from it; shell scripts
//! in a private mount namespace.

use serde_json::Value;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
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

/// Starts `command` with `input` written to its stdin, which is then closed (the program sees
/// the end of its input).
pub fn spawn_with_input(command: &mut Command, input: &[u8]) -> Child {
    let mut child = command.stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child
}

/// A module run started with its stdout piped, waited for: whether it exited 0, and the one
/// JSON result it printed (a panic quoting the output when it is not JSON).
pub fn module_result(child: Child) -> (bool, Value) {
    let output = child.wait_with_output().unwrap();
    let result = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    (output.status.success(), result)
}
