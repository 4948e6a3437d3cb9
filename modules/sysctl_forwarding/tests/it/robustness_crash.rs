//! Crash consistency and faults of the host while sysctl_forwarding writes its sysctl.d file:
//! SIGKILL at random points, a full disk, an interface that disappears mid-run.

use deevnet_runtime::test_support::{kill9, module_run};
use module_run::{in_private_mounts, is_root};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_sysctl_forwarding"))
}

/// Arguments that touch only `dir`: the file there, no runtime change.
fn file_only_args(dir: &Path) -> Value {
    json!({"path": dir.join("90-deevnet-tenant-fabric.conf"), "sysctl_dirs": [dir],
           "apply": false, "rp_filter": {"vmbr0.50": 2}})
}

/// The arguments file, the target, its old content and the content the module writes.
fn crash_setup(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, &'static str, String) {
    let args_file = dir.join("args.json");
    fs::write(&args_file, file_only_args(dir).to_string()).unwrap();
    let target = dir.join("90-deevnet-tenant-fabric.conf");
    let old = "# written by hand\nnet.ipv4.conf.all.forwarding = 1\n";
    // The new content: the module's own rendering of the same options.
    let rp = std::collections::BTreeMap::from([("vmbr0.50".to_string(), 2u8)]);
    let new = sysctl_forwarding::managed_file::render(
        &sysctl_forwarding::managed_file::desired_settings(false, &[], &rp, &[]),
    );
    (args_file, target, old, new)
}

#[test]
fn kill_9_at_random_points_leaves_the_old_or_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let (args_file, target, old, new) = crash_setup(dir.path());
    kill9::kill_during_writes(binary(), &args_file, &target, old, &new, 60);
}

/// `make soak`: SOAK_TRIALS (default 10,000) kills; the count of partial or lost files is 0.
#[test]
#[ignore = "long: run by `make soak`"]
fn soak_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let (args_file, target, old, new) = crash_setup(dir.path());
    kill9::soak(
        "sysctl_forwarding",
        binary(),
        &args_file,
        &target,
        old,
        &new,
    );
}

/// A full disk (a 64 KiB tmpfs, filled, in a private mount namespace): the write fails with
/// the reason, the old file stays as it was, no temporary file is left.
#[test]
fn a_full_disk_fails_clearly_and_leaves_the_old_file() {
    if !is_root() {
        eprintln!("skipped: mounting a tmpfs needs root (make test runs as root)");
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let mount = tempfile::tempdir().unwrap();
    let m = mount.path().display();
    let args_file = outside.path().join("args.json");
    fs::write(&args_file, file_only_args(mount.path()).to_string()).unwrap();
    let script = format!(
        "set -e; mount -t tmpfs -o size=64k,mode=0755 tmpfs {m}; printf 'old\\n' > {m}/90-deevnet-tenant-fabric.conf; \
         chmod 0640 {m}/90-deevnet-tenant-fabric.conf; cat /dev/zero > {m}/fill 2>/dev/null || true; \
         {bin} {args} || true; echo '=='; cat {m}/90-deevnet-tenant-fabric.conf; echo '=='; stat -c %a {m}/90-deevnet-tenant-fabric.conf; ls -A {m}",
        bin = binary().display(),
        args = args_file.display()
    );
    let out = in_private_mounts(&script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parts: Vec<&str> = stdout.split("==\n").collect();
    assert_eq!(
        parts.len(),
        3,
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_str(parts[0].trim()).unwrap();
    assert_eq!(result["failed"], json!(true), "{result}");
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.contains("No space left on device"), "{msg}");
    assert!(msg.contains("90-deevnet-tenant-fabric.conf"), "{msg}");
    assert_eq!(parts[1], "old\n", "the old file changed");
    let rest: Vec<&str> = parts[2].lines().collect();
    assert_eq!(rest[0], "640", "mode changed");
    let mut left: Vec<&str> = rest[1..].to_vec();
    left.sort_unstable();
    assert_eq!(
        left,
        ["90-deevnet-tenant-fabric.conf", "fill"],
        "a temporary file was left"
    );
    // Nothing of the tmpfs leaked out of the private namespace.
    assert!(fs::read_dir(mount.path()).unwrap().next().is_none());
}

/// An interface deleted after the module checked it and while it writes the file (the pause
/// hook holds it between the fsync and the rename): the run fails naming the key, the file is
/// complete, and nothing half-written is left.
#[test]
fn an_interface_that_disappears_mid_run_fails_clearly() {
    if !is_root() {
        eprintln!("skipped: network namespaces need root (make test runs as root)");
        return;
    }
    let netns = format!("dvn-rb-{}", std::process::id());
    let ip = |args: &[&str]| {
        let status = Command::new("ip").args(args).status().unwrap();
        assert!(status.success(), "ip {args:?}");
    };
    ip(&["netns", "add", &netns]);
    struct Cleanup(String);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
        }
    }
    let _cleanup = Cleanup(netns.clone());
    ip(&[
        "-n", &netns, "link", "add", "vmbr0.50", "type", "veth", "peer", "name", "peer0",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("90-deevnet-tenant-fabric.conf");
    let args = json!({"path": target, "sysctl_dirs": [dir.path()], "interfaces": ["vmbr0.50"]});
    let args_file = dir.path().join("args.json");
    fs::write(&args_file, args.to_string()).unwrap();
    let child = Command::new("ip")
        .args(["netns", "exec", &netns])
        .arg(binary())
        .arg(&args_file)
        .env("DEEVNET_TEST_PAUSE_BEFORE_RENAME_MS", "1500")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    kill9::wait_until_writing(dir.path(), "the module");
    ip(&["-n", &netns, "link", "del", "vmbr0.50"]);
    let out = child.wait_with_output().unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["failed"], json!(true), "{result}");
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.contains("net.ipv4.conf.vmbr0/50.forwarding"), "{msg}");
    assert!(msg.contains("does not exist"), "{msg}");
    // The file is whole (the new content), and no temporary file is left.
    let text = fs::read_to_string(&target).unwrap();
    assert!(
        text.ends_with("-net.ipv4.conf.vmbr0/50.forwarding = 1\n"),
        "{text}"
    );
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}
