//! The one file-safety policy: which files a module may read or replace, how it finds them,
//! and the lock that serialises runs on one file. Every module that reads or writes a file
//! goes through here (sysctl_forwarding's managed file and its boot scan, frr_local_stanza's
//! file); [`crate::atomic_file`] does the writing.
//!
//! The rules:
//!
//! * **Regular files only.** A path is opened with `O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC` and
//!   checked with `fstat`: a FIFO, a device, a socket or a folder is refused (naming the
//!   parameter, the path, what it is and the fix) and is never read or replaced, so a FIFO
//!   cannot hang a run and `/dev/zero` cannot fill its memory. Reads stop at [`MAX_READ`].
//! * **Masked files are left alone.** A link whose target is the null character device
//!   (major 1, minor 3; systemd's way to mask a file) is reported as masked and nothing is
//!   changed: writing through it would replace `/dev/null`.
//! * **Links are followed only when nobody but root could have planted or changed them**: the
//!   link owned by root, its folder and every folder of its target's path owned by root and not
//!   writable by group or others (a sticky folder counts when the entry in it is root's). A
//!   run as another user trusts that user as well as root. Otherwise the link is refused,
//!   naming its owner, unless the task sets `follow_untrusted_links` ([`FOLLOW_UNTRUSTED_LINKS`]).
//!   A trusted link is written through: its final target is replaced and the link stays.
//! * **One lock per file, that only root can take**: `/run/lock/deevnet.net/<hash>.lock`
//!   (folder 0700, file 0600, both root's, opened without following links), keyed by the
//!   canonical path of the file, so a link and the real path share one lock and another user
//!   cannot block a run. A run as another user locks in `/run/lock/deevnet.net-<uid>/`, the
//!   same way (it can only write files it owns, and no other user can open that folder).

use crate::spec::{DefaultValue, Kind, OptionSpec};
use anyhow::{anyhow, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read as _};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

/// The largest file a module reads (its own files are a few KiB).
pub const MAX_READ: u64 = 16 * 1024 * 1024;

/// The option that lets a task follow a link planted by another user than root, on purpose.
/// Declared once here; each file module lists it in its spec.
pub static FOLLOW_UNTRUSTED_LINKS: OptionSpec =
    OptionSpec::new("follow_untrusted_links", Kind::Bool).default(DefaultValue::Bool(false));

/// The options every file module shares, declared once here (their human text is the
/// `deevnet.net.files` doc fragment); each file module lists them in its spec.
pub static BACKUP: OptionSpec =
    OptionSpec::new("backup", Kind::Bool).default(DefaultValue::Bool(false));
pub static LOCK_TIMEOUT: OptionSpec =
    OptionSpec::new("lock_timeout", Kind::Int).default(DefaultValue::Int(30));

/// The range of `lock_timeout`, in seconds.
pub const LOCK_TIMEOUT_RANGE: std::ops::RangeInclusive<i64> = 1..=3600;

/// `lock_timeout` as a duration, or the one message for a value outside its range.
pub fn lock_timeout(seconds: i64) -> Result<Duration> {
    if LOCK_TIMEOUT_RANGE.contains(&seconds) {
        return Ok(Duration::from_secs(seconds.unsigned_abs()));
    }
    Err(anyhow!(
        "lock_timeout={seconds} is out of range; give a number of seconds from {} to {}",
        LOCK_TIMEOUT_RANGE.start(),
        LOCK_TIMEOUT_RANGE.end()
    ))
}

/// The most links followed in a row (the kernel's limit).
const MAX_HOPS: usize = 40;

/// A file a module may read and replace, found by the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The parameter that named it (`path`), for messages.
    pub parameter: String,
    /// The path as given.
    pub given: PathBuf,
    /// The file read and replaced: the given path, or a trusted link's final target.
    pub real: PathBuf,
    /// The canonical path of `real`: the lock's key.
    pub key: PathBuf,
}

