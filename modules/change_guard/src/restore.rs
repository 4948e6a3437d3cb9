//! A run rolled back: its snapshot put back ([`crate::snapshot`]), then the reload commands whose
//! paths hold a restored file, in the order given, each at most once, as root only when
//! [`deevnet_runtime::file_policy::trusted_program`] trusts the program, within the bounds of
//! [`deevnet_runtime::bounded_command`]. The same for the module's `state=restored`, the
//! switch's timer and the boot.

use crate::params::Reload;
use crate::records::ReloadRun;
use crate::snapshot::{self, Action, Manifest};
use crate::state_dir::StateDir;
use deevnet_runtime::bounded_command::{self, NotFinished};
use deevnet_runtime::file_policy;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long one reload command may run.
pub const RELOAD_LIMIT: Duration = Duration::from_secs(120);
/// The output kept of each stream of a reload command (its tail).
pub const OUTPUT_TAIL: usize = 4096;
/// Read of each stream before the tail is cut.
const OUTPUT_CAP: u64 = 1 << 20;

/// What a restore did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Restore {
    pub restored: Vec<PathBuf>,
    pub reloads: Vec<ReloadRun>,
    /// The paths that could not be put back, each with why.
    pub errors: Vec<String>,
}

impl Restore {
    /// Whether every file came back and every reload succeeded.
    pub fn succeeded(&self) -> bool {
        self.errors.is_empty() && self.reloads.iter().all(|r| r.rc == 0)
    }
}

/// The reload commands a restore of `restored` runs: each whose paths hold one of them
/// (the path itself or a folder above it), in list order, each command line once.
pub fn reloads_for<'a>(reload: &'a [Reload], restored: &[PathBuf]) -> Vec<&'a Reload> {
    let mut chosen: Vec<&Reload> = Vec::new();
    for item in reload {
        let touched = restored
            .iter()
            .any(|path| item.paths.iter().any(|prefix| path.starts_with(prefix)));
        if touched && !chosen.iter().any(|c| c.argv == item.argv) {
            chosen.push(item);
        }
    }
    chosen
}

/// Puts the snapshot back, then runs the reloads it calls for (unless `run_reloads` is false:
/// at boot, the network starts after the restore and reads the files itself).
pub fn restore(
    state: &StateDir,
    run_dir: &Path,
    manifest: &Manifest,
    reload: &[Reload],
    run_reloads: bool,
) -> Result<Restore, String> {
    let actions = snapshot::plan(manifest)?;
    let mut done = Restore::default();
    for action in &actions {
        match snapshot::apply(state, run_dir, action) {
            Ok(()) => done.restored.push(action.path().to_path_buf()),
            Err(why) => done.errors.push(why),
        }
    }
    if run_reloads {
        done.reloads = reloads_for(reload, &done.restored)
            .into_iter()
            .map(|r| run_reload(&r.argv))
            .collect();
    }
    Ok(done)
}

/// The paths a restore would touch now (check mode, diff mode).
pub fn pending(manifest: &Manifest) -> Result<Vec<Action>, String> {
    snapshot::plan(manifest)
}

/// Runs one reload command: trusted program, fixed PATH, bounded; its status and output tails.
pub fn run_reload(argv: &[String]) -> ReloadRun {
    let failed = |why: String| ReloadRun {
        argv: argv.to_vec(),
        rc: -1,
        stdout: String::new(),
        stderr: why,
    };
    let program = Path::new(&argv[0]);
    let real = match file_policy::trusted_program(program) {
        Ok(real) => real,
        Err(refusal) => return failed(format!("{} is not run: {refusal}", program.display())),
    };
    let mut command = Command::new(real);
    command
        .args(&argv[1..])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    match bounded_command::run(&mut command, RELOAD_LIMIT, OUTPUT_CAP) {
        Ok(done) => ReloadRun {
            argv: argv.to_vec(),
            rc: done
                .status
                .code()
                .unwrap_or_else(|| -done.status.signal().unwrap_or(1)),
            stdout: tail(&done.stdout),
            stderr: tail(&done.stderr),
        },
        Err(NotFinished::TimedOut) => failed(format!(
            "ran for more than {} s and was stopped",
            RELOAD_LIMIT.as_secs()
        )),
        Err(NotFinished::Spawn(e) | NotFinished::Wait(e)) => failed(e.to_string()),
        Err(NotFinished::OverCap) => failed("printed too much and was stopped".into()),
    }
}

fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(OUTPUT_TAIL);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}
