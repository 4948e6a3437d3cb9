//! The owner record on disk, through the runtime's file policy (regular file, trusted links
//! only, its own lock) and atomic replacement, as `frr.conf.local` itself.

use super::{Entry, Record};
use anyhow::{anyhow, Result};
use deevnet_runtime::atomic_file::{self, NewFile};
use deevnet_runtime::file_policy::{self, FileLock, Target};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::time::Duration;

/// Root's only: the record names which stanzas each owner wrote.
const PRIVATE_RECORD: NewFile = NewFile {
    mode: 0o600,
    group: None,
};

/// The record as read under its lock (held until the run ends).
pub struct RecordFile {
    /// `None` in check mode when the record's folder does not exist yet (nothing recorded).
    target: Option<Target>,
    _lock: Option<FileLock>,
    pub text: String,
    pub record: Record,
}

impl RecordFile {
    /// Opens `path` (the `owner_record` option): its folder is made (0700) in a real run, so a
    /// first run on a fresh node needs nothing prepared.
    pub fn open(
        path: &Path,
        follow_untrusted_links: bool,
        lock_timeout: Duration,
        check_mode: bool,
    ) -> Result<RecordFile> {
        let folder = file_policy::parent_of(path);
        if !folder.exists() {
            if check_mode {
                return Ok(RecordFile {
                    target: None,
                    _lock: None,
                    text: String::new(),
                    record: Record::default(),
                });
            }
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&folder)
                .map_err(|e| anyhow!("owner_record={}: cannot create its folder {}: {e}; create it, or give another owner_record", path.display(), folder.display()))?;
        }
        let target = file_policy::resolve("owner_record", path, follow_untrusted_links)?;
        let lock = FileLock::acquire(&target, lock_timeout)?;
        let text = file_policy::read_text(&target)?.unwrap_or_default();
        let record =
            Record::parse(Some(&text), &path.display().to_string()).map_err(|e| anyhow!(e))?;
        Ok(RecordFile {
            target: Some(target),
            _lock: Some(lock),
            text,
            record,
        })
    }

    /// Whether `record` differs from what the file holds (no file and no entries: the same).
    pub fn differs(&self, record: &Record) -> bool {
        record.render() != self.text && !(self.text.is_empty() && record.files.is_empty())
    }

    /// Writes `record` when it differs from what the file holds now.
    pub fn write(&mut self, record: &Record) -> Result<()> {
        if !self.differs(record) {
            return Ok(());
        }
        let text = record.render();
        let target = self
            .target
            .as_ref()
            .ok_or_else(|| anyhow!("the owner record was opened in check mode"))?;
        atomic_file::replace(target, text.as_bytes(), false, PRIVATE_RECORD)?;
        self.text = text;
        Ok(())
    }

    /// `owner`'s entries for `file`, as recorded.
    pub fn entries(&self, file: &str, owner: &str) -> Vec<Entry> {
        self.record.entries(file, owner).to_vec()
    }
}