impl Target {
    /// `path=/etc/x.conf`, or `path=/etc/x.conf (a link to /etc/y.conf)`.
    pub fn describe(&self) -> String {
        if self.real == self.given {
            format!("{}={}", self.parameter, self.given.display())
        } else {
            format!(
                "{}={} (a link to {})",
                self.parameter,
                self.given.display(),
                self.real.display()
            )
        }
    }
}

/// Resolves `path` (named by `parameter`) by the policy: refuses an empty path, a folder, a
/// missing folder, a masked file, a file that is not regular and an untrusted link (unless
/// `follow_untrusted_links`). Run it before any change, in check mode too.
pub fn resolve(parameter: &str, path: &Path, follow_untrusted_links: bool) -> Result<Target> {
    if path.as_os_str().is_empty() {
        return Err(anyhow!(
            "{parameter}='' is empty; give the path of a file (or leave {parameter} out for its default)"
        ));
    }
    let shown = path.display();
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let parent = existing_folder(parameter, path)?;
            return Ok(Target {
                parameter: parameter.into(),
                given: path.to_path_buf(),
                real: path.to_path_buf(),
                key: parent.join(file_name(parameter, path)?),
            });
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            existing_folder(parameter, path)?;
            return Err(anyhow!("{parameter}={shown}: cannot inspect it: {e}"));
        }
        Err(e) => return Err(anyhow!("{parameter}={shown}: cannot inspect it: {e}")),
    };
    if !meta.file_type().is_symlink() {
        if let Some(kind) = not_regular(&meta.file_type()) {
            return Err(not_regular_error(parameter, path, None, kind));
        }
        return Ok(Target {
            parameter: parameter.into(),
            given: path.to_path_buf(),
            real: path.to_path_buf(),
            key: fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        });
    }
    if is_masked(path) {
        return Err(anyhow!(
            "{parameter}={shown} is masked (a link to /dev/null): the operator masked it on purpose; unmask it (remove the link) or give another {parameter}; nothing was changed"
        ));
    }
    // Follow the links one by one, checking each before taking its word.
    let mut current = absolute(path);
    let mut hops = 0;
    loop {
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => break, // a dangling link: created
            Err(e) => {
                return Err(anyhow!(
                    "{parameter}={shown}: cannot inspect {}: {e}",
                    current.display()
                ))
            }
        };
        if !meta.file_type().is_symlink() {
            break;
        }
        hops += 1;
        if hops > MAX_HOPS {
            return Err(anyhow!(
                "{parameter}={shown}: more than {MAX_HOPS} links in a row (a loop?); give the path of the file itself"
            ));
        }
        if !follow_untrusted_links {
            let folder = parent_of(&current);
            let folder = fs::canonicalize(&folder).unwrap_or(folder);
            if let Some(why) = untrusted_entry(&current, &meta)
                .or_else(|| untrusted_path(&folder.join(file_name_of(&current)), meta.uid()))
            {
                return Err(untrusted_error(parameter, path, &why));
            }
        }
        let target = fs::read_link(&current).map_err(|e| {
            anyhow!(
                "{parameter}={shown}: cannot read the link {}: {e}",
                current.display()
            )
        })?;
        current = parent_of(&current).join(target);
    }
    // The final target: its folder must exist; its canonical path is the lock key.
    let folder = parent_of(&current);
    let folder = fs::canonicalize(&folder).map_err(|e| {
        anyhow!(
            "{parameter}={shown} is a link to {}, whose folder cannot be used: {e}; fix the link or give another {parameter}",
            current.display()
        )
    })?;
    let real = folder.join(file_name(parameter, &current)?);
    let final_meta = fs::symlink_metadata(&real).ok();
    if !follow_untrusted_links {
        let owner = final_meta
            .as_ref()
            .map_or_else(|| nix::unistd::geteuid().as_raw(), |m| m.uid());
        if let Some(why) = untrusted_path(&real, owner) {
            return Err(untrusted_error(parameter, path, &why));
        }
    }
    if let Some(meta) = &final_meta {
        if let Some(kind) = not_regular(&meta.file_type()) {
            return Err(not_regular_error(parameter, path, Some(&real), kind));
        }
    }
    Ok(Target {
        parameter: parameter.into(),
        given: path.to_path_buf(),
        key: real.clone(),
        real,
    })
}

