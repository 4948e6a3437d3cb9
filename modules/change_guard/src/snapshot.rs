//! The snapshot of the files a change may touch, and its restore.
//!
//! A path given is a file, a symlink, a folder (every regular file and symlink under it, found
//! without following links) or nothing yet (recorded as absent: a restore removes what the
//! change created there). Anything else (a FIFO, a device, a socket) is refused, naming it. The
//! manifest records per file whether it existed, its mode, owner, group, sha256 and link
//! target; regular files are copied into the run's `files/`. A restore puts back every file
//! that differs (atomically, under the runtime's lock of that file), removes what the change
//! created (an absent path, or a new file under a recorded folder) and recreates what it removed.

use crate::state_dir::{StateDir, FILE_LOCK_WAIT};
use deevnet_runtime::atomic_file::{self, NewFile};
use deevnet_runtime::file_policy::{self, FileLock, Target};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::{ErrorKind, Read as _};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// `runs/<run_id>/manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The paths as the task gave them.
    pub paths: Vec<PathBuf>,
    /// The folders among them and under them, as they were.
    pub folders: Vec<PathBuf>,
    pub files: Vec<Entry>,
}

/// One file as the snapshot found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: PathBuf,
    pub existed: bool,
    #[serde(default)]
    pub mode: u32,
    #[serde(default)]
    pub uid: u32,
    #[serde(default)]
    pub gid: u32,
    /// A regular file's digest (hex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// A symlink's target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<PathBuf>,
    /// A regular file's copy, relative to the run's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<String>,
}

/// A path as it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    Absent,
    File {
        bytes: Vec<u8>,
        mode: u32,
        uid: u32,
        gid: u32,
    },
    Link {
        target: PathBuf,
        uid: u32,
        gid: u32,
    },
    Folder,
    /// A FIFO, a device, a socket: named by its kind.
    Other(&'static str),
}

/// What a restore does to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Puts the recorded file or link back.
    Put(Entry),
    /// Removes what the change created.
    Remove(PathBuf),
}

impl Action {
    pub fn path(&self) -> &Path {
        match self {
            Action::Put(entry) => &entry.path,
            Action::Remove(path) => path,
        }
    }
}

/// What a snapshot finds: each file (or absent path) as it is, and the folders walked.
pub struct Found {
    pub files: Vec<(PathBuf, Current)>,
    pub folders: Vec<PathBuf>,
}

/// The files under `paths`, folders walked, without following links; refuses anything that is
/// neither a regular file, a symlink, a folder nor absent, naming it.
pub fn collect(paths: &[PathBuf]) -> Result<Found, String> {
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for path in paths {
        walk(path, &mut files, &mut folders)?;
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    folders.sort();
    folders.dedup();
    Ok(Found { files, folders })
}

fn walk(
    path: &Path,
    files: &mut Vec<(PathBuf, Current)>,
    folders: &mut Vec<PathBuf>,
) -> Result<(), String> {
    match observe(path)? {
        Current::Folder => {
            folders.push(path.to_path_buf());
            let entries = fs::read_dir(path).map_err(|e| format!("paths: {}: {e}", path.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("paths: {}: {e}", path.display()))?;
                walk(&entry.path(), files, folders)?;
            }
            Ok(())
        }
        Current::Other(kind) => Err(format!(
            "paths: {} is {kind}, not a regular file, a symlink or a folder: the guard snapshots and restores those only; leave it out of paths (list its neighbours one by one); nothing was changed",
            path.display()
        )),
        current => {
            files.push((path.to_path_buf(), current));
            Ok(())
        }
    }
}

/// What is at `path` now, without following a link; a regular file read by the file policy
/// (no link followed, no FIFO opened, at most `MAX_READ` bytes).
pub fn observe(path: &Path) -> Result<Current, String> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Current::Absent),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(Current::Absent),
        Err(e) => return Err(format!("{}: cannot inspect it: {e}", path.display())),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Ok(Current::Folder);
    }
    if kind.is_symlink() {
        let target = fs::read_link(path).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(Current::Link {
            target,
            uid: meta.uid(),
            gid: meta.gid(),
        });
    }
    if !kind.is_file() {
        return Ok(Current::Other(if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "a device"
        }));
    }
    let bytes = read_bytes(&exact_target("paths", path))?.unwrap_or_default();
    Ok(Current::File {
        bytes,
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
    })
}

