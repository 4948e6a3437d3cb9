//! The runtime's file-safety policy, seen through sysctl_forwarding (issue "Safe on a real
//! node", items 1, 4 and the file parts of 9): a masked sysctl.d file, a lock another user
//! holds on /etc/sysctl.d, a FIFO among the files of the boot scan, an empty path in check
//! mode. Device nodes and mounts live in a private tmpfs in a private mount namespace, runtime
//! values in a network namespace of the test's own; nothing of the host's /dev, /etc, /run or
//! /proc/sys is touched.

use deevnet_runtime::test_support::module_run;
use deevnet_runtime::test_support::TestNamespace;
use module_run::{in_private_mounts, is_root, run_for};
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_sysctl_forwarding");
const NAME: &str = "90-deevnet-tenant-fabric.conf";

/// Arguments that touch only `dir`: the file there, no runtime change.
fn file_only(dir: &Path) -> Value {
    json!({"path": dir.join(NAME), "sysctl_dirs": [dir], "apply": false})
}

/// `dir/args.json` with [`file_only`] arguments for a new folder `dir/etc`: both paths.
fn args_for_a_work_folder(dir: &Path) -> (PathBuf, PathBuf) {
    let args_file = dir.join("args.json");
    let work = dir.join("etc");
    fs::create_dir(&work).unwrap();
    fs::write(&args_file, file_only(&work).to_string()).unwrap();
    (args_file, work)
}

