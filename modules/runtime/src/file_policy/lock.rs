//! The lock that serialises runs on one file: one lock file per canonical path, in a folder
//! only the run's user can open (the rule "one lock per file, that only root can take" of
//! [`super`]).

use super::{owner_name, parent_of, Target};
use anyhow::{anyhow, Result};
use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Holds the exclusive lock on one file (by its canonical path) for as long as it lives.
///
/// The lock is a file of its own in a folder only the run's user can open, not the target or
/// its folder: the target is replaced by rename (a lock on its inode would guard the old copy
/// only), and a folder that others can read can be locked by others, blocking every run.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    path: PathBuf,
}

impl FileLock {
    /// Waits up to `timeout` for the lock on `target`.
    pub fn acquire(target: &Target, timeout: Duration) -> Result<FileLock> {
        let dir = lock_dir();
        let path = dir.join(format!("{:016x}.lock", fnv1a(target.key.as_os_str())));
        let file = open_lock_file(&dir, &path)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(FileLock { _file: file, path }),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(anyhow!(
                        "another run holds the lock on {} for more than {} s; wait for it to finish, or raise lock_timeout",
                        target.key.display(),
                        timeout.as_secs()
                    ))
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(anyhow!("cannot lock {}: {e}", path.display()))
                }
            }
        }
    }

    /// Takes the lock on `name`, something other than a file that runs must not share (e.g.
    /// egress_probe's address on a VNet), in the same folder with the same checks, without
    /// waiting: `None` while another run holds it.
    pub fn try_acquire_named(name: &str) -> Result<Option<FileLock>> {
        let dir = lock_dir();
        // A file name of its own, so a name never shares a lock with a file's path.
        let path = dir.join(format!(
            "{:016x}.named.lock",
            fnv1a(std::ffi::OsStr::new(name))
        ));
        let file = open_lock_file(&dir, &path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(FileLock { _file: file, path })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => Err(anyhow!("cannot lock {}: {e}", path.display())),
        }
    }

    /// The lock file (for tests and messages).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where lock files live: `/run/lock/deevnet.net` for root, `/run/lock/deevnet.net-<uid>`
/// for another user (under `/run` where `/run/lock` is missing).
pub fn lock_dir() -> PathBuf {
    let uid = nix::unistd::geteuid().as_raw();
    let name = if uid == 0 {
        "deevnet.net".to_string()
    } else {
        format!("deevnet.net-{uid}")
    };
    lock_root().join(name)
}

/// `/run/lock`, or `/run` on a system that has no `/run/lock` (a container whose `/run` is an
/// empty tmpfs): both are cleared at boot, as locks should be. In builds with the `test-hooks`
/// feature (tests only) `DEEVNET_TEST_LOCK_ROOT` replaces it, and when that is unset the
/// system's temp folder does, so tests never write into the host's `/run`; set and empty, it
/// keeps the real choice (for tests in a private mount namespace).
fn lock_root() -> PathBuf {
    #[cfg(any(test, feature = "test-hooks"))]
    match std::env::var_os("DEEVNET_TEST_LOCK_ROOT") {
        Some(root) if root.is_empty() => {}
        Some(root) => return PathBuf::from(root),
        None => return std::env::temp_dir(),
    }
    let run_lock = Path::new("/run/lock");
    if run_lock.is_dir() {
        run_lock.to_path_buf()
    } else {
        PathBuf::from("/run")
    }
}

fn open_lock_file(dir: &Path, path: &Path) -> Result<File> {
    let uid = nix::unistd::geteuid().as_raw();
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(anyhow!(
                "cannot create the lock folder {}: {e}; the module locks each file there (a lock no other user can take); make sure {} exists and is writable",
                dir.display(),
                parent_of(dir).display()
            ))
        }
    }
    let folder = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| {
            anyhow!(
                "the lock folder {} cannot be opened as a folder ({e}); remove it, it is made anew",
                dir.display()
            )
        })?;
    let meta = folder.metadata()?;
    if meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(anyhow!(
            "the lock folder {} is owned by {} with mode {:04o}, so another user could hold its locks; remove it, it is made anew (owner {}, mode 0700)",
            dir.display(),
            owner_name(meta.uid()),
            meta.mode() & 0o7777,
            owner_name(uid)
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| anyhow!("cannot open the lock file {}: {e}", path.display()))?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() || meta.uid() != uid {
        return Err(anyhow!(
            "the lock file {} is not a regular file of {}; remove it, it is made anew",
            path.display(),
            owner_name(uid)
        ));
    }
    Ok(file)
}

/// FNV-1a, 64 bits: a stable name for a path (a collision only makes two files share a lock).
fn fnv1a(bytes: &std::ffi::OsStr) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    bytes
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        })
}