/// True when `path` is a link whose target is the null character device (major 1, minor 3):
/// systemd's way to mask a unit or a sysctl.d file.
pub fn is_masked(path: &Path) -> bool {
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    is_link
        && fs::metadata(path).is_ok_and(|m| {
            m.file_type().is_char_device() && dev_major(m.rdev()) == 1 && dev_minor(m.rdev()) == 3
        })
}

fn dev_major(dev: u64) -> u64 {
    ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)
}

fn dev_minor(dev: u64) -> u64 {
    (dev & 0xff) | ((dev >> 12) & !0xff)
}

/// Reads the target as UTF-8 text; `None` when it does not exist. Opens without following a
/// link and without blocking, and reads a regular file only, up to [`MAX_READ`].
pub fn read_text(target: &Target) -> Result<Option<String>> {
    let Some(file) = open_regular(target)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.take(MAX_READ + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow!("{}: cannot read it: {e}", target.describe()))?;
    if bytes.len() as u64 > MAX_READ {
        return Err(anyhow!(
            "{} is larger than {} MiB, far more than a configuration file this module manages; move it away or give another {}; nothing was changed",
            target.describe(),
            MAX_READ / (1024 * 1024),
            target.parameter
        ));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| {
        anyhow!(
            "{} is not UTF-8 text; fix or move it away",
            target.real.display()
        )
    })
}

/// Opens the target for reading, by the policy: `None` when it does not exist; an error when
/// it is not a regular file or became a link since it was resolved.
pub fn open_regular(target: &Target) -> Result<Option<File>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&target.real)
    {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(anyhow!(
                "{}: {} became a link during the run; run again",
                target.describe(),
                target.real.display()
            ))
        }
        Err(e) => return Err(anyhow!("{}: cannot open it: {e}", target.describe())),
    };
    let meta = file
        .metadata()
        .map_err(|e| anyhow!("{}: cannot inspect it: {e}", target.describe()))?;
    if let Some(kind) = not_regular(&meta.file_type()) {
        let real = (target.real != target.given).then_some(target.real.as_path());
        return Err(not_regular_error(
            &target.parameter,
            &target.given,
            real,
            kind,
        ));
    }
    Ok(Some(file))
}

/// What a file of a folder scan holds (sysctl_forwarding's boot scan of sysctl.d folders).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scanned {
    Text(String),
    /// A link to /dev/null: empty, and it masks the same name in later folders.
    Masked,
}

/// Reads one file found by a folder scan, by the same policy as a module's own file.
pub fn read_scanned(parameter: &str, path: &Path, follow_untrusted_links: bool) -> Result<Scanned> {
    if is_masked(path) {
        return Ok(Scanned::Masked);
    }
    let target = resolve(parameter, path, follow_untrusted_links)?;
    Ok(Scanned::Text(read_text(&target)?.unwrap_or_default()))
}

fn not_regular(file_type: &fs::FileType) -> Option<&'static str> {
    if file_type.is_file() || file_type.is_symlink() {
        None
    } else if file_type.is_dir() {
        Some("a folder")
    } else if file_type.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

