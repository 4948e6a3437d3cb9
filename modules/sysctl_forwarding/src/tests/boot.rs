use crate::boot::*;
use deevnet_runtime::sysctl::SysctlKey;
use std::fs;
use std::path::PathBuf;

struct Tree {
    _root: tempfile::TempDir,
    etc: PathBuf,
    usr: PathBuf,
}

fn tree() -> Tree {
    let root = tempfile::tempdir().unwrap();
    let etc = root.path().join("etc/sysctl.d");
    let usr = root.path().join("usr/lib/sysctl.d");
    fs::create_dir_all(&etc).unwrap();
    fs::create_dir_all(&usr).unwrap();
    Tree {
        _root: root,
        etc,
        usr,
    }
}

fn dirs(t: &Tree) -> Vec<PathBuf> {
    vec![t.etc.clone(), t.usr.clone()]
}

const OURS: &str = "net.ipv4.conf.all.forwarding = 1\n";

#[test]
fn a_later_file_overrides_ours() {
    let t = tree();
    fs::write(
        t.usr.join("99-late.conf"),
        "net.ipv4.conf.all.forwarding = 0\n",
    )
    .unwrap();
    let own = t.etc.join("90-deevnet.conf");
    let (files, _) = config_files(&dirs(&t), (&own, Some(OURS)), false);
    let setting = setting_of(&files, &SysctlKey::ipv4_conf("all", "forwarding"));
    assert_eq!(
        setting.file.as_deref(),
        Some(t.usr.join("99-late.conf").as_path())
    );
    assert_eq!(setting.value.as_deref(), Some("0"));
}

#[test]
fn an_earlier_file_loses_to_ours_and_same_names_are_masked() {
    let t = tree();
    fs::write(
        t.usr.join("10-early.conf"),
        "net.ipv4.conf.all.forwarding = 0\n",
    )
    .unwrap();
    // Masked by the /etc file of the same name, so its 0 never applies.
    fs::write(
        t.usr.join("95-x.conf"),
        "net.ipv4.conf.all.forwarding = 0\n",
    )
    .unwrap();
    fs::write(t.etc.join("95-x.conf"), "# masked\n").unwrap();
    let own = t.etc.join("90-deevnet.conf");
    let (files, _) = config_files(&dirs(&t), (&own, Some(OURS)), false);
    let setting = setting_of(&files, &SysctlKey::ipv4_conf("all", "forwarding"));
    assert_eq!(setting.file.as_deref(), Some(own.as_path()));
    assert_eq!(setting.value.as_deref(), Some("1"));
}

#[test]
fn explicit_assignments_beat_later_globs_and_exclusions_stop_globs() {
    let t = tree();
    fs::write(
        t.etc.join("99-glob.conf"),
        "net.ipv4.conf.*.forwarding = 0\n-net.ipv4.conf.default.forwarding\n",
    )
    .unwrap();
    let own = t.etc.join("90-deevnet.conf");
    let (files, _) = config_files(&dirs(&t), (&own, Some(OURS)), false);
    let all = setting_of(&files, &SysctlKey::ipv4_conf("all", "forwarding"));
    assert_eq!(all.value.as_deref(), Some("1"), "explicit wins over a glob");
    let vmbr = setting_of(&files, &SysctlKey::ipv4_conf("vmbr0.50", "forwarding"));
    assert_eq!(
        vmbr.value.as_deref(),
        Some("0"),
        "the glob reaches interfaces"
    );
    let default = setting_of(&files, &SysctlKey::ipv4_conf("default", "forwarding"));
    assert_eq!(default.value, None, "excluded");
    assert_eq!(
        default.file.as_deref(),
        Some(t.etc.join("99-glob.conf").as_path())
    );
}

#[test]
fn a_file_outside_the_search_folders_is_never_read() {
    let t = tree();
    let elsewhere = t._root.path().join("elsewhere.conf");
    let (files, _) = config_files(&dirs(&t), (&elsewhere, Some(OURS)), false);
    let setting = setting_of(&files, &SysctlKey::ipv4_conf("all", "forwarding"));
    assert_eq!(setting.file, None);
}

/// Issue 29 item 9: a name without `.conf` (or a hidden one) is never read at boot, so it
/// never wins, whether it is the managed file or another.
#[test]
fn only_visible_conf_names_are_read_at_boot() {
    let t = tree();
    fs::write(t.etc.join("99-late"), "net.ipv4.conf.all.forwarding = 0\n").unwrap();
    fs::write(
        t.etc.join(".99-hidden.conf"),
        "net.ipv4.conf.all.forwarding = 0\n",
    )
    .unwrap();
    let key = SysctlKey::ipv4_conf("all", "forwarding");
    let ours = t.etc.join("90-deevnet.conf");
    let (files, _) = config_files(&dirs(&t), (&ours, Some(OURS)), false);
    assert_eq!(
        setting_of(&files, &key).file.as_deref(),
        Some(ours.as_path())
    );
    let unread = t.etc.join("90-deevnet");
    let (files, _) = config_files(&dirs(&t), (&unread, Some(OURS)), false);
    assert_eq!(setting_of(&files, &key).file, None);
    assert!(!is_read_at_boot(".conf") && !is_read_at_boot("90-x.conf~"));
}

#[test]
fn removal_is_taken_into_account() {
    let t = tree();
    let own = t.etc.join("90-deevnet.conf");
    fs::write(&own, OURS).unwrap();
    let (files, _) = config_files(&dirs(&t), (&own, None), false);
    assert_eq!(
        setting_of(&files, &SysctlKey::ipv4_conf("all", "forwarding")).file,
        None
    );
}

#[test]
fn a_masked_file_is_empty_and_masks_the_same_name_in_later_folders() {
    let t = tree();
    fs::write(
        t.usr.join("99-late.conf"),
        "net.ipv4.conf.all.forwarding = 0\n",
    )
    .unwrap();
    // systemd's masking: only a link; /dev/null itself is looked at, never opened.
    std::os::unix::fs::symlink("/dev/null", t.etc.join("99-late.conf")).unwrap();
    let own = t.etc.join("90-deevnet.conf");
    let (files, unread) = config_files(&dirs(&t), (&own, Some(OURS)), false);
    assert!(unread.is_empty(), "{unread:?}");
    let setting = setting_of(&files, &SysctlKey::ipv4_conf("all", "forwarding"));
    assert_eq!(setting.file.as_deref(), Some(own.as_path()));
    assert_eq!(setting.value.as_deref(), Some("1"));
}
