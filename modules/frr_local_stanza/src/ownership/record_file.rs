//! The owner record on disk, through the runtime's file policy (regular file, trusted links
//! only, its own lock) and atomic replacement, as `frr.conf.local` itself; and, because the
//! record decides what the module deletes, the policy's ownership rule for a link's target
//! applied to the record itself: it and every folder above it root's (or the running user's),
//! none writable by group or others unless sticky.

use super::{Entry, Record};
use anyhow::{anyhow, Result};
use deevnet_runtime::atomic_file::{self, NewFile};
use deevnet_runtime::file_policy::{self, FileLock, Target};
use std::collections::HashSet;
use std::fs;
use std::io::Read as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where owners' records live unless `owner_record` says otherwise: outside `/etc/frr`, whose
/// files Proxmox's merge reads.
pub const DEFAULT_RECORD: &str = "/var/lib/deevnet.net/frr-local-owners.json";

/// Root's only: the record names which stanzas each owner wrote.
const PRIVATE_RECORD: NewFile = NewFile {
    mode: 0o600,
    group: None,
};

/// The largest record read or written: it is read, settled and rewritten whole on every run
/// while both locks are held. About 20,000 stanzas of one line each.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

/// The record as read under its lock (held until the run ends).
pub struct RecordFile {
    /// `None` in check mode when the record's folder does not exist yet (nothing recorded).
    target: Option<Target>,
    given: PathBuf,
    _lock: Option<FileLock>,
    pub text: String,
    pub record: Record,
}

impl RecordFile {
    /// Opens `path` (the `owner_record` option) for claims on `file` (the `path` target):
    /// its folder is made (0700) in a real run, so a first run on a fresh node needs nothing
    /// prepared. Refused before anything is read or made: the same file as `path`, a record
    /// or folder another user owns or could write.
    pub fn open(
        path: &Path,
        file: &Target,
        checked: &HashSet<Entry>,
        follow_untrusted_links: bool,
        lock_timeout: Duration,
        check_mode: bool,
    ) -> Result<RecordFile> {
        let shown = path.display().to_string();
        let folder = file_policy::parent_of(path);
        let empty = |target| RecordFile {
            target,
            given: path.to_path_buf(),
            _lock: None,
            text: String::new(),
            record: Record::empty(),
        };
        if !folder.exists() {
            if check_mode {
                return Ok(empty(None));
            }
            let existing = folder
                .ancestors()
                .find(|f| f.exists())
                .map(absolute)
                .unwrap_or_else(|| PathBuf::from("/"));
            if let Some(why) = file_policy::untrusted_folders(&existing) {
                return Err(untrusted(&shown, &why));
            }
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&folder)
                .map_err(|e| anyhow!("owner_record={shown}: cannot create its folder {}: {e}; create it, or give another owner_record", folder.display()))?;
        }
        let target = file_policy::resolve("owner_record", path, follow_untrusted_links)?;
        if same_file(&target, file) {
            return Err(anyhow!(
                "owner_record={shown} names the same file as path={}: the record must be a file of its own (it says which stanzas of path each owner wrote, outside path); give another owner_record, such as the default {}; nothing was changed",
                file.given.display(),
                DEFAULT_RECORD
            ));
        }
        if let Some(why) = file_policy::untrusted_folders(&file_policy::parent_of(&target.key)) {
            return Err(untrusted(&shown, &why));
        }
        let lock = FileLock::acquire(&target, lock_timeout)?;
        let text = match file_policy::open_regular(&target)? {
            None => String::new(),
            Some(opened) => {
                // The opened file itself, so what is checked is what is read.
                let meta = opened
                    .metadata()
                    .map_err(|e| anyhow!("owner_record={shown}: cannot inspect it: {e}"))?;
                if let Some(why) =
                    file_policy::untrusted_by_others("the record", &target.key, &meta, false)
                {
                    return Err(untrusted(&shown, &why));
                }
                let mut bytes = Vec::new();
                opened
                    .take(MAX_RECORD_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| anyhow!("owner_record={shown}: cannot read it: {e}"))?;
                if bytes.len() > MAX_RECORD_BYTES {
                    return Err(anyhow!(super::too_large(&shown, meta.len() as usize, "is")));
                }
                String::from_utf8(bytes).map_err(|_| {
                    anyhow!("owner_record={shown} is not a record this module wrote (not UTF-8 text); restore it from its backup, or remove it (the owners' stanzas then stay in place, unowned); nothing was changed")
                })?
            }
        };
        let record = Record::parse_knowing(&text, &shown, checked).map_err(|e| anyhow!(e))?;
        Ok(RecordFile {
            _lock: Some(lock),
            text,
            record,
            ..empty(Some(target))
        })
    }

    /// The path as the task gave it, for messages.
    pub fn shown(&self) -> String {
        self.given.display().to_string()
    }

    /// Whether `record` differs from what the file holds (no file and no entries: the same).
    pub fn differs(&self, record: &Rendered) -> bool {
        record.text != self.text && !(self.text.is_empty() && record.empty)
    }

    /// Writes `record` when it differs from what the file holds now.
    pub fn write(&mut self, record: &Rendered) -> Result<()> {
        if !self.differs(record) {
            return Ok(());
        }
        let target = self
            .target
            .as_ref()
            .ok_or_else(|| anyhow!("the owner record was opened in check mode"))?;
        atomic_file::replace(target, record.text.as_bytes(), false, PRIVATE_RECORD)?;
        self.text = record.text.clone();
        Ok(())
    }
}

/// A record's text, rendered once (it is compared, measured and written).
pub struct Rendered {
    pub text: String,
    /// No claims and nothing pending: the same as no file.
    empty: bool,
}

impl Rendered {
    pub fn of(record: &Record) -> Rendered {
        Rendered {
            text: record.render(),
            empty: record.files.is_empty() && record.pending.is_empty(),
        }
    }
}

/// The record and `path` are one file: the same canonical path, or one inode (a hard link).
fn same_file(record: &Target, file: &Target) -> bool {
    if record.key == file.key {
        return true;
    }
    match (fs::metadata(&record.real), fs::metadata(&file.real)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

fn untrusted(shown: &str, why: &str) -> anyhow::Error {
    anyhow!(
        "owner_record={shown} is not trusted: {why}; another user could have written claims there that make the module delete stanzas it never wrote. Have root own the record and its folders, none writable by group or others (chown root: …; chmod go-w …), or give another owner_record; nothing was changed"
    )
}

fn absolute(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
