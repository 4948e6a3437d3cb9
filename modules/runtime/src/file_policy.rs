//! The one file-safety policy: which files a module may read or replace, how it finds them,
//! and the lock that serialises runs on one file. Every module that reads or writes a file
//! goes through here (sysctl_forwarding's managed file and its boot scan, frr_local_stanza's
//! file, qinq_check's `interfaces_file`); [`crate::atomic_file`] does the writing.
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
//! * **Another tool's file is read only when only root could have written it**
//!   ([`read_trusted`]; qinq_check's `interfaces_file`): its owner root (or the running user),
//!   not writable by group or others, and every folder above it the same.
//! * **One lock per file, that only root can take**: `/run/lock/deevnet.net/<hash>.lock`
//!   (folder 0700, file 0600, both root's, opened without following links), keyed by the
//!   canonical path of the file, so a link and the real path share one lock and another user
//!   cannot block a run. A run as another user locks in `/run/lock/deevnet.net-<uid>/`, the
//!   same way (it can only write files it owns, and no other user can open that folder).

use crate::spec::{DefaultValue, IntRange, Kind, OptionSpec};
use anyhow::{anyhow, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read as _};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

mod lock;
pub use lock::{lock_dir, FileLock};

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

/// The range of `lock_timeout`.
pub const LOCK_TIMEOUT_RANGE: IntRange = IntRange::new(1, 3600, "a number of seconds");

/// `lock_timeout` as a duration, or the one message for a value outside its range.
pub fn lock_timeout(seconds: i64) -> std::result::Result<Duration, String> {
    LOCK_TIMEOUT_RANGE.seconds("lock_timeout", seconds)
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
    let last = follow_links(parameter, path, follow_untrusted_links)?;
    link_target(parameter, path, &last, follow_untrusted_links)
}

/// Follows the link `path` one hop at a time, checking each link before taking its word (unless
/// `follow_untrusted_links`): the path the last link names, which may not exist yet.
fn follow_links(parameter: &str, path: &Path, follow_untrusted_links: bool) -> Result<PathBuf> {
    let shown = path.display();
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
    Ok(current)
}

/// The file a chain of links ends at (`last`): its folder must exist, the file (or, if new, its
/// folder) must be trusted unless `follow_untrusted_links`, and regular; its canonical path is
/// the lock key.
fn link_target(
    parameter: &str,
    path: &Path,
    last: &Path,
    follow_untrusted_links: bool,
) -> Result<Target> {
    let shown = path.display();
    let current = last;
    let folder = parent_of(current);
    let folder = fs::canonicalize(&folder).map_err(|e| {
        anyhow!(
            "{parameter}={shown} is a link to {}, whose folder cannot be used: {e}; fix the link or give another {parameter}",
            current.display()
        )
    })?;
    let real = folder.join(file_name(parameter, current)?);
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
    read_open(target, file).map(Some)
}

/// Reads a file the module does not own but acts on as root (another tool's configuration,
/// such as `/etc/network/interfaces`): resolved by [`resolve`]'s rules (no link followed
/// unless trusted), and refused unless nobody but root (or the user the module runs as) could
/// have written it: the file owned by such a user and not writable by group or others, every
/// folder above it the same (a sticky folder counts when the file is root's). `None` when it
/// does not exist.
pub fn read_trusted(parameter: &str, path: &Path) -> Result<Option<String>> {
    let target = resolve(parameter, path, false)?;
    let Some(file) = open_regular(&target)? else {
        return Ok(None);
    };
    let meta = file
        .metadata()
        .map_err(|e| anyhow!("{}: cannot inspect it: {e}", target.describe()))?;
    let why = untrusted_by_others("the file", &target.real, &meta, false)
        .or_else(|| untrusted_folders(&parent_of(&target.real)));
    if let Some(why) = why {
        return Err(anyhow!(
            "{} could have been written by another user than root ({why}), so it is not read: what it says is acted on as root; have root own it and its folders, writable by root only; nothing was changed",
            target.describe()
        ));
    }
    read_open(&target, file).map(Some)
}