fn not_regular_error(
    parameter: &str,
    given: &Path,
    real: Option<&Path>,
    kind: &str,
) -> anyhow::Error {
    if kind == "a folder" && real.is_none() {
        return anyhow!(
            "{parameter}={} is a folder; give the path of a file",
            given.display()
        );
    }
    let subject = match real {
        Some(real) => format!(
            "{parameter}={} is a link to {}, which is {kind}",
            given.display(),
            real.display()
        ),
        None => format!("{parameter}={} is {kind}", given.display()),
    };
    anyhow!(
        "{subject}, not a regular file: the module reads and replaces regular files only; remove it or give the path of a regular file as {parameter}; nothing was changed"
    )
}

fn untrusted_error(parameter: &str, path: &Path, why: &str) -> anyhow::Error {
    anyhow!(
        "{parameter}={} is a link that another user than root could have planted or changed ({why}), so it is not followed: it could lead to a secret or to a file they want overwritten; replace the link by the file, have root own it and its folders, or set follow_untrusted_links=true to follow it on purpose; nothing was changed",
        path.display()
    )
}

/// Root, and the user the module runs as (a link that user could change grants nothing new).
fn trusted_uid(uid: u32) -> bool {
    uid == 0 || uid == nix::unistd::geteuid().as_raw()
}

fn owner_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(user)) => format!("user {} (uid {uid})", user.name),
        _ => format!("uid {uid}"),
    }
}

fn untrusted_entry(path: &Path, meta: &fs::Metadata) -> Option<String> {
    (!trusted_uid(meta.uid())).then(|| {
        format!(
            "the link {} is owned by {}",
            path.display(),
            owner_name(meta.uid())
        )
    })
}

/// Why another user than root could change what `path` names, checking every folder from
/// `/` down; `owner` is the owner of the last entry (a sticky folder protects root's entries).
fn untrusted_path(path: &Path, owner: u32) -> Option<String> {
    let mut folder = PathBuf::from("/");
    let components: Vec<Component> = path.components().collect();
    for (i, component) in components.iter().enumerate() {
        let Component::Normal(name) = component else {
            continue;
        };
        let child = folder.join(name);
        let child_owner = if i + 1 == components.len() {
            owner
        } else {
            fs::symlink_metadata(&child).map_or(owner, |m| m.uid())
        };
        let meta = match fs::symlink_metadata(&folder) {
            Ok(meta) => meta,
            // What cannot be inspected cannot be trusted.
            Err(e) => {
                return Some(format!(
                    "the folder {} cannot be inspected: {e}",
                    folder.display()
                ))
            }
        };
        if !trusted_uid(meta.uid()) {
            return Some(format!(
                "the folder {} is owned by {}",
                folder.display(),
                owner_name(meta.uid())
            ));
        }
        let writable_by_others = meta.mode() & 0o022 != 0;
        let sticky_protects = meta.mode() & 0o1000 != 0 && trusted_uid(child_owner);
        if writable_by_others && !sticky_protects {
            return Some(format!(
                "the folder {} is writable by its group or others (mode {:04o})",
                folder.display(),
                meta.mode() & 0o7777
            ));
        }
        folder = child;
    }
    None
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// The folder that holds `path` (`.` for a bare name).
pub fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn file_name_of(path: &Path) -> &std::ffi::OsStr {
    path.file_name().unwrap_or(std::ffi::OsStr::new("."))
}

fn file_name<'a>(parameter: &str, path: &'a Path) -> Result<&'a std::ffi::OsStr> {
    path.file_name().ok_or_else(|| {
        anyhow!(
            "{parameter}={} names no file (it ends in `..` or `/`); give the path of a file",
            path.display()
        )
    })
}

