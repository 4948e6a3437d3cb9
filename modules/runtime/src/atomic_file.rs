//! Crash-safe, locked file replacement.
//!
//! A module that dies mid-write (kill -9, power loss, full disk) must leave the old file or the
//! new one, never a mix, never nothing. So: write a temporary file in the same folder (created
//! exclusively, so nothing planted there is followed), give it the old file's mode, owner and
//! group, POSIX ACLs and other extended attributes, fsync it, rename it over the target, fsync
//! the folder. Which files may be replaced, through which links, and the lock that serialises
//! two runs on one file are the policy of [`crate::file_policy`]; this module takes a
//! [`Target`] that policy resolved.

use crate::file_policy::{self, parent_of, Target};
use anyhow::{anyhow, Context as _, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

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

/// Replaces the target's file with `contents` atomically (through a trusted link, its final
/// target; the link stays). With `backup`, the old file (if any) is kept under Ansible's backup
/// name, and that name is returned. An existing file keeps its mode, owner, group, ACLs and
/// other extended attributes; a new file gets `new_file`'s mode and group before it appears
/// under its name, so it is never readable by more than intended. Temporary files that a
/// killed run left beside the target are removed first. Call it under the target's
/// [`file_policy::FileLock`].
pub fn replace(
    target: &Target,
    contents: &[u8],
    backup: bool,
    new_file: NewFile,
) -> Result<Option<PathBuf>> {
    let path = target.real.as_path();
    let dir = parent_of(path);
    // Opened by the policy: a regular file or nothing, never through a link.
    let old = file_policy::open_regular(target)?;
    let old_meta = match &old {
        Some(file) => Some(
            file.metadata()
                .with_context(|| format!("inspecting {}", path.display()))?,
        ),
        None => None,
    };
    remove_dead_leftovers(path);
    let (tmp_path, mut tmp) = create_temp_beside(path)?;
    let result = (|| -> Result<Option<PathBuf>> {
        tmp.write_all(contents)
            .with_context(|| format!("writing {}", tmp_path.display()))?;
        match (&old, &old_meta) {
            (Some(old), Some(meta)) => {
                // Owner first: chown clears set-id bits, which the mode then restores. Only
                // root can give a file away; a non-root run keeps its own ownership.
                let _ = std::os::unix::fs::fchown(&tmp, Some(meta.uid()), Some(meta.gid()));
                tmp.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
                copy_xattrs(old, &tmp)
                    .with_context(|| format!("keeping the attributes of {}", path.display()))?;
            }
            _ => {
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
                let name = backup_name(path);
                // A hard link keeps the old inode, content and metadata, at no copying cost.
                fs::hard_link(path, &name)
                    .with_context(|| format!("keeping a backup as {}", name.display()))?;
                Some(name)
            }
            _ => None,
        };
        test_hook_pause();
        fs::rename(&tmp_path, path)
            .with_context(|| format!("renaming {} over {}", tmp_path.display(), path.display()))?;
        sync_dir(&dir)?;
        Ok(backup_path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

/// Copies every extended attribute of `from` to `to`: POSIX ACLs (`system.posix_acl_access`),
/// SELinux labels, capabilities, user attributes. A run as another user than root skips the
/// attributes the kernel does not let it set.
fn copy_xattrs(from: &File, to: &File) -> Result<()> {
    let names = fd_xattr(|buf, len| unsafe {
        // SAFETY: buf is valid for len bytes (or null with len 0).
        libc::flistxattr(from.as_raw_fd(), buf.cast(), len)
    })
    .map_err(|e| anyhow!("listing extended attributes: {e}"))?;
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let Ok(c_name) = std::ffi::CString::new(name) else {
            continue;
        };
        let shown = String::from_utf8_lossy(name);
        let value = match fd_xattr(|buf, len| unsafe {
            // SAFETY: c_name is NUL-terminated; buf is valid for len bytes.
            libc::fgetxattr(from.as_raw_fd(), c_name.as_ptr(), buf.cast(), len)
        }) {
            Ok(value) => value,
            // Removed since it was listed: nothing to keep.
            Err(e) if e.raw_os_error() == Some(libc::ENODATA) => continue,
            Err(e) => return Err(anyhow!("reading the extended attribute {shown}: {e}")),
        };
        // SAFETY: c_name is NUL-terminated; value is valid for its length.
        let rc = unsafe {
            libc::fsetxattr(
                to.as_raw_fd(),
                c_name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            let refused = matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES));
            if refused && !nix::unistd::geteuid().is_root() {
                continue;
            }
            return Err(anyhow!("setting the extended attribute {shown}: {e}"));
        }
    }
    Ok(())
}

/// Calls a size-probing xattr function (`len` 0 asks for the size) until the value fits.
fn fd_xattr(call: impl Fn(*mut u8, usize) -> isize) -> std::io::Result<Vec<u8>> {
    loop {
        let size = call(std::ptr::null_mut(), 0);
        if size < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOTSUP) {
                return Ok(Vec::new());
            }
            return Err(e);
        }
        let mut buf = vec![0u8; size as usize];
        let got = call(buf.as_mut_ptr(), buf.len());
        if got >= 0 {
            buf.truncate(got as usize);
            return Ok(buf);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ERANGE) {
            return Err(e);
        }
    }
}

/// Removes `.NAME.PID.N.tmp` files beside `path` whose process is gone (a run killed between
/// creating its temp file and renaming it). A live process's temp file is never touched.
fn remove_dead_leftovers(path: &Path) {
    let Some(base) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{base}.");
    let dir = parent_of(path);
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        let mut parts = rest.split('.');
        let (Some(pid), Some(n), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(pid), Ok(_)) = (pid.parse::<i32>(), n.parse::<u32>()) else {
            continue;
        };
        if pid > 0 && process_is_gone(pid) {
            // unlink never follows a link: a planted link at such a name only goes away.
            let _ = fs::remove_file(dir.join(&name));
        }
    }
}

fn process_is_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks whether the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Removes the target's path (a link itself, not what it leads to), keeping a backup when
/// asked; returns the backup's name.
pub fn remove(target: &Target, backup: bool) -> Result<Option<PathBuf>> {
    let path = target.given.as_path();
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
/// `DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS`, so a kill -9 lands there reliably. Only in builds
/// with the `test-hooks` feature, which only tests enable: release binaries hold no hook.
#[cfg(not(feature = "test-hooks"))]
fn test_hook_pause() {}

#[cfg(feature = "test-hooks")]
fn test_hook_pause() {
    if let Some(ms) = std::env::var_os("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS")
        .and_then(|v| v.to_str().and_then(|s| s.parse::<u64>().ok()))
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