/// A target that is the path itself: a link there is never followed (the policy's open
/// refuses it), so a restore replaces the path, not what a link leads to.
pub fn exact_target(parameter: &str, path: &Path) -> Target {
    // The lock's key as other modules make it: the real folder, the name in it.
    let key = fs::canonicalize(file_policy::parent_of(path))
        .ok()
        .zip(path.file_name())
        .map_or_else(|| path.to_path_buf(), |(folder, name)| folder.join(name));
    Target {
        parameter: parameter.into(),
        given: path.to_path_buf(),
        real: path.to_path_buf(),
        key,
    }
}

/// A regular file's bytes, by the file policy; `None` when it does not exist.
pub fn read_bytes(target: &Target) -> Result<Option<Vec<u8>>, String> {
    let Some(file) = file_policy::open_regular(target).map_err(|e| format!("{e:#}"))? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.take(file_policy::MAX_READ + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: cannot read it: {e}", target.describe()))?;
    if bytes.len() as u64 > file_policy::MAX_READ {
        return Err(format!(
            "{} is larger than {} MiB, more than a configuration file; leave it out of paths",
            target.describe(),
            file_policy::MAX_READ >> 20
        ));
    }
    Ok(Some(bytes))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The manifest entry of a path as it is now, with the name of its copy when it is a file.
pub fn entry_of(path: &Path, current: &Current, copy: Option<String>) -> Entry {
    let mut entry = Entry {
        path: path.to_path_buf(),
        existed: !matches!(current, Current::Absent),
        mode: 0,
        uid: 0,
        gid: 0,
        sha256: None,
        link: None,
        copy: None,
    };
    match current {
        Current::File {
            bytes,
            mode,
            uid,
            gid,
        } => {
            (entry.mode, entry.uid, entry.gid) = (*mode, *uid, *gid);
            entry.sha256 = Some(sha256_hex(bytes));
            entry.copy = copy;
        }
        Current::Link { target, uid, gid } => {
            (entry.uid, entry.gid) = (*uid, *gid);
            entry.link = Some(target.clone());
        }
        _ => {}
    }
    entry
}

/// Takes the snapshot of `paths` into `run_dir` (its `files/` and `manifest.json`).
pub fn take(state: &StateDir, run_dir: &Path, paths: &[PathBuf]) -> Result<Manifest, String> {
    let Found {
        files: found,
        folders,
    } = collect(paths)?;
    let copies = run_dir.join("files");
    state.subdir(&copies)?;
    let mut files = Vec::new();
    for (index, (path, current)) in found.iter().enumerate() {
        let copy = match current {
            Current::File { bytes, .. } => {
                let name = format!("files/{index}");
                let target = state.target(&run_dir.join(&name))?;
                atomic_file::replace(&target, bytes, false, crate::state_dir::PRIVATE_FILE)
                    .map_err(|e| format!("{e:#}"))?;
                Some(name)
            }
            _ => None,
        };
        files.push(entry_of(path, current, copy));
    }
    let manifest = Manifest {
        paths: paths.to_vec(),
        folders,
        files,
    };
    state.write_json(&run_dir.join("manifest.json"), &manifest)?;
    Ok(manifest)
}

/// Whether a path as it is now differs from its record.
pub fn differs(entry: &Entry, current: &Current) -> bool {
    match (entry, current) {
        (e, Current::Absent) => e.existed,
        (e, _) if !e.existed => true,
        (
            e,
            Current::File {
                bytes,
                mode,
                uid,
                gid,
            },
        ) => {
            e.sha256.as_deref() != Some(sha256_hex(bytes).as_str())
                || (e.mode, e.uid, e.gid) != (*mode, *uid, *gid)
        }
        (e, Current::Link { target, uid, gid }) => {
            e.link.as_ref() != Some(target) || (e.uid, e.gid) != (*uid, *gid)
        }
        _ => true,
    }
}

/// What a restore would do, path by path, in path order: each recorded file that differs, and
/// each file the change created under a recorded folder.
pub fn plan(manifest: &Manifest) -> Result<Vec<Action>, String> {
    let mut actions = Vec::new();
    for entry in &manifest.files {
        let current = observe(&entry.path)?;
        if !differs(entry, &current) {
            continue;
        }
        if entry.existed {
            actions.push(Action::Put(entry.clone()));
        } else if matches!(current, Current::File { .. } | Current::Link { .. }) {
            actions.push(Action::Remove(entry.path.clone()));
        }
    }
    let recorded = |path: &Path| manifest.files.iter().any(|e| e.path == path);
    let existing: Vec<PathBuf> = manifest
        .folders
        .iter()
        .filter(|f| observe(f).is_ok_and(|c| c == Current::Folder))
        .cloned()
        .collect();
    if !existing.is_empty() {
        // Only regular files and links are removed; a new FIFO or folder is left, not refused.
        let now = collect_lenient(&existing);
        for path in now.into_iter().filter(|p| !recorded(p)) {
            actions.push(Action::Remove(path));
        }
    }
    actions.sort_by(|a, b| a.path().cmp(b.path()));
    actions.dedup();
    Ok(actions)
}

/// The regular files and links under `folders` now, skipping what the snapshot would refuse.
fn collect_lenient(folders: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = folders.to_vec();
    while let Some(folder) = stack.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() || t.is_symlink() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files
}

/// Applies one action; the copy of a file is checked against its digest before it is written.
pub fn apply(state: &StateDir, run_dir: &Path, action: &Action) -> Result<(), String> {
    let path = action.path();
    let _lock = FileLock::acquire(&exact_target("paths", path), FILE_LOCK_WAIT)
        .map_err(|e| format!("{e:#}"))?;
    let current = observe(path)?;
    match action {
        Action::Remove(_) => remove(path),
        Action::Put(entry) => {
            if matches!(current, Current::Folder) {
                return Err(format!(
                    "{} is a folder now and was not: it is left as it is; remove it by hand and restore again",
                    path.display()
                ));
            }
            if let Some(parent) = path.parent() {
                // A folder the change removed comes back (as root's, 0755) before its files.
                fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            match &entry.link {
                Some(link) => put_link(path, link, entry, &current),
                None => put_file(state, run_dir, entry, &current),
            }
        }
    }
}

fn remove(path: &Path) -> Result<(), String> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("removing {}: {e}", path.display())),
    }
}