/// Item 1: `/etc/sysctl.d/90-deevnet-tenant-fabric.conf -> /dev/null` (systemd's masking),
/// with an interface to make forward. Was: reported changed, replaced the device node with a
/// regular file and set forwarding. Now: a clear failure in check mode and in the real run,
/// the device node as it was, forwarding untouched.
#[test]
fn a_masked_file_is_reported_and_nothing_is_done() {
    if !is_root() {
        eprintln!("skipped: namespaces and mknod need root (make test runs as root)");
        return;
    }
    let netns = TestNamespace::new("dvn-fs");
    netns.ip("link add vmbr0.50 type veth peer name peer0");
    let mount = tempfile::tempdir().unwrap();
    let m = mount.path().display().to_string();
    let args_dir = tempfile::tempdir().unwrap();
    for check_mode in [true, false] {
        let args = json!({"path": format!("{m}/etc/{NAME}"), "sysctl_dirs": [format!("{m}/etc")],
                          "interfaces": ["vmbr0.50"], "_ansible_check_mode": check_mode});
        let args_file = args_dir.path().join("args.json");
        fs::write(&args_file, args.to_string()).unwrap();
        let script = format!(
            "set -e; mount -t tmpfs -o mode=0755 tmpfs {m}; mkdir {m}/dev {m}/etc; \
             mknod -m 0666 {m}/dev/null c 1 3; ln -s {m}/dev/null {m}/etc/{NAME}; \
             echo 0 > /proc/sys/net/ipv4/conf/vmbr0.50/forwarding; \
             {BINARY} {args} || true; echo '=='; stat -c '%F %t:%T' {m}/dev/null; \
             cat /proc/sys/net/ipv4/conf/vmbr0.50/forwarding",
            args = args_file.display()
        );
        let out = netns
            .command("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let parts: Vec<&str> = stdout.split("==\n").collect();
        assert_eq!(
            parts.len(),
            2,
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: Value = serde_json::from_str(parts[0].trim()).unwrap();
        assert_eq!(
            result["failed"],
            json!(true),
            "check_mode={check_mode}: {result}"
        );
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.contains(&format!(
                "path={m}/etc/{NAME} is masked (a link to /dev/null)"
            )) && msg.contains("unmask it (remove the link) or give another path")
                && msg.contains("nothing was changed"),
            "{msg}"
        );
        assert_eq!(
            parts[1], "character special file 1:3\n0\n",
            "check_mode={check_mode}: the device node or forwarding changed"
        );
    }
    assert!(fs::read_dir(mount.path()).unwrap().next().is_none());
}

/// Item 4: the lock was a flock on the target's folder, so any user who can read
/// /etc/sysctl.d (everyone) blocked every run with `flock -x /etc/sysctl.d sleep 600`.
#[test]
fn a_lock_another_user_holds_on_the_folder_blocks_nothing() {
    if !is_root() {
        eprintln!("skipped: dropping to another user needs root (make test runs as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    // `nobody` takes the folder's lock and keeps it; its own process group, ended by its id.
    let mut holder = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["flock", "--exclusive"])
        .arg(dir.path())
        .args(["sleep", "60"])
        .process_group(0)
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let free = Command::new("flock")
            .args(["--nonblock", "--shared"])
            .arg(dir.path())
            .arg("true")
            .status()
            .unwrap()
            .success();
        if !free {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "nobody never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut args = file_only(dir.path());
    args["lock_timeout"] = json!(1);
    let result = run_for(BINARY, &args, Duration::from_secs(20));
    // SAFETY: kill(2) on the process group this test made.
    unsafe { libc::kill(-(holder.id() as i32), libc::SIGKILL) };
    let _ = holder.wait();
    let result = result.expect("the module did not finish");
    assert!(result.get("failed").is_none(), "{result}");
    assert_eq!(result["changed"], json!(true), "{result}");
    assert!(dir.path().join(NAME).exists());
}

/// The lock's real home: `/run/lock/deevnet.net/<hash>.lock`, folder 0700 and file 0600,
/// root's; a run as another user locks in `/run/lock/deevnet.net-<uid>/`, its own and 0700
/// (tests see it on a tmpfs mounted over /run/lock in a private mount namespace).
#[test]
fn the_lock_lives_in_a_folder_only_its_user_can_open_under_run_lock() {
    if !is_root() {
        eprintln!("skipped: mounts need root (make test runs as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args_file, _) = args_for_a_work_folder(dir.path());
    let theirs = file_only(Path::new("/run/lock/work")).to_string();
    let script = format!(
        "set -e; mount -t tmpfs -o mode=1777 tmpfs /run/lock; export DEEVNET_TEST_LOCK_ROOT=; \
         {BINARY} {} >/dev/null; \
         mkdir /run/lock/work; chown 65534:65534 /run/lock/work; printf '%s' '{theirs}' > /run/lock/work/args.json; \
         setpriv --reuid=65534 --regid=65534 --clear-groups {BINARY} /run/lock/work/args.json >/dev/null; \
         stat -c '%n %a %U %F' /run/lock/deevnet.net /run/lock/deevnet.net/*.lock \
           /run/lock/deevnet.net-65534 /run/lock/deevnet.net-65534/*.lock /run/lock/work/{NAME}",
        args_file.display()
    );
    let out = in_private_mounts(&script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        5,
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines[0], "/run/lock/deevnet.net 700 root directory");
    assert!(
        lines[1].starts_with("/run/lock/deevnet.net/")
            && lines[1].ends_with(".lock 600 root regular empty file"),
        "{stdout}"
    );
    assert_eq!(lines[2], "/run/lock/deevnet.net-65534 700 nobody directory");
    assert!(
        lines[3].starts_with("/run/lock/deevnet.net-65534/")
            && lines[3].ends_with(".lock 600 nobody regular empty file"),
        "{stdout}"
    );
    assert!(lines[4].ends_with(" nobody regular file"), "{stdout}");
}

/// A container whose `/run` is an empty tmpfs has no `/run/lock`: the lock goes to
/// `/run/deevnet.net` (tests: a tmpfs over /run in a private mount namespace).
#[test]
fn without_run_lock_the_lock_lives_under_run() {
    if !is_root() {
        eprintln!("skipped: mounts need root (make test runs as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args_file, work) = args_for_a_work_folder(dir.path());
    let script = format!(
        "set -e; mount -t tmpfs -o mode=0755 tmpfs /run; \
         DEEVNET_TEST_LOCK_ROOT= {BINARY} {} >/dev/null; ls -A /run; stat -c '%a %U' /run/deevnet.net",
        args_file.display()
    );
    let out = in_private_mounts(&script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "deevnet.net\n700 root\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(work.join(NAME).exists());
}

/// Item 9: a FIFO `*.conf` in `sysctl_dirs` hung the boot scan forever. Now the scan goes on,
/// and the warning names the file and what it is; an untrusted link there is named too.
#[test]
fn a_fifo_or_an_untrusted_link_in_the_boot_scan_is_reported_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("50-fifo.conf");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    fs::write(open.join("x"), "net.ipv4.conf.all.forwarding = 0\n").unwrap();
    symlink(open.join("x"), dir.path().join("95-planted.conf")).unwrap();
    let result = run_for(BINARY, &file_only(dir.path()), Duration::from_secs(10))
        .expect("the boot scan hung on a FIFO");
    assert!(result.get("failed").is_none(), "{result}");
    let warnings = result["warnings"].to_string();
    assert!(
        warnings.contains(&format!(
            "sysctl_dirs={} is a FIFO (named pipe), not a regular file",
            fifo.display()
        )),
        "{result}"
    );
    assert!(
        warnings
            .contains("95-planted.conf is a link that another user than root could have planted")
            && warnings.contains("left out of the boot check"),
        "{result}"
    );
}

/// Runs the module on `path` (sysctl_dirs `dir`, no runtime change) in check mode and for
/// real: both fail alike, with a message that holds each of `said`, and nothing is written.
fn refused_in_check_mode_and_for_real(dir: &Path, path: &str, said: &[String]) {
    for check_mode in [true, false] {
        let args = json!({"path": path, "sysctl_dirs": [dir], "apply": false,
                          "_ansible_check_mode": check_mode});
        let result = run_for(BINARY, &args, Duration::from_secs(20)).unwrap();
        assert_eq!(
            result["failed"],
            json!(true),
            "path {path:?} check_mode={check_mode}: {result}"
        );
        let msg = result["msg"].as_str().unwrap();
        for part in said {
            assert!(
                msg.contains(part.as_str()),
                "path {path:?} check_mode={check_mode}: {msg}"
            );
        }
    }
    assert!(fs::read_dir(dir).unwrap().next().is_none());
}

/// Item 9: `path: ""` passed check mode and failed the real run; now both fail alike, as do
/// a folder and a path whose folder is missing.
#[test]
fn an_empty_folder_or_homeless_path_fails_in_check_mode_as_in_the_real_run() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing").join(NAME);
    for (path, said) in [
        (
            String::new(),
            "argument 'path' is '': an empty path names no file".to_string(),
        ),
        (
            dir.path().display().to_string(),
            format!("path={} is a folder", dir.path().display()),
        ),
        (
            missing.display().to_string(),
            format!(
                "the folder {} does not exist",
                dir.path().join("missing").display()
            ),
        ),
    ] {
        refused_in_check_mode_and_for_real(dir.path(), &path, &[said]);
    }
}

/// Issue 29 item 9: a managed path systemd-sysctl never reads (no `.conf`, or hidden) was
/// written and reported as the boot-time winner, while forwarding was lost at the next boot.
/// Now: refused in check mode and in the real run, naming the parameter, the value and the
/// rule, and nothing is written.
#[test]
fn a_path_systemd_sysctl_never_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["90-deevnet-tenant-fabric", ".90-deevnet-tenant-fabric.conf"] {
        let path = dir.path().join(name).display().to_string();
        refused_in_check_mode_and_for_real(
            dir.path(),
            &path,
            &[
                format!("path: '{path}' is never read at boot"),
                "systemd-sysctl reads only *.conf files (not hidden ones) in /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d".to_string(),
                format!(
                    "e.g. {}",
                    dir.path().join("90-deevnet-tenant-fabric.conf").display()
                ),
            ],
        );
    }
}
