//! kill -9 a module binary while it replaces a file, many times, and check what is left.
//! Shared by the crash tests of each module that writes a file (`#[path]` include).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the runs left: how often the file held the old and the new content, and how often the
/// kill landed while a temporary file existed (the write window itself).
#[derive(Debug, Default)]
pub struct Tally {
    pub old: usize,
    pub new: usize,
    pub in_window: usize,
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Runs `binary args_file` `runs` times on `target` (reset to `old` each time, mode 0604 and,
/// as root, owner 4242:4243), kills it with SIGKILL after a random delay (half of the runs
/// with the pause hook widening the window between the fsync and the rename), and asserts the
/// file is always exactly `old` or `new`, with its mode and owner.
pub fn kill_during_writes(
    binary: &Path,
    args_file: &Path,
    target: &Path,
    old: &str,
    new: &str,
    runs: usize,
) -> Tally {
    let dir = target.parent().unwrap();
    let reset = || {
        fs::write(target, old).unwrap();
        fs::set_permissions(target, fs::Permissions::from_mode(0o604)).unwrap();
        if is_root() {
            std::os::unix::fs::chown(target, Some(4242), Some(4243)).unwrap();
        }
        for name in temp_files(dir) {
            let _ = fs::remove_file(dir.join(name));
        }
    };
    // One run to the end: how long a whole run takes here, and that it writes `new`.
    reset();
    let started = Instant::now();
    let status = Command::new(binary)
        .arg(args_file)
        .env("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS", "20")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let whole = started.elapsed();
    assert!(status.success(), "the uninterrupted run failed");
    assert_eq!(
        fs::read_to_string(target).unwrap(),
        new,
        "the uninterrupted run"
    );
    let span_us = (whole.as_micros() as u64).max(1000);

    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut tally = Tally::default();
    for run in 0..runs {
        reset();
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let delay = Duration::from_micros(rng % span_us);
        let pause = if run % 2 == 0 { "20" } else { "0" };
        let mut child = Command::new(binary)
            .arg(args_file)
            .env("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS", pause)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let in_window = !temp_files(dir).is_empty();
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let meta = fs::metadata(target).unwrap_or_else(|e| {
            panic!("run {run} (kill after {delay:?}): the file is missing: {e}")
        });
        let text = fs::read_to_string(target).unwrap();
        assert!(
            text == old || text == new,
            "run {run} (kill after {delay:?}): the file is neither old nor new: {text:?}"
        );
        assert_eq!(meta.mode() & 0o7777, 0o604, "run {run}: mode changed");
        if is_root() {
            assert_eq!(
                (meta.uid(), meta.gid()),
                (4242, 4243),
                "run {run}: owner changed"
            );
        }
        if text == new {
            tally.new += 1;
        } else {
            tally.old += 1;
        }
        tally.in_window += usize::from(in_window && text == old);
    }
    reset();
    tally
}