fn put_file(
    state: &StateDir,
    run_dir: &Path,
    entry: &Entry,
    current: &Current,
) -> Result<(), String> {
    let path = &entry.path;
    let copy = entry
        .copy
        .as_ref()
        .ok_or_else(|| format!("{}: the snapshot holds no copy", path.display()))?;
    let bytes = read_bytes(&state.target(&run_dir.join(copy))?)?.unwrap_or_default();
    if Some(sha256_hex(&bytes)) != entry.sha256 {
        return Err(format!(
            "the snapshot's copy of {} ({}) does not match its digest: it is not written",
            path.display(),
            run_dir.join(copy).display()
        ));
    }
    if matches!(current, Current::Link { .. } | Current::Other(_)) {
        // The change put something else there: it goes, the file comes back in its place.
        remove(path)?;
    }
    let new_file = NewFile {
        mode: entry.mode,
        group: None,
    };
    atomic_file::replace(&exact_target("paths", path), &bytes, false, new_file)
        .map_err(|e| format!("{e:#}"))?;
    std::os::unix::fs::lchown(path, Some(entry.uid), Some(entry.gid))
        .map_err(|e| format!("{}: setting the owner: {e}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(entry.mode))
        .map_err(|e| format!("{}: setting the mode: {e}", path.display()))
}

/// A link put back atomically: made beside it under a temporary name, renamed over it.
fn put_link(path: &Path, link: &Path, entry: &Entry, current: &Current) -> Result<(), String> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp =
        file_policy::parent_of(path).join(format!(".{name}.{}.link.tmp", std::process::id()));
    let _ = fs::remove_file(&temp);
    std::os::unix::fs::symlink(link, &temp)
        .map_err(|e| format!("{}: creating the link: {e}", temp.display()))?;
    let _ = std::os::unix::fs::lchown(&temp, Some(entry.uid), Some(entry.gid));
    if matches!(current, Current::Other(_)) {
        remove(path)?;
    }
    fs::rename(&temp, path).map_err(|e| {
        let _ = fs::remove_file(&temp);
        format!("{}: putting the link back: {e}", path.display())
    })
}

/// The text of a path as it is now and as the snapshot holds it, for diff mode.
pub fn texts(state: &StateDir, run_dir: &Path, action: &Action) -> (String, String) {
    let now = match observe(action.path()) {
        Ok(Current::File { bytes, .. }) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok(Current::Link { target, .. }) => format!("-> {}\n", target.display()),
        _ => String::new(),
    };
    let then = match action {
        Action::Remove(_) => String::new(),
        Action::Put(Entry { link: Some(l), .. }) => format!("-> {}\n", l.display()),
        Action::Put(Entry {
            copy: Some(copy), ..
        }) => state
            .target(&run_dir.join(copy))
            .ok()
            .and_then(|t| read_bytes(&t).ok().flatten())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default(),
        Action::Put(_) => String::new(),
    };
    (now, then)
}
