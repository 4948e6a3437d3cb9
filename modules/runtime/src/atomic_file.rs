//! Crash-safe, locked file replacement.
//!
//! A module that dies mid-write (kill -9, power loss, full disk) must leave the old file or the
//! new one, never a mix, never nothing. So: write a temporary file in the same folder (created
//! exclusively, so nothing planted there is followed), give it the old file's mode, owner and
//! group, fsync it, rename it over the target, fsync the folder. Two runs on one file are
//! serialised by an advisory lock on the folder, so neither loses the other's update.

use anyhow::{anyhow, Context as _, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Mode and group of a file that does not exist yet (an existing file keeps its own).
#[derive(Debug, Clone, Copy)]
pub struct NewFile {
    pub mode: u32,
    /// A group name, applied when it exists on the host (e.g. `frr`); else the process's.
    pub group: Option<&'static str>,
}

/// World-readable configuration, as sysctl.d files are.
pub const PUBLIC_FILE: NewFile = NewFile {
    mode: 0o644,
    group: None,
};

/// Holds an exclusive advisory lock on a folder for as long as it lives.
///
/// The folder, not the file, is locked: the file is replaced by rename, so a lock on its inode
/// would protect the old copy only.
#[derive(Debug)]
pub struct DirLock {
    _dir: File,
}

impl DirLock {
    /// Waits up to `timeout` for the lock on the folder that holds `path`.
    pub fn acquire(path: &Path, timeout: Duration) -> Result<DirLock> {
        let dir = parent_of(path);
        let handle =
            File::open(&dir).with_context(|| format!("opening {} to lock it", dir.display()))?;
        let started = Instant::now();
        loop {
            match handle.try_lock() {
                Ok(()) => return Ok(DirLock { _dir: handle }),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(anyhow!(
                        "another run holds the lock on {} for more than {} s; wait for it to finish, or raise lock_timeout",
                        dir.display(),
                        timeout.as_secs()
                    ))
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(anyhow!("cannot lock {}: {e}", dir.display()))
                }
            }
        }
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Reads a text file, `None` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow!("{} is not UTF-8 text; fix or move it away", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// Fails with a message that says what to fix when `path` could not be written: its folder
/// is missing, is not a folder, or `path` is a folder. Run before any change is made.
pub fn check_writable_target(path: &Path, parameter: &str) -> Result<()> {
    let dir = parent_of(path);
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(anyhow!(
                "{parameter}={}: {} is not a folder; give a path inside an existing folder",
                path.display(),
                dir.display()
            ))
        }
        Err(_) => {
            return Err(anyhow!(
                "{parameter}={}: the folder {} does not exist; create it first or give another {parameter}",
                path.display(),
                dir.display()
            ))
        }
    }
    if let Ok(meta) = fs::symlink_metadata(path) {
        if meta.is_dir() {
            return Err(anyhow!(
                "{parameter}={} is a folder; give the path of a file",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Replaces `path` with `contents` atomically. With `backup`, the old file (if any) is kept
/// under Ansible's backup name, and that name is returned. A new file gets `new_file`'s mode
/// and group before it appears under its name, so it is never readable by more than intended.
pub fn replace(
    path: &Path,
    contents: &[u8],
    backup: bool,
    new_file: NewFile,
) -> Result<Option<PathBuf>> {
    // A symlinked target (e.g. /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf) is written
    // through, so the link stays a link.
    let path = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path)
            .with_context(|| format!("resolving the link {}", path.display()))?,
        _ => path.to_path_buf(),
    };
    let dir = parent_of(&path);
    let old = fs::metadata(&path).ok();
    let (tmp_path, mut tmp) = create_temp_beside(&path)?;
    let result = (|| -> Result<Option<PathBuf>> {
        tmp.write_all(contents)
            .with_context(|| format!("writing {}", tmp_path.display()))?;
        match &old {
            Some(meta) => {
                tmp.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
                // Only root can give a file away; a non-root run keeps its own ownership.
                let _ = std::os::unix::fs::fchown(&tmp, Some(meta.uid()), Some(meta.gid()));
            }
            None => {
                tmp.set_permissions(fs::Permissions::from_mode(new_file.mode))?;
                if let Some(Ok(Some(group))) = new_file.group.map(nix::unistd::Group::from_name) {
                    let _ = std::os::unix::fs::fchown(&tmp, None, Some(group.gid.as_raw()));
                }
            }
        }
        tmp.sync_all()
            .with_context(|| format!("flushing {} to disk", tmp_path.display()))?;
        let backup_path = match (&old, backup) {
            (Some(_), true) => {
                let name = backup_name(&path);
                // A hard link keeps the old inode, content and metadata, at no copying cost.
                fs::hard_link(&path, &name)
                    .with_context(|| format!("keeping a backup as {}", name.display()))?;
                Some(name)
            }
            _ => None,
        };
        test_hook_pause();
        fs::rename(&tmp_path, &path)
            .with_context(|| format!("renaming {} over {}", tmp_path.display(), path.display()))?;
        sync_dir(&dir)?;
        Ok(backup_path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

/// Removes `path` (keeping a backup when asked); returns the backup's name.
pub fn remove(path: &Path, backup: bool) -> Result<Option<PathBuf>> {
    let backup_path = if backup {
        let name = backup_name(path);
        fs::hard_link(path, &name)
            .with_context(|| format!("keeping a backup as {}", name.display()))?;
        Some(name)
    } else {
        None
    };
    fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    sync_dir(&parent_of(path))?;
    Ok(backup_path)
}

fn create_temp_beside(path: &Path) -> Result<(PathBuf, File)> {
    let dir = parent_of(path);
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let pid = std::process::id();
    for attempt in 0..100u32 {
        // A leading dot and a trailing `.tmp`: neither sysctl.d (`*.conf`) nor a human listing
        // takes a leftover for a real file.
        let candidate = dir.join(format!(".{base}.{pid}.{attempt}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .mode(0o600)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(anyhow!(
                    "cannot create a temporary file in {}: {e}",
                    dir.display()
                ))
            }
        }
    }
    Err(anyhow!(
        "cannot create a temporary file in {}: too many leftovers",
        dir.display()
    ))
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("flushing the folder {} to disk", dir.display()))
}

/// Ansible's backup name: `file.PID.YYYY-MM-DD@HH:MM:SS~`, in local time.
pub fn backup_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{}.{}~", std::process::id(), local_timestamp()));
    PathBuf::from(name)
}

fn local_timestamp() -> String {
    // SAFETY: time(NULL) and localtime_r write only into the tm we own.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return now.to_string();
        }
        format!(
            "{:04}-{:02}-{:02}@{:02}:{:02}:{:02}",
            tm.tm_year + 1900,
            tm.tm_mon + 1,
            tm.tm_mday,
            tm.tm_hour,
            tm.tm_min,
            tm.tm_sec
        )
    }
}

/// Crash-consistency tests widen the window between "temp file complete" and "rename" with
/// `DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS`, so a kill -9 lands there reliably.
fn test_hook_pause() {
    if let Some(ms) = std::env::var_os("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS")
        .and_then(|v| v.to_str().and_then(|s| s.parse::<u64>().ok()))
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_keeps_mode_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.conf");
        fs::write(&path, "old\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(replace(&path, b"new\n", false, PUBLIC_FILE).unwrap(), None);
        assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o640);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("x.conf")]);
    }

    #[test]
    fn new_files_get_0644_and_backups_keep_the_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("y.conf");
        assert_eq!(
            replace(&path, b"one\n", true, PUBLIC_FILE).unwrap(),
            None,
            "no backup of nothing"
        );
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o644);
        let backup = replace(&path, b"two\n", true, PUBLIC_FILE)
            .unwrap()
            .unwrap();
        assert_eq!(fs::read_to_string(&backup).unwrap(), "one\n");
        let name = backup.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("y.conf.{}.", std::process::id())) && name.ends_with('~'),
            "{name}"
        );
        assert!(name.contains('@'), "{name}");
    }

    #[test]
    fn new_files_get_the_requested_mode_and_group() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.conf");
        let private = NewFile {
            mode: 0o640,
            group: Some("root"),
        };
        replace(&path, b"password x\n", false, private).unwrap();
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o640);
        assert_eq!(meta.gid(), 0);
    }

    #[test]
    fn symlinked_targets_are_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.conf");
        let link = dir.path().join("link.conf");
        fs::write(&real, "a\n").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        replace(&link, b"b\n", false, PUBLIC_FILE).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "b\n");
    }

    #[test]
    fn missing_folder_is_reported_with_the_parameter() {
        let err =
            check_writable_target(Path::new("/nonexistent-deevnet/x.conf"), "path").unwrap_err();
        assert!(
            err.to_string().contains(
                "path=/nonexistent-deevnet/x.conf: the folder /nonexistent-deevnet does not exist"
            ),
            "{err}"
        );
    }

    #[test]
    fn lock_times_out_with_a_clear_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.conf");
        let _held = DirLock::acquire(&path, Duration::from_secs(1)).unwrap();
        // flock locks belong to the open file description: a second open contends.
        let err = DirLock::acquire(&path, Duration::from_millis(100)).unwrap_err();
        assert!(
            err.to_string().contains("another run holds the lock"),
            "{err}"
        );
    }

    #[test]
    fn remove_keeps_a_backup_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.conf");
        fs::write(&path, "gone\n").unwrap();
        let backup = remove(&path, true).unwrap().unwrap();
        assert!(!path.exists());
        assert_eq!(fs::read_to_string(backup).unwrap(), "gone\n");
    }
}
