use crate::file_policy::*;
use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::time::Duration;

#[test]
fn lock_timeout_has_one_range_and_one_message() {
    assert_eq!(lock_timeout(1).unwrap(), Duration::from_secs(1));
    assert_eq!(lock_timeout(3600).unwrap(), Duration::from_secs(3600));
    for bad in [0, -5, 3601] {
        let err = lock_timeout(bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("lock_timeout={bad} is out of range; give a number of seconds from 1 to 3600")
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

/// What a non-root user could have written is not read; root's file in root's folders is.
#[test]
fn read_trusted_refuses_what_another_user_could_have_written() {
    if !nix::unistd::geteuid().is_root() {
        return; // ownership can only be given away as root
    }
    let nobody = nix::unistd::Uid::from_raw(65534);
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("network");
    fs::create_dir(&dir).unwrap();
    let file = dir.join("interfaces");
    assert_eq!(read_trusted("interfaces_file", &file).unwrap(), None);
    fs::write(&file, "auto lo\n").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(
        read_trusted("interfaces_file", &file).unwrap().as_deref(),
        Some("auto lo\n")
    );
    let refused = |why: &str| {
        let msg = read_trusted("interfaces_file", &file)
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with(&format!(
                "interfaces_file={} could have been written by another user than root ({why}",
                file.display()
            )),
            "{msg}"
        );
    };
    fs::set_permissions(&file, fs::Permissions::from_mode(0o666)).unwrap();
    refused(&format!(
        "the file {} is writable by its group or others (mode 0666)",
        file.display()
    ));
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    nix::unistd::chown(&file, Some(nobody), None).unwrap();
    refused(&format!("the file {} is owned by ", file.display()));
    nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(0)), None).unwrap();
    nix::unistd::chown(&dir, Some(nobody), None).unwrap();
    refused(&format!("the folder {} is owned by ", dir.display()));
}

#[test]
fn a_named_lock_is_taken_once_and_never_shares_a_files_lock() {
    let name = format!("a-test-name-{}", std::process::id());
    let held = FileLock::try_acquire_named(&name).unwrap().expect("free");
    assert_eq!(fs::metadata(held.path()).unwrap().mode() & 0o777, 0o600);
    assert!(
        FileLock::try_acquire_named(&name).unwrap().is_none(),
        "held by the first"
    );
    assert!(FileLock::try_acquire_named(&format!("{name}-other"))
        .unwrap()
        .is_some());
    // The same text as a file's key locks another file.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(&name);
    fs::write(&file, "").unwrap();
    let target = resolve("path", &file, false).unwrap();
    let file_lock = FileLock::acquire(&target, Duration::from_millis(100)).unwrap();
    assert_ne!(file_lock.path(), held.path());
    drop(held);
    assert!(FileLock::try_acquire_named(&name).unwrap().is_some());
}