/// Reads an open regular file as UTF-8 text, up to [`MAX_READ`].
fn read_open(target: &Target, file: File) -> Result<String> {
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
    String::from_utf8(bytes).map_err(|_| {
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

/// The rule for a file or folder whose content the module acts on as root (a record, another
/// tool's configuration): why another user than root (or the running user) could have written
/// it: another owner, or writable by group or others where no sticky bit (`sticky`, for a
/// folder) protects the entries of their owners. `what` names it in the message.
pub fn untrusted_by_others(
    what: &str,
    path: &Path,
    meta: &fs::Metadata,
    sticky: bool,
) -> Option<String> {
    if !trusted_uid(meta.uid()) {
        return Some(format!(
            "{what} {} is owned by {}",
            path.display(),
            owner_name(meta.uid())
        ));
    }
    (meta.mode() & 0o022 != 0 && !sticky).then(|| {
        format!(
            "{what} {} is writable by its group or others (mode {:04o})",
            path.display(),
            meta.mode() & 0o7777
        )
    })
}

/// Why a program the module would run as root is not run ([`trusted_program`]).
#[derive(Debug)]
pub enum ProgramRefusal {
    /// Nothing at the path (or a dangling link).
    Missing,
    /// Not a regular file, or no execute bit.
    NotAProgram(String),
    /// Another user than root could have planted or changed it: the reason.
    Untrusted(String),
    /// It could not be inspected.
    Unreadable(String),
}

impl std::fmt::Display for ProgramRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProgramRefusal::Missing => f.write_str("it does not exist"),
            ProgramRefusal::NotAProgram(why)
            | ProgramRefusal::Untrusted(why)
            | ProgramRefusal::Unreadable(why) => f.write_str(why),
        }
    }
}

/// The rule for a program a module runs as root (vtysh, nft): its real path, when neither the
/// path given (a link), nor the file it leads to, nor any folder above either could have been
/// planted or changed by another user than root; it runs as root and its output is acted on.
pub fn trusted_program(path: &Path) -> Result<PathBuf, ProgramRefusal> {
    let link = fs::symlink_metadata(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => ProgramRefusal::Missing,
        _ => ProgramRefusal::Unreadable(format!("{} cannot be inspected: {e}", path.display())),
    })?;
    if link.file_type().is_symlink() {
        if let Some(why) = untrusted_by_others("the link", path, &link, true).or_else(|| {
            // The folder the link sits in, as it really is (a merged /bin is a link too).
            let folder = absolute(&parent_of(path));
            untrusted_folders(&fs::canonicalize(&folder).unwrap_or(folder))
        }) {
            return Err(ProgramRefusal::Untrusted(why));
        }
    }
    let real = fs::canonicalize(path).map_err(|e| match e.kind() {
        ErrorKind::NotFound => ProgramRefusal::Missing,
        _ => ProgramRefusal::Unreadable(format!("{} cannot be resolved: {e}", path.display())),
    })?;
    let meta = fs::metadata(&real).map_err(|e| {
        ProgramRefusal::Unreadable(format!("{} cannot be inspected: {e}", real.display()))
    })?;
    if !meta.is_file() {
        return Err(ProgramRefusal::NotAProgram(format!(
            "{} is not a regular file",
            real.display()
        )));
    }
    if meta.mode() & 0o111 == 0 {
        return Err(ProgramRefusal::NotAProgram(format!(
            "{} is not executable",
            real.display()
        )));
    }
    match untrusted_by_others("the program", &real, &meta, false)
        .or_else(|| untrusted_folders(&parent_of(&real)))
    {
        Some(why) => Err(ProgramRefusal::Untrusted(why)),
        None => Ok(real),
    }
}

/// [`untrusted_by_others`] for `folder` (canonical) and every folder above it: what another
/// user could change in it. A sticky folder passes, since each entry on the way is checked too.
pub fn untrusted_folders(folder: &Path) -> Option<String> {
    folder
        .ancestors()
        .find_map(|f| match fs::symlink_metadata(f) {
            // What cannot be inspected cannot be trusted.
            Err(e) => Some(format!(
                "the folder {} cannot be inspected: {e}",
                f.display()
            )),
            Ok(meta) => untrusted_by_others("the folder", f, &meta, meta.mode() & 0o1000 != 0),
        })
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
