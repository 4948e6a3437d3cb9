//! kill -9 a module binary while it replaces a file, many times, and check what is left.
//! Shared by the crash tests and the soak of each module that writes a file (`#[path]`
//! include). The binary must be built with the runtime's `test-hooks` feature (the tests'
//! dev-dependency enables it), whose pause before the rename widens the write window.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the runs left: how often the file held the old and the new content, how often the
/// kill landed while the run's temporary file existed (the write window itself), and every
/// damage: a file that is neither old nor new (partial), missing (lost), or whose mode or
/// owner changed; temp files of killed runs still there after one more run (leftovers).
#[derive(Debug, Default)]
pub struct Tally {
    pub old: usize,
    pub new: usize,
    pub in_window: usize,
    pub partial: usize,
    pub lost: usize,
    pub metadata_changed: usize,
    pub leftovers: usize,
    /// The first damage seen, for the message.
    pub first_damage: Option<String>,
}

impl Tally {
    pub fn damaged(&self) -> usize {
        self.partial + self.lost + self.metadata_changed + self.leftovers
    }
}

/// What a series of kills left, as [`soak_with`] judges and reports it: [`Tally`] for one file,
/// or a test's own tally where a run writes more than one file.
pub trait Outcome: std::fmt::Debug {
    /// The kills that left damage of any kind (must be 0).
    fn damaged(&self) -> usize;
    /// The kills that left the old content and those that left the new content.
    fn old_and_new(&self) -> (usize, usize);
    /// The counts, for the soak's summary line (after its "(seed N): ").
    fn summary(&self) -> String;
}

impl Outcome for Tally {
    fn damaged(&self) -> usize {
        Tally::damaged(self)
    }

    fn old_and_new(&self) -> (usize, usize) {
        (self.old, self.new)
    }