/// The canonical folder of `path`, which must exist and be a folder.
fn existing_folder(parameter: &str, path: &Path) -> Result<PathBuf> {
    let dir = parent_of(path);
    match fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => Ok(fs::canonicalize(&dir).unwrap_or(dir)),
        Ok(_) => Err(anyhow!(
            "{parameter}={}: {} is not a folder; give a path inside an existing folder",
            path.display(),
            dir.display()
        )),
        Err(_) => Err(anyhow!(
            "{parameter}={}: the folder {} does not exist; create it first or give another {parameter}",
            path.display(),
            dir.display()
        )),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn lock_timeout_has_one_range_and_one_message() {
        assert_eq!(lock_timeout(1).unwrap(), Duration::from_secs(1));
        assert_eq!(lock_timeout(3600).unwrap(), Duration::from_secs(3600));
        for bad in [0, -5, 3601] {
            let err = lock_timeout(bad).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "lock_timeout={bad} is out of range; give a number of seconds from 1 to 3600"
                )
            );
        }
    }

    #[test]
    fn an_empty_path_is_refused_naming_the_parameter() {
        let err = resolve("path", Path::new(""), false).unwrap_err();
        assert!(err.to_string().starts_with("path='' is empty"), "{err}");
    }

    #[test]
    fn missing_folder_is_reported_with_the_parameter() {
        let err = resolve("path", Path::new("/nonexistent-deevnet/x.conf"), false).unwrap_err();
        assert!(
            err.to_string().contains(
                "path=/nonexistent-deevnet/x.conf: the folder /nonexistent-deevnet does not exist"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_folder_and_a_fifo_are_refused_and_a_fifo_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve("path", dir.path(), false).unwrap_err();
        assert!(err.to_string().contains("is a folder"), "{err}");
        let fifo = dir.path().join("x.conf");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let err = resolve("path", &fifo, false).unwrap_err();
        assert!(
            err.to_string()
                .contains("is a FIFO (named pipe), not a regular file"),
            "{err}"
        );
        // Even when it appears after the check, reading it neither blocks nor succeeds.
        let target = Target {
            parameter: "path".into(),
            given: fifo.clone(),
            real: fifo.clone(),
            key: fifo,
        };
        let err = read_text(&target).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    #[test]
    fn reads_stop_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.conf");
        let file = File::create(&big).unwrap();
        file.set_len(MAX_READ + 1).unwrap();
        let target = resolve("path", &big, false).unwrap();
        let err = read_text(&target).unwrap_err();
        assert!(err.to_string().contains("larger than 16 MiB"), "{err}");
        file.set_len(3).unwrap();
        assert_eq!(read_text(&target).unwrap().unwrap(), "\0\0\0");
    }

    #[test]
    fn own_links_are_followed_and_keyed_by_the_final_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.conf");
        let link = dir.path().join("link.conf");
        fs::write(&real, "a\n").unwrap();
        symlink("real.conf", &link).unwrap();
        let via_link = resolve("path", &link, false).unwrap();
        let direct = resolve("path", &real, false).unwrap();
        assert_eq!(via_link.real, fs::canonicalize(&real).unwrap());
        assert_eq!(via_link.key, direct.key);
        assert_eq!(read_text(&via_link).unwrap().unwrap(), "a\n");
    }

    #[test]
    fn a_link_in_a_folder_others_can_write_is_refused_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let real = dir.path().join("real.conf");
        fs::write(&real, "a\n").unwrap();
        let link = open.join("link.conf");
        symlink(&real, &link).unwrap();
        let err = resolve("path", &link, false).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("writable by its group or others (mode 0777)")
                && msg.contains("follow_untrusted_links=true"),
            "{msg}"
        );
        assert!(resolve("path", &link, true).is_ok());
    }

    #[test]
    fn lock_times_out_with_a_clear_message_and_links_share_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("z.conf");
        let link = dir.path().join("l.conf");
        fs::write(&real, "").unwrap();
        symlink(&real, &link).unwrap();
        let held = FileLock::acquire(
            &resolve("path", &real, false).unwrap(),
            Duration::from_secs(1),
        )
        .unwrap();
        let meta = fs::metadata(held.path()).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        // flock locks belong to the open file description: a second open contends.
        let err = FileLock::acquire(
            &resolve("path", &link, false).unwrap(),
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("another run holds the lock"),
            "{err}"
        );
    }
}
