//! Which file sets a key at boot, by systemd-sysctl's rules.
//!
//! The `*.conf` files of all search folders are merged by name: a name in an earlier folder
//! (`/etc/sysctl.d` before `/run`, `/usr/local/lib`, `/usr/lib`, `/lib`) masks the same name
//! further down. The files are read in name order and the last explicit assignment of a key
//! wins; a glob applies only to keys that no explicit assignment (or exclusion) names.

use crate::sysctl_d::{self, Assignment, Target};
use deevnet_runtime::file_policy::{self, Scanned};
use deevnet_runtime::sysctl::SysctlKey;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folders systemd-sysctl reads, in precedence order.
pub const DEFAULT_SEARCH_DIRS: &[&str] = &[
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
];

/// Whether systemd-sysctl reads a file of this name from its folders: `*.conf`, and not hidden
/// (systemd's directory walk skips names starting with `.`).
pub fn is_read_at_boot(name: &str) -> bool {
    name.ends_with(".conf") && !name.starts_with('.')
}

/// Refuses a managed path systemd-sysctl would never read: what it holds would be reported as
/// persisted while lost at the next boot.
pub fn check_read_at_boot(parameter: &str, path: &Path) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if is_read_at_boot(&name) {
        return Ok(());
    }
    let fix = match name.trim_start_matches('.') {
        "" => "name it like 90-deevnet-tenant-fabric.conf".to_string(),
        stem => format!(
            "give it a .conf name, e.g. {}",
            path.with_file_name(format!("{stem}.conf")).display()
        ),
    };
    Err(format!(
        "{parameter}: '{}' is never read at boot: systemd-sysctl reads only *.conf files (not hidden ones) in {}, so forwarding would be lost at the next boot; {fix}",
        path.display(),
        DEFAULT_SEARCH_DIRS.join(", ")
    ))
}

/// A config file as systemd-sysctl would read it.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub assignments: Vec<Assignment>,
}

/// The assignment that decides a key at boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BootSetting {
    /// The file that wins, or `null` when no file sets the key (the kernel default stays).
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    /// `null` when no file sets it, or when the winning line only excludes it from globs.
    pub value: Option<String>,
}

/// Lists the files systemd-sysctl reads from `dirs`, in reading order. `own` is the path the
/// module manages with the content it is about to have (`None`: about to be removed), so the
/// answer describes the node after this run. Each file is read by the runtime's file policy:
/// a masked file (a link to /dev/null) is empty and masks its name; a file that is not
/// regular (a FIFO never blocks the scan), an untrusted link (unless `follow_untrusted_links`)
/// or an unreadable file is left out, and the second list says which and why.
pub fn config_files(
    dirs: &[PathBuf],
    own: (&Path, Option<&str>),
    follow_untrusted_links: bool,
) -> (Vec<ConfigFile>, Vec<String>) {
    let own_real = canonical(own.0);
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_read_at_boot(&name) {
                by_name.entry(name).or_insert_with(|| entry.path());
            }
        }
    }
    // The managed file counts even before it exists, if it sits in a search folder under a
    // name systemd-sysctl reads.
    if let (Some(name), Some(parent)) = (own.0.file_name(), own.0.parent()) {
        let name = name.to_string_lossy().into_owned();
        let parent_real = canonical(parent);
        let rank = dirs.iter().position(|d| canonical(d) == parent_real);
        if let Some(rank) = rank.filter(|_| is_read_at_boot(&name)) {
            let masked_by_earlier = by_name.get(&name).is_some_and(|existing| {
                dirs.iter()
                    .position(|d| {
                        existing
                            .parent()
                            .is_some_and(|p| canonical(p) == canonical(d))
                    })
                    .is_some_and(|r| r < rank)
            });
            if !masked_by_earlier {
                by_name.insert(name, own.0.to_path_buf());
            }
        }
    }
    let mut unread = Vec::new();
    let files = by_name
        .into_values()
        .filter_map(|path| {
            let text = if canonical(&path) == own_real {
                own.1?.to_string()
            } else {
                match file_policy::read_scanned("sysctl_dirs", &path, follow_untrusted_links) {
                    Ok(Scanned::Text(text)) => text,
                    Ok(Scanned::Masked) => String::new(),
                    Err(e) => {
                        unread.push(format!("{e:#}"));
                        return None;
                    }
                }
            };
            Some(ConfigFile {
                assignments: sysctl_d::parse(&text),
                path,
            })
        })
        .collect();
    (files, unread)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The boot-time setting of `key` given the files in reading order.
pub fn setting_of(files: &[ConfigFile], key: &SysctlKey) -> BootSetting {
    let key_path = key.components().join("/");
    let mut explicit = None;
    let mut glob = None;
    for file in files {
        for assignment in &file.assignments {
            let found = Some((file.path.clone(), assignment.line, assignment.value.clone()));
            match &assignment.target {
                Target::Key(k) if k == key => explicit = found,
                Target::Glob(pattern) if sysctl_d::glob_matches(pattern, &key_path) => glob = found,
                _ => {}
            }
        }
    }
    match explicit.or(glob) {
        Some((file, line, value)) => BootSetting {
            file: Some(file),
            line: Some(line),
            value,
        },
        None => BootSetting {
            file: None,
            line: None,
            value: None,
        },
    }
}