    fn summary(&self) -> String {
        format!(
            "{} old, {} new ({} killed inside the write window); partial or lost files: {}; mode/owner changed: {}; temp files left: {}",
            self.old,
            self.new,
            self.in_window,
            self.partial + self.lost,
            self.metadata_changed,
            self.leftovers
        )
    }
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Waits (up to 20 s) until a run's temporary file appears in `dir`: the run is inside its write
/// window (hold it there with the test-hooks pause). `who` names the run in the failure.
pub fn wait_until_writing(dir: &Path, who: &str) {
    let started = Instant::now();
    while temp_files(dir).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{who} never started writing"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn temp_files(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// A random seed from the clock (`SOAK_SEED` fixes it, to replay a run).
pub fn seed() -> u64 {
    std::env::var("SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        })
}

/// Runs `binary args_file` `runs` times on `target` (reset to `old` each time, mode 0604 and,
/// as root, owner 4242:4243), kills it at random points ([`Series::kill`]), and counts what
/// each kill left. Temp files of killed runs are left in place, for the next run to clean;
/// after the last kill one more run goes to the end and the leftovers are counted.
pub fn trials(
    binary: &Path,
    args_file: &Path,
    target: &Path,
    old: &str,
    new: &str,
    runs: usize,
    seed: u64,
) -> Tally {
    let dir = target.parent().unwrap();
    let reset = || {
        let _ = fs::remove_file(target);
        fs::write(target, old).unwrap();
        fs::set_permissions(target, fs::Permissions::from_mode(0o604)).unwrap();
        if is_root() {
            std::os::unix::fs::chown(target, Some(4242), Some(4243)).unwrap();
        }
    };
    let mut tally = Tally::default();
    let series = Series {
        binary,
        args_file,
        runs,
        seed,
    };
    series.kill(
        &reset,
        || {
            assert_eq!(
                fs::read_to_string(target).unwrap(),
                new,
                "the uninterrupted run"
            )
        },
        |pid| {
            let own_temp = format!(".{pid}.");
            temp_files(dir).iter().any(|n| n.contains(&own_temp))
        },
        |what, in_window| {
            let damage = |tally: &mut Tally, why: String| {
                tally.first_damage.get_or_insert(format!("{what}: {why}"));
            };
            let Ok(meta) = fs::symlink_metadata(target) else {
                tally.lost += 1;
                damage(&mut tally, "the file is missing".into());
                return;
            };
            let text = fs::read_to_string(target).unwrap_or_default();
            if text == new {
                tally.new += 1;
            } else if text == old {
                tally.old += 1;
                tally.in_window += usize::from(in_window);
            } else {
                tally.partial += 1;
                damage(&mut tally, format!("neither old nor new: {text:?}"));
            }
            let owner_kept = !is_root() || (meta.uid(), meta.gid()) == (4242, 4243);
            if meta.mode() & 0o7777 != 0o604 || !owner_kept || !meta.file_type().is_file() {
                tally.metadata_changed += 1;
                damage(&mut tally, format!("mode/owner changed: {meta:?}"));
            }
        },
    );
    tally.leftovers = temp_files(dir).len();
    if tally.leftovers > 0 {
        tally
            .first_damage
            .get_or_insert(format!("temp files left: {:?}", temp_files(dir)));
    }
    reset();
    tally
}

/// A series of kills at random points of a run of `binary args_file`: `runs` kills, their
/// delays drawn from `seed`.
pub struct Series<'a> {
    pub binary: &'a Path,
    pub args_file: &'a Path,
    pub runs: usize,
    pub seed: u64,
}

impl Series<'_> {
    /// One run to the end first (how long a whole run takes here; `check_whole` looks at what
    /// it wrote), then the runs, each after `reset()`, killed with SIGKILL after a random delay
    /// within that span (half of them with the pause hook widening the window between each
    /// fsync and its rename). `look(pid)` runs just before each kill, while the run still
    /// lives; `count(what, looked)` after it, `what` naming the run and the seed for a damage
    /// message. Last, after `reset()`, one more run to the end, which removes what the killed
    /// runs left (the caller counts what it did not).
    pub fn kill<L>(
        &self,
        reset: &dyn Fn(),
        check_whole: impl FnOnce(),
        mut look: impl FnMut(u32) -> L,
        mut count: impl FnMut(String, L),
    ) {
        let (binary, args_file, seed) = (self.binary, self.args_file, self.seed);
        reset();
        let started = Instant::now();
        let status = run_of(binary, args_file, Some("20")).status().unwrap();
        let whole = started.elapsed();
        assert!(status.success(), "the uninterrupted run failed");
        check_whole();
        let span_us = (whole.as_micros() as u64).max(1000);

        let mut rng: u64 = seed.max(1);
        for run in 0..self.runs {
            reset();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let delay = Duration::from_micros(rng % span_us);
            let pause = if run % 2 == 0 { "20" } else { "0" };
            let mut child = run_of(binary, args_file, Some(pause)).spawn().unwrap();
            std::thread::sleep(delay);
            let looked = look(child.id());
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            count(
                format!("run {run} (kill after {delay:?}, seed {seed})"),
                looked,
            );
        }
        reset();
        let status = run_of(binary, args_file, None).status().unwrap();
        assert!(status.success(), "the last run failed");
    }
}

/// Runs `binary args_file` to the end (no pause hook) and asserts it succeeded, its output in
/// the failure: a setup step (the content a run writes, a state to start from).
pub fn run_to_end(binary: &Path, args_file: &Path) {
    let out = Command::new(binary).arg(args_file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// One run of `binary args_file`, its output dropped; `pause_ms`, the pause hook's wait
/// between the fsync and the rename.
fn run_of(binary: &Path, args_file: &Path, pause_ms: Option<&str>) -> Command {
    let mut command = Command::new(binary);
    command.arg(args_file).stdout(Stdio::null());
    if let Some(ms) = pause_ms {
        command.env("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS", ms);
    }
    command
}

/// [`trials`] for a test: every kill left exactly the old or the new file, with its mode and
/// owner, and nothing behind; the kills landed on both sides of the rename, and inside the
/// write window itself.
pub fn kill_during_writes(
    binary: &Path,
    args_file: &Path,
    target: &Path,
    old: &str,
    new: &str,
    runs: usize,
) -> Tally {
    let tally = trials(binary, args_file, target, old, new, runs, seed());
    eprintln!("{tally:?}");
    assert_eq!(tally.damaged(), 0, "{tally:?}");
    assert!(tally.old > 0 && tally.new > 0, "{tally:?}");
    assert!(
        tally.in_window > 0,
        "no kill landed while the temp file existed: {tally:?}"
    );
    tally
}

/// The soak (`make soak`): `SOAK_TRIALS` kills (default 10,000), a summary line on stderr
/// with the count of partial or lost files, which must be 0.
pub fn soak(module: &str, binary: &Path, args_file: &Path, target: &Path, old: &str, new: &str) {
    soak_with(module, |runs, seed| {
        trials(binary, args_file, target, old, new, runs, seed)
    });
}

/// The soak of any series of kills: `trials(runs, seed)` runs `SOAK_TRIALS` kills (default
/// 10,000) with a [`seed`]; a summary line on stderr (`== soak {what}: …`, which `make soak`
/// shows); no damage, and kills on both sides of the rename.
pub fn soak_with<T: Outcome>(what: &str, trials: impl FnOnce(usize, u64) -> T) {
    let trials_wanted: usize = std::env::var("SOAK_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let seed = seed();
    let started = Instant::now();
    let tally = trials(trials_wanted, seed);
    eprintln!(
        "== soak {what}: {trials_wanted} kill -9 trials in {:.0} s (seed {seed}): {}",
        started.elapsed().as_secs_f64(),
        tally.summary()
    );
    assert_eq!(tally.damaged(), 0, "{tally:?}");
    let (old, new) = tally.old_and_new();
    assert!(
        old > 0 && new > 0,
        "the kills never landed on both sides of the rename: {tally:?}"
    );
}
