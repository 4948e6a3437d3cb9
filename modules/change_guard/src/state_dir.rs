//! The guard's own folder (`state_dir`): `lock`, `bin/change_guard`, and per run
//! `runs/<run_id>/` with `manifest.json`, `files/` (the snapshot's copies), `switch.json` and
//! `switch.log`. What it holds is acted on as root (restored over the node's files, run at boot),
//! so the folder and every folder above it must be root's and writable by root only; a planted
//! folder is refused, naming the path, before anything is read or written.

use deevnet_runtime::atomic_file::{self, NewFile};
use deevnet_runtime::file_policy::{self, FileLock, Target};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs;
use std::io::ErrorKind;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every file of the guard: readable by root only.
pub const PRIVATE_FILE: NewFile = NewFile {
    mode: 0o600,
    group: None,
};

/// How long a module run waits for another run on the same node (or the switch restoring, its
/// reloads included) to finish with the guard's records.
pub const GUARD_WAIT: Duration = Duration::from_secs(300);

/// How long a restore waits for another module writing one of the files it puts back.
pub const FILE_LOCK_WAIT: Duration = Duration::from_secs(30);

/// The checked `state_dir`.
#[derive(Debug, Clone)]
pub struct StateDir {
    pub root: PathBuf,
    /// Whether it exists (a run that only reads, or check mode, does not create it).
    pub exists: bool,
}

impl StateDir {
    /// Checks `path` (and every folder above it) by the rule of this module's header;
    /// with `create`, a missing folder is created (0700) once its parent passes.
    pub fn open(path: &Path, create: bool) -> Result<StateDir, String> {
        let parent = file_policy::parent_of(path);
        // The nearest folder above that exists is checked; what is missing below it is
        // created (root's, 0755) only for a run that writes.
        let existing = parent
            .ancestors()
            .find(|a| a.is_dir())
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        let existing = fs::canonicalize(&existing).map_err(|e| {
            format!(
                "state_dir={}: {} cannot be used ({e})",
                path.display(),
                existing.display()
            )
        })?;
        if let Some(why) = file_policy::untrusted_folders(&existing) {
            return Err(refused(path, &why));
        }
        if !parent.is_dir() && !create {
            return Ok(StateDir {
                root: path.to_path_buf(),
                exists: false,
            });
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&parent)
            .map_err(|e| {
                format!(
                    "state_dir={}: cannot create {}: {e}",
                    path.display(),
                    parent.display()
                )
            })?;
        let parent =
            fs::canonicalize(&parent).map_err(|e| format!("state_dir={}: {e}", path.display()))?;
        if let Some(why) = file_policy::untrusted_folders(&parent) {
            return Err(refused(path, &why));
        }
        let root = parent.join(path.file_name().unwrap_or_default());
        let exists = match fs::symlink_metadata(&root) {
            Err(e) if e.kind() == ErrorKind::NotFound && create => {
                make_private_dir(&root)?;
                true
            }
            Err(e) if e.kind() == ErrorKind::NotFound => false,
            Err(e) => return Err(format!("state_dir={}: {e}", path.display())),
            Ok(_) => {
                check_private_dir(&root).map_err(|why| refused(path, &why))?;
                true
            }
        };
        Ok(StateDir { root, exists })
    }

    /// The collection's lock: JSON `{run_id, holder, since}`.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("lock")
    }

    /// The folder of every run.
    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// One run's folder.
    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.runs().join(run_id)
    }

    /// The copy of this module's binary the switch runs.
    pub fn binary(&self) -> PathBuf {
        self.root.join("bin").join("change_guard")
    }

    /// Serialises the runs on this node (module runs and the switch): the runtime's lock on
    /// the lock file's path, held until the returned guard is dropped; `None` while the folder
    /// does not exist (check mode: nothing to guard).
    pub fn serialise(&self) -> Result<Option<FileLock>, String> {
        if !self.exists {
            return Ok(None);
        }
        let target = self.target(&self.lock_file())?;
        FileLock::acquire(&target, GUARD_WAIT).map(Some).map_err(|_| {
            format!(
                "another run of the guard on this node (a task, or the switch restoring and reloading) has been busy with {} for more than {} s; run again once it is done",
                self.root.display(),
                GUARD_WAIT.as_secs()
            )
        })
    }

    /// A file of the guard, by the file policy (no link followed).
    pub fn target(&self, path: &Path) -> Result<Target, String> {
        file_policy::resolve("state_dir", path, false).map_err(|e| format!("{e:#}"))
    }

    /// A subfolder of the guard, created 0700 when missing, and checked.
    pub fn subdir(&self, path: &Path) -> Result<(), String> {
        match fs::symlink_metadata(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => make_private_dir(path),
            Err(e) => Err(format!("{}: {e}", path.display())),
            Ok(_) => check_private_dir(path)
                .map_err(|why| refused(&self.root, &format!("{why}, inside it"))),
        }
    }

    /// A JSON record of the guard; `None` when it does not exist.
    pub fn read_json<T: DeserializeOwned>(&self, path: &Path) -> Result<Option<T>, String> {
        if !file_policy::parent_of(path).is_dir() {
            return Ok(None);
        }
        let target = self.target(path)?;
        let Some(text) = file_policy::read_text(&target).map_err(|e| format!("{e:#}"))? else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{} cannot be read ({e}); it is the guard's own record: look at it, and remove it only when no change is in flight", path.display()))
    }

    /// Writes a JSON record atomically, readable by root only.
    pub fn write_json(&self, path: &Path, value: &impl Serialize) -> Result<(), String> {
        let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
        let target = self.target(path)?;
        atomic_file::replace(&target, text.as_bytes(), false, PRIVATE_FILE)
            .map(|_| ())
            .map_err(|e| format!("{e:#}"))
    }
}

fn refused(path: &Path, why: &str) -> String {
    format!(
        "state_dir={} is refused: {why}; what it holds is restored and run as root, so it and every folder above it must be owned by root and writable by root only; fix the owner and mode, or give another state_dir; nothing was changed",
        path.display()
    )
}

/// Creates `path` holding `bytes`, failing when it exists (the collection's lock: exclusive).
pub fn create_exclusive(path: &Path, bytes: &[u8]) -> Result<bool, String> {
    let mut file = match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    };
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(true)
}

/// Owned by root (or the running user), a real folder, writable by its owner only.
fn check_private_dir(path: &Path) -> Result<(), String> {
    let meta = fs::symlink_metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a folder", path.display()));
    }
    // No sticky exception: nobody but root may add an entry here.
    file_policy::untrusted_by_others("the folder", path, &meta, false).map_or(Ok(()), Err)
}

fn make_private_dir(path: &Path) -> Result<(), String> {
    fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}
