//! The runtime's file-safety policy, seen through frr_local_stanza (issue "Safe on a real
//! node", items 1, 2, 5 and the file parts of 9): masked files, links planted by another user,
//! FIFOs and devices at the path, runs through a link and the real path at once, ACLs and
//! extended attributes, leftovers of killed runs. Device nodes and mounts live in a private
//! tmpfs in a private mount namespace; nothing of the host's /dev, /etc or /run is touched.

use deevnet_runtime::test_support::module_run;
use module_run::{in_private_mounts, is_root, run_for};
use serde_json::{json, Value};
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BINARY: &str = env!("CARGO_BIN_EXE_frr_local_stanza");
const NOBODY: u32 = 65534;

fn vrf(name: &str) -> Value {
    json!({"header": format!("vrf {name}"), "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]})
}

fn run(args: &Value) -> Value {
    run_for(BINARY, args, Duration::from_secs(20)).expect("the module did not finish in 20 s")
}

/// The standard output of `script` run in a private mount namespace.
fn stdout_in_private_mounts(script: &str) -> String {
    String::from_utf8_lossy(&in_private_mounts(script).stdout).into_owned()
}

/// Item 1: `frr.conf.local -> /dev/null` (systemd's masking). The null device is made by
/// mknod in a private tmpfs, so the host's /dev/null is never at risk. Was: the module
/// reported changed and replaced the device node with a regular file.
#[test]
fn a_masked_file_is_reported_and_dev_null_survives() {
    if !is_root() {
        eprintln!("skipped: mknod and mounts need root (make test runs as root)");
        return;
    }
    let mount = tempfile::tempdir().unwrap();
    let m = mount.path().display().to_string();
    let args_dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for check_mode in [true, false] {
        let args = json!({"path": format!("{m}/etc/frr.conf.local"), "stanzas": [vrf("vrf_a")],
                          "_ansible_check_mode": check_mode});
        let args_file = args_dir.path().join(format!("args-{check_mode}.json"));
        fs::write(&args_file, args.to_string()).unwrap();
        let script = format!(
            "set -e; mount -t tmpfs -o mode=0755 tmpfs {m}; mkdir {m}/dev {m}/etc; \
             mknod -m 0666 {m}/dev/null c 1 3; ln -s {m}/dev/null {m}/etc/frr.conf.local; \
             {BINARY} {args} || true; echo '=='; stat -c '%F %t:%T' {m}/dev/null; ls -A {m}/etc",
            args = args_file.display()
        );
        outputs.push(stdout_in_private_mounts(&script));
    }
    for stdout in outputs {
        let parts: Vec<&str> = stdout.split("==\n").collect();
        assert_eq!(parts.len(), 2, "{stdout}");
        let result: Value = serde_json::from_str(parts[0].trim()).unwrap();
        assert_eq!(result["failed"], json!(true), "{result}");
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.contains("frr.conf.local is masked (a link to /dev/null)")
                && msg.contains("unmask it (remove the link)")
                && msg.contains("nothing was changed"),
            "{msg}"
        );
        let mut lines = parts[1].lines();
        assert_eq!(lines.next(), Some("character special file 1:3"), "{stdout}");
        assert_eq!(lines.collect::<Vec<_>>(), ["frr.conf.local"], "{stdout}");
    }
    assert!(fs::read_dir(mount.path()).unwrap().next().is_none());
}

/// Item 2: /etc/frr belongs to user `frr`; a link planted there by that user (or owned by it)
/// must not make the health check print another file's lines, nor `lint: warn` append
/// stanzas to it.
#[test]
fn a_link_another_user_could_plant_is_neither_read_nor_written() {
    if !is_root() {
        eprintln!("skipped: files of another owner need root (make test runs as root)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let secret = root.path().join("secret");
    // Lines the lint reports back verbatim on the old code.
    let secret_text =
        "password SECRET-VALUE-42\nrouter bgp 1\n neighbor x password SECRET-VALUE-42\n";
    fs::write(&secret, secret_text).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();

    // (a) the folder of the link belongs to another user, the link to root;
    let etc_frr = root.path().join("frr");
    fs::create_dir(&etc_frr).unwrap();
    std::os::unix::fs::chown(&etc_frr, Some(NOBODY), Some(NOBODY)).unwrap();
    let in_their_folder = etc_frr.join("frr.conf.local");
    symlink(&secret, &in_their_folder).unwrap();
    // (b) the link itself belongs to another user, in root's folder.
    let theirs = root.path().join("theirs.conf.local");
    symlink(&secret, &theirs).unwrap();
    std::os::unix::fs::lchown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();

    for (link, owner_said) in [
        (
            &in_their_folder,
            format!("the folder {} is owned by", etc_frr.display()),
        ),
        (
            &theirs,
            format!("the link {} is owned by", theirs.display()),
        ),
    ] {
        for args in [
            json!({"path": link}),
            json!({"path": link, "lint": "warn", "stanzas": [vrf("vrf_x")]}),
        ] {
            let result = run(&args);
            let text = result.to_string();
            assert_eq!(result["failed"], json!(true), "{text}");
            let msg = result["msg"].as_str().unwrap();
            assert!(
                msg.contains(&owner_said)
                    && msg.contains(&format!("(uid {NOBODY})"))
                    && msg.contains("follow_untrusted_links=true"),
                "{msg}"
            );
            assert!(!text.contains("SECRET-VALUE"), "the secret leaked: {text}");
            assert_eq!(fs::read_to_string(&secret).unwrap(), secret_text);
        }
    }
    // On purpose: the option follows it.
    let result = run(&json!({"path": theirs, "follow_untrusted_links": true, "lint": "off"}));
    assert!(result.get("failed").is_none(), "{result}");
}

/// Item 2 / 9: a FIFO at the path hung the module forever while it held the lock; a link to
/// a zero device grew its memory without bound. Both are refused at once, naming what they are.
#[test]
fn a_fifo_or_a_device_at_the_path_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("frr.conf.local");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let result = run_for(BINARY, &json!({"path": fifo}), Duration::from_secs(10))
        .expect("the module hung on a FIFO");
    let msg = result["msg"].as_str().unwrap_or_default();
    assert!(
        msg.contains("is a FIFO (named pipe), not a regular file")
            && msg.contains(&format!("path={}", fifo.display())),
        "{result}"
    );
    if !is_root() {
        eprintln!("device part skipped: mknod needs root");
        return;
    }
    // A root-owned link to a zero device (mknod in a private tmpfs); the old code read it to
    // exhaustion, so the address space is capped to keep that from hurting the host.
    let mount = tempfile::tempdir().unwrap();
    let m = mount.path().display().to_string();
    let args_file = dir.path().join("args.json");
    fs::write(
        &args_file,
        json!({"path": format!("{m}/frr.conf.local")}).to_string(),
    )
    .unwrap();
    let script = format!(
        "set -e; mount -t tmpfs -o mode=0755 tmpfs {m}; mknod -m 0666 {m}/zero c 1 5; \
         ln -s {m}/zero {m}/frr.conf.local; ulimit -v 2000000; timeout 20 {BINARY} {} || true",
        args_file.display()
    );
    let stdout = stdout_in_private_mounts(&script);
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON result ({e}): {stdout}"));
    let msg = result["msg"].as_str().unwrap_or_default();
    assert!(
        msg.contains("which is a character device, not a regular file"),
        "{result}"
    );
}

fn start(args: &Value, dir: &Path, name: &str) -> Child {
    let file = dir.join(format!("{name}.json"));
    fs::write(&file, args.to_string()).unwrap();
    Command::new(BINARY)
        .arg(file)
        .env("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS", "15")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Item 5: the lock was taken on the link's folder while the file written lives in the
/// target's folder; 10 + 10 parallel runs through a link and the real path kept 13-15 of 20.
#[test]
fn runs_through_a_link_and_the_real_path_serialise() {
    let root = tempfile::tempdir().unwrap();
    let real_dir = root.path().join("real");
    let link_dir = root.path().join("links");
    fs::create_dir(&real_dir).unwrap();
    fs::create_dir(&link_dir).unwrap();
    let real = real_dir.join("frr.conf.local");
    let link = link_dir.join("frr.conf.local");
    fs::write(&real, "").unwrap();
    symlink("../real/frr.conf.local", &link).unwrap();
    let args_dir = tempfile::tempdir().unwrap();
    let mut children = Vec::new();
    for i in 0..10 {
        for (path, side) in [(&link, "l"), (&real, "r")] {
            let args = json!({"path": path, "stanzas": [vrf(&format!("vrf_{side}{i}"))], "lock_timeout": 120});
            children.push(start(&args, args_dir.path(), &format!("{side}{i}")));
        }
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["changed"], json!(true), "{result}");
    }
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = fs::read_to_string(&real).unwrap();
    let kept = (0..10)
        .flat_map(|i| [format!("vrf vrf_l{i}\n"), format!("vrf vrf_r{i}\n")])
        .filter(|header| text.contains(header.as_str()))
        .count();
    assert_eq!(kept, 20, "{kept} of 20 stanzas kept:\n{text}");
}

fn set_xattr(path: &Path, name: &str, value: &[u8]) {
    let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
    let c_name = CString::new(name).unwrap();
    // SAFETY: NUL-terminated strings and a value valid for its length.
    let rc = unsafe {
        libc::setxattr(
            c_path.as_ptr(),
            c_name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    assert_eq!(
        rc,
        0,
        "setxattr {name}: {}",
        std::io::Error::last_os_error()
    );
}

fn get_xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
    let c_name = CString::new(name).unwrap();
    let mut buf = vec![0u8; 4096];
    // SAFETY: NUL-terminated strings and a buffer valid for its length.
    let n = unsafe {
        libc::getxattr(
            c_path.as_ptr(),
            c_name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (n >= 0).then(|| {
        buf.truncate(n as usize);
        buf
    })
}

/// A POSIX ACL in the kernel's xattr form: owner rw, user 4242 r, group r, mask r, other none.
fn acl_with_user_4242() -> Vec<u8> {
    let mut acl = 2u32.to_le_bytes().to_vec(); // POSIX_ACL_XATTR_VERSION
    for (tag, perm, id) in [
        (0x01u16, 6u16, u32::MAX), // ACL_USER_OBJ
        (0x02, 4, 4242),           // ACL_USER
        (0x04, 4, u32::MAX),       // ACL_GROUP_OBJ
        (0x10, 4, u32::MAX),       // ACL_MASK
        (0x20, 0, u32::MAX),       // ACL_OTHER
    ] {
        acl.extend_from_slice(&tag.to_le_bytes());
        acl.extend_from_slice(&perm.to_le_bytes());
        acl.extend_from_slice(&id.to_le_bytes());
    }
    acl
}

/// Item 9: POSIX ACLs and extended attributes were dropped on rewrite.
#[test]
fn the_rewrite_keeps_acls_and_extended_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frr.conf.local");
    fs::write(&path, "").unwrap();
    let acl = acl_with_user_4242();
    set_xattr(&path, "system.posix_acl_access", &acl);
    set_xattr(&path, "user.deevnet.test", b"kept");
    let result = run(&json!({"path": path, "stanzas": [vrf("vrf_a")]}));
    assert_eq!(result["changed"], json!(true), "{result}");
    assert!(fs::read_to_string(&path).unwrap().contains("vrf vrf_a\n"));
    assert_eq!(
        get_xattr(&path, "system.posix_acl_access").as_deref(),
        Some(acl.as_slice()),
        "the ACL was dropped"
    );
    assert_eq!(
        get_xattr(&path, "user.deevnet.test").as_deref(),
        Some(&b"kept"[..]),
        "the extended attribute was dropped"
    );
}

/// Item 9: a kill -9 between the temp file's creation and the rename left
/// `.NAME.PID.N.tmp` forever. The next run removes a dead run's, never a live process's.
#[test]
fn a_dead_runs_temp_file_is_removed_and_a_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frr.conf.local");
    fs::write(&path, "").unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead_pid = gone.id();
    gone.wait().unwrap();
    let mut alive = Command::new("sleep").arg("60").spawn().unwrap();
    let dead = dir.path().join(format!(".frr.conf.local.{dead_pid}.0.tmp"));
    let live = dir
        .path()
        .join(format!(".frr.conf.local.{}.0.tmp", alive.id()));
    let other = dir.path().join(format!(".other.conf.{dead_pid}.0.tmp"));
    for leftover in [&dead, &live, &other] {
        fs::write(leftover, "half").unwrap();
    }
    let result = run(&json!({"path": path, "stanzas": [vrf("vrf_a")]}));
    let _ = alive.kill();
    let _ = alive.wait();
    assert_eq!(result["changed"], json!(true), "{result}");
    assert!(!dead.exists(), "a dead run's temp file was left");
    assert!(live.exists(), "a live process's temp file was removed");
    assert!(other.exists(), "another file's temp file was removed");
}

/// Item 9: `path: ""` passed check mode and failed the real run; a folder as path likewise.
#[test]
fn an_empty_or_folder_path_fails_in_check_mode_as_in_the_real_run() {
    let dir = tempfile::tempdir().unwrap();
    for (path, said) in [
        (
            String::new(),
            "argument 'path' is '': an empty path names no file".to_string(),
        ),
        (
            dir.path().display().to_string(),
            format!("path={} is a folder", dir.path().display()),
        ),
    ] {
        for check_mode in [true, false] {
            let result = run(&json!({"path": path, "stanzas": [vrf("vrf_a")],
                                     "_ansible_check_mode": check_mode}));
            assert_eq!(
                result["failed"],
                json!(true),
                "check_mode={check_mode}: {result}"
            );
            let msg = result["msg"].as_str().unwrap();
            assert!(msg.contains(&said), "check_mode={check_mode}: {msg}");
        }
    }
    assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
}
