use crate::atomic_file::*;
use crate::file_policy::resolve;
use crate::file_policy::Target;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

fn target(path: &Path) -> Target {
    resolve("path", path, false).unwrap()
}

#[test]
fn replace_keeps_mode_and_leaves_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.conf");
    fs::write(&path, "old\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(
        replace(&target(&path), b"new\n", false, PUBLIC_FILE).unwrap(),
        None
    );
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
        replace(&target(&path), b"one\n", true, PUBLIC_FILE).unwrap(),
        None,
        "no backup of nothing"
    );
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o644);
    let backup = replace(&target(&path), b"two\n", true, PUBLIC_FILE)
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
    replace(&target(&path), b"password x\n", false, private).unwrap();
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
    replace(&target(&link), b"b\n", false, PUBLIC_FILE).unwrap();
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&real).unwrap(), "b\n");
}

#[test]
fn remove_keeps_a_backup_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.conf");
    fs::write(&path, "gone\n").unwrap();
    let backup = remove(&target(&path), true).unwrap().unwrap();
    assert!(!path.exists());
    assert_eq!(fs::read_to_string(backup).unwrap(), "gone\n");
}
