//! The built binary, run as Ansible runs it: a JSON arguments file in a temp folder, one JSON
//! result on standard output.

use assert_cmd::Command;
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub(super) struct Run {
    pub(super) result: Value,
    success: bool,
}

fn run_with_env(dir: &Path, args: Value, env: &[(&str, &str)]) -> Run {
    let args_file = dir.join("args.json");
    fs::write(&args_file, args.to_string()).unwrap();
    let mut command = Command::cargo_bin("frr_local_stanza").unwrap();
    command.arg(&args_file);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON result ({e}): {stdout}"));
    assert_eq!(
        output.status.success(),
        result.get("failed").is_none(),
        "exit status and result disagree: {result}"
    );
    Run {
        result,
        success: output.status.success(),
    }
}

pub(super) fn run(dir: &Path, args: Value) -> Run {
    run_with_env(dir, args, &[])
}

fn conf(dir: &Path) -> PathBuf {
    dir.join("frr.conf.local")
}

/// The three use cases of the issue, in the order of the portable vector.
fn use_cases() -> Value {
    json!([
        {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0"},
        {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31"},
        {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]},
        {"header": "router bgp 45689", "children": [
            {"header": "address-family ipv4 unicast", "lines": ["neighbor VTEP activate"]}]},
        {"header": "router bgp 45689 vrf vrf_evpn", "children": [
            {"header": "address-family ipv4 unicast", "lines": ["import vrf default"]}]},
    ])
}

fn portable_vector() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pve-merge/frr.conf.local.portable");
    fs::read_to_string(path).unwrap()
}

#[test]
fn the_use_cases_write_the_portable_file_then_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    let args = json!({"path": path, "stanzas": use_cases(), "asn": 45689, "_ansible_diff": true});
    let first = run(dir.path(), args.clone());
    assert!(first.success, "{}", first.result);
    assert_eq!(first.result["changed"], json!(true));
    // The vector minus its first line, the comment the vector's author added.
    let expected: String = portable_vector().split_inclusive('\n').skip(1).collect();
    assert_eq!(fs::read_to_string(&path).unwrap(), expected);
    assert_eq!(first.result["stanzas"]["vrf vrf_tdemo"], json!("added"));
    assert_eq!(first.result["lint"], json!([]));
    assert_eq!(first.result["diff"][0]["before"], json!(""));
    assert_eq!(first.result["diff"][0]["after"], json!(expected));
    let mode = fs::metadata(&path).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o640, "a new file is 0640");
    if let Ok(Some(frr)) = nix::unistd::Group::from_name("frr") {
        assert_eq!(
            fs::metadata(&path).unwrap().gid(),
            frr.gid.as_raw(),
            "group frr"
        );
    }

    let second = run(dir.path(), args);
    assert_eq!(second.result["changed"], json!(false), "{}", second.result);
    assert!(second.result.get("diff").is_none());
    let statuses: Vec<&Value> = second.result["stanzas"]
        .as_object()
        .unwrap()
        .values()
        .collect();
    assert!(statuses.iter().all(|s| *s == "unchanged"), "{statuses:?}");
}

#[test]
fn check_mode_reports_the_change_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    let check = run(
        dir.path(),
        json!({"path": path, "stanzas": use_cases(), "_ansible_check_mode": true, "_ansible_diff": true}),
    );
    assert_eq!(check.result["changed"], json!(true), "{}", check.result);
    assert!(check.result["diff"][0]["after"]
        .as_str()
        .unwrap()
        .contains("vrf vrf_tdemo\n"));
    assert!(!path.exists(), "check mode created the file");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only args.json"
    );
}

#[test]
fn an_unreadable_check_mode_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    for value in [json!("maybe"), json!(2), json!([]), json!(null)] {
        let r = run(
            dir.path(),
            json!({"path": path, "stanzas": use_cases(), "_ansible_check_mode": value}),
        );
        assert!(!r.success, "{}", r.result);
        let msg = r.result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with("_ansible_check_mode=") && msg.contains("expected a JSON boolean"),
            "{msg}"
        );
        assert!(
            !path.exists(),
            "{value} was taken as false: the file was written"
        );
    }
}

/// Issue "Safe on a real node", 7: the action plugin passes `path` through as a string, so the
/// binary expands `~` and `$VARS` as Ansible's `path` type does, with the target's HOME and
/// environment (here the test's, never the real one).
#[test]
fn path_is_expanded_on_the_target_and_an_empty_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_str().unwrap();
    let stanzas = json!([{"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]);
    let r = run_with_env(
        dir.path(),
        json!({"path": "~/frr.conf.local", "stanzas": stanzas}),
        &[("HOME", home)],
    );
    assert!(r.success, "{}", r.result);
    assert!(conf(dir.path()).exists(), "~ was not expanded to HOME");
    assert_eq!(
        r.result["invocation"]["module_args"]["path"],
        json!(conf(dir.path()))
    );
    fs::create_dir(dir.path().join("frr")).unwrap();
    let r = run_with_env(
        dir.path(),
        json!({"path": "${FRR_DIR}/frr.conf.local", "stanzas": stanzas}),
        &[("FRR_DIR", dir.path().join("frr").to_str().unwrap())],
    );
    assert!(r.success, "{}", r.result);
    assert!(
        dir.path().join("frr/frr.conf.local").exists(),
        "$FRR_DIR was not expanded"
    );

    // An empty path: the same refusal in check mode and in a real run, and nothing written.
    let listing = || {
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let mut messages = Vec::new();
    for check_mode in [true, false] {
        let r = run(
            dir.path(),
            json!({"path": "", "stanzas": stanzas, "_ansible_check_mode": check_mode}),
        );
        assert!(!r.success, "{}", r.result);
        messages.push(r.result["msg"].as_str().unwrap().to_string());
    }
    assert_eq!(messages[0], messages[1]);
    assert!(
        messages[0].starts_with(
            "argument 'path' is '': an empty path names no file or folder; give a path"
        ),
        "{}",
        messages[0]
    );
    assert_eq!(listing(), before);
}

/// A varied hand-written file: comments, TABs, CRLF-free but oddly spaced lines, stanzas of
/// every recognised kind. It lints clean, so lint=error can manage stanzas beside it.
const UNMANAGED: &str = "! Hand-written by the network team. Do not reorder.\n\
!\n\
ip prefix-list TENANTS seq 5 permit 10.20.0.0/16 le 24\n\
ip prefix-list TENANTS seq 10 deny any\n\
bgp community-list standard KEEP seq 5 permit 45689:100\n\
access-list MGMT seq 5 permit 10.0.0.0/8\n\
!\n\
interface vmbr0\n\tip ospf area 0\nexit\n\
!\n\
route-map TENANT-OUT permit 1\n match ip address prefix-list TENANTS\n set community 45689:100\nexit\n\
route-map TENANT-OUT deny 2\nexit\n\
!\n\
router bgp 45689 vrf vrf_evpn\n   # kept as written\n address-family ipv4 unicast\n  redistribute connected\n exit-address-family\nexit\n\
!\n";

#[test]
fn round_trip_keeps_a_real_world_file_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    fs::write(&path, UNMANAGED).unwrap();
    let health = run(dir.path(), json!({"path": path}));
    assert!(health.success, "{}", health.result);
    assert_eq!(health.result["changed"], json!(false));
    assert_eq!(health.result["lint"], json!([]));
    let untouched = run(
        dir.path(),
        json!({"path": path, "stanzas": [{"header": "router bgp 45689 vrf vrf_evpn", "mode": "merge",
               "children": [{"header": "address-family ipv4 unicast", "lines": ["redistribute connected"]}]}]}),
    );
    assert_eq!(
        untouched.result["changed"],
        json!(false),
        "{}",
        untouched.result
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), UNMANAGED);
}

#[test]
fn add_update_remove_among_unmanaged_stanzas_keeps_every_unmanaged_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    fs::write(&path, UNMANAGED).unwrap();
    let vrf = |gateway: &str| json!({"header": "vrf vrf_tdemo", "lines": [format!("ip route 0.0.0.0/0 {gateway} nexthop-vrf default")]});

    let added = run(
        dir.path(),
        json!({"path": path, "stanzas": [vrf("10.20.50.1")], "backup": true}),
    );
    assert_eq!(
        added.result["stanzas"]["vrf vrf_tdemo"],
        json!("added"),
        "{}",
        added.result
    );
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.strip_prefix(UNMANAGED),
        Some("vrf vrf_tdemo\n ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default\nexit\n!\n")
    );
    let backup = added.result["backup_file"].as_str().unwrap();
    assert_eq!(fs::read_to_string(backup).unwrap(), UNMANAGED);

    let updated = run(
        dir.path(),
        json!({"path": path, "stanzas": [vrf("10.20.50.254")]}),
    );
    assert_eq!(updated.result["stanzas"]["vrf vrf_tdemo"], json!("updated"));
    assert!(updated.result.get("backup_file").is_none());
    assert!(fs::read_to_string(&path).unwrap().starts_with(UNMANAGED));

    let again = run(
        dir.path(),
        json!({"path": path, "stanzas": [vrf("10.20.50.254")]}),
    );
    assert_eq!(again.result["changed"], json!(false));

    let removed = run(
        dir.path(),
        json!({"path": path, "stanzas": [{"header": "vrf vrf_tdemo", "state": "absent"}]}),
    );
    assert_eq!(removed.result["stanzas"]["vrf vrf_tdemo"], json!("removed"));
    assert_eq!(fs::read_to_string(&path).unwrap(), UNMANAGED);
}

#[test]
fn an_existing_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    fs::write(&path, "").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let out = run(
        dir.path(),
        json!({"path": path, "stanzas": [{"header": "vrf v", "lines": ["ip route 10.0.0.0/8 10.0.0.1"]}]}),
    );
    assert!(out.success, "{}", out.result);
    assert_eq!(fs::metadata(&path).unwrap().mode() & 0o7777, 0o600);
}

/// Every way the task can be refused: `failed`, the reason named, and the file as it was.
#[test]
fn bad_input_fails_clearly_and_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    let original = "vrf vrf_tdemo\n ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default\nexit\n";
    let vrf_line = |line: &str| json!([{"header": "vrf vrf_tdemo", "lines": [line]}]);
    let cases: Vec<(Value, &str)> = vec![
        (json!([{"header": "ip route 0.0.0.0/0 10.20.50.1 vrf vrf_tdemo nexthop-vrf default"}]), "stanzas[0].header='ip route 0.0.0.0/0 10.20.50.1 vrf vrf_tdemo nexthop-vrf default' is refused (top-level-route)"),
        (json!([{"header": "ip prefix-list LEAK permit 0.0.0.0/0"}]), "(list-without-seq)"),
        (vrf_line("ip route 10.0.0.0/8 10.0.0.1 ! tenant b"), "stanzas[0].lines[0]='ip route 10.0.0.0/8 10.0.0.1 ! tenant b' holds `!`"),
        (vrf_line("end"), "stanzas[0].lines[0]='end'"),
        (json!([{"header": "vrf vrf_tdemo", "lines": ["x"], "children": [{"header": "address-family ipv4 unicast", "lines": ["y"]}]}]), "stanzas[0].children: a vrf stanza has no nested stanzas"),
        (json!([{"header": "vrf vrf_tdemo"}]), "stanzas[0]: `vrf vrf_tdemo` has an empty body"),
        (json!([{"header": "vrf a", "lines": ["x"]}, {"header": "vrf a", "lines": ["y"]}]), "stanzas[1].header='vrf a': stanzas[0] names the same stanza"),
        (json!([{"header": "router bgp 65000", "lines": ["neighbor X peer-group"]}]), "ASN 65000 differs from asn=45689"),
        (json!([{"header": "router bgp 45689", "children": [{"header": "address-family ipv4 unicast", "lines": ["x"], "children": []}]}]), "children found in stanzas[0].children[0]"),
        (json!([{"header": "vrf vrf_tdemo", "lines": ["x"], "mode": "replace"}]), "value of stanzas[0].mode must be one of: exact, merge, got: replace"),
    ];
    for (stanzas, expected) in cases {
        fs::write(&path, original).unwrap();
        let out = run(
            dir.path(),
            json!({"path": path, "stanzas": stanzas, "asn": 45689}),
        );
        assert!(!out.success, "accepted: {stanzas}");
        let msg = out.result["msg"].as_str().unwrap();
        assert!(msg.contains(expected), "{msg}\nexpected: {expected}");
        assert_eq!(fs::read_to_string(&path).unwrap(), original, "{stanzas}");
    }
}

#[test]
fn a_folder_path_and_an_unreadable_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("frr.conf.local");
    fs::create_dir(&folder).unwrap();
    let out = run(dir.path(), json!({"path": folder, "stanzas": use_cases()}));
    assert!(
        out.result["msg"]
            .as_str()
            .unwrap()
            .contains("is a folder; give the path of a file"),
        "{}",
        out.result
    );

    let path = dir.path().join("binary.conf");
    fs::write(&path, b"vrf a\n\xff\xfe\n").unwrap();
    let out = run(dir.path(), json!({"path": path}));
    assert!(
        out.result["msg"]
            .as_str()
            .unwrap()
            .contains("is not UTF-8 text"),
        "{}",
        out.result
    );
    assert_eq!(fs::read(&path).unwrap(), b"vrf a\n\xff\xfe\n");
}

#[test]
fn a_broken_existing_file_fails_the_health_check_and_any_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    // A context left open at the end, and a top-level route: findings, not a crash.
    let broken = "ip route 0.0.0.0/0 10.20.50.1 vrf vrf_tdemo nexthop-vrf default\nrouter bgp 45689\n neighbor VTEP bfd\n";
    fs::write(&path, broken).unwrap();
    let health = run(dir.path(), json!({"path": path}));
    assert!(!health.success);
    let rules: Vec<(&Value, &Value)> = health.result["lint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (&f["line"], &f["rule"]))
        .collect();
    assert_eq!(
        rules,
        [
            (&json!(1), &json!("top-level-route")),
            (&json!(2), &json!("unterminated-block"))
        ]
    );
    assert!(health.result["msg"]
        .as_str()
        .unwrap()
        .contains("line 1: top-level-route"));

    let change = run(
        dir.path(),
        json!({"path": path, "stanzas": [{"header": "vrf b", "lines": ["ip route 10.0.0.0/8 10.0.0.1"]}]}),
    );
    assert!(!change.success);
    assert_eq!(fs::read_to_string(&path).unwrap(), broken);

    // lint=warn writes, and says what is wrong as warnings.
    let warned = run(
        dir.path(),
        json!({"path": path, "lint": "warn", "stanzas": [{"header": "vrf b", "lines": ["ip route 10.0.0.0/8 10.0.0.1"]}]}),
    );
    assert!(warned.success, "{}", warned.result);
    assert_eq!(warned.result["changed"], json!(true));
    let warnings = warned.result["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("line 1: top-level-route")),
        "{warnings:?}"
    );
    // Fixing the file through the module makes it pass again.
    let fixed = run(
        dir.path(),
        json!({"path": path, "lint": "off", "stanzas": [
            {"header": "ip route 0.0.0.0/0 10.20.50.1 vrf vrf_tdemo nexthop-vrf default", "state": "absent"},
            {"header": "router bgp 45689", "lines": ["neighbor VTEP bfd"]}]}),
    );
    assert!(fixed.success, "{}", fixed.result);
    let health = run(dir.path(), json!({"path": path}));
    assert!(health.success, "{}", health.result);
}

#[test]
fn validate_runs_on_the_staged_file_before_the_real_one_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    fs::write(&path, "").unwrap();
    let stanzas = json!([{"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]);

    let refused = run(
        dir.path(),
        json!({"path": path, "stanzas": stanzas, "validate": "grep -q 'no such text' %s"}),
    );
    assert!(
        refused.result["msg"]
            .as_str()
            .unwrap()
            .contains("refused the new file"),
        "{}",
        refused.result
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "");

    let printed = run(
        dir.path(),
        json!({"path": path, "stanzas": stanzas, "validate": "sh -c 'echo \"% Unknown command: x\"' %s"}),
    );
    assert!(printed.result["msg"]
        .as_str()
        .unwrap()
        .contains("exited 0 but printed `Unknown command`"));
    assert_eq!(fs::read_to_string(&path).unwrap(), "");

    let accepted = run(
        dir.path(),
        json!({"path": path, "stanzas": stanzas, "validate": "grep -q '^vrf vrf_tdemo$' %s"}),
    );
    assert!(accepted.success, "{}", accepted.result);
    assert!(fs::read_to_string(&path)
        .unwrap()
        .starts_with("vrf vrf_tdemo\n"));

    let no_placeholder = run(
        dir.path(),
        json!({"path": path, "stanzas": stanzas, "validate": "true"}),
    );
    assert!(no_placeholder.result["msg"]
        .as_str()
        .unwrap()
        .starts_with("validate must contain %s"));
}

#[test]
fn validate_with_vtysh_missing_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    let empty_path = dir.path().join("empty-bin");
    fs::create_dir(&empty_path).unwrap();
    let out = run_with_env(
        dir.path(),
        json!({"path": path, "stanzas": use_cases(), "validate": "vtysh -C -f %s"}),
        &[("PATH", empty_path.to_str().unwrap())],
    );
    let msg = out.result["msg"].as_str().unwrap();
    assert!(
        msg.contains("`vtysh` is not installed on this host"),
        "{msg}"
    );
    assert!(msg.contains("apt-get install frr"), "{msg}");
    assert!(!path.exists());
}

#[test]
fn a_held_lock_times_out_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    // The module's own lock (built with the test-hooks feature, both sides use the same place).
    let target = deevnet_runtime::file_policy::resolve("path", &path, false).unwrap();
    let _held =
        deevnet_runtime::file_policy::FileLock::acquire(&target, std::time::Duration::from_secs(1))
            .unwrap();
    let out = run(
        dir.path(),
        json!({"path": path, "stanzas": use_cases(), "lock_timeout": 1}),
    );
    assert!(
        out.result["msg"]
            .as_str()
            .unwrap()
            .contains("another run holds the lock"),
        "{}",
        out.result
    );
    assert!(!path.exists());
}

#[test]
fn five_hundred_tenants_are_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    let stanzas: Vec<Value> = (0..500)
        .map(|i| json!({"header": format!("vrf vrf_t{i}"), "lines": [format!("ip route 0.0.0.0/0 10.{}.{}.1 nexthop-vrf default", i / 256, i % 256)]}))
        .collect();
    let started = std::time::Instant::now();
    let out = run(
        dir.path(),
        json!({"path": path, "stanzas": stanzas.clone()}),
    );
    assert!(out.success, "{}", out.result);
    assert_eq!(out.result["stanzas"].as_object().unwrap().len(), 500);
    let again = run(dir.path(), json!({"path": path, "stanzas": stanzas}));
    assert_eq!(again.result["changed"], json!(false));
    assert!(
        started.elapsed().as_secs() < 20,
        "two runs took {:?}",
        started.elapsed()
    );
}

/// Where FRR is installed, every file the module writes passes `vtysh -C -f` (spec A.4):
/// the use cases alone and beside hand-written stanzas, a merge into an existing router, and
/// 500 tenant VRFs.
#[test]
fn written_files_pass_vtysh_dry_run_where_frr_is_installed() {
    let Some(vtysh) = ["/usr/bin/vtysh", "/usr/local/bin/vtysh"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        println!("SKIPPED: vtysh is not installed here (Debian's `frr` package); the written files were not checked by FRR");
        return;
    };
    let tenants: Vec<Value> = (0..500)
        .map(|i| json!({"header": format!("vrf vrf_t{i}"), "lines": [format!("ip route 0.0.0.0/0 10.{}.{}.1 nexthop-vrf default", i / 256, i % 256)]}))
        .collect();
    let merge = json!([{"header": "router bgp 45689 vrf vrf_evpn", "mode": "merge", "children": [
        {"header": "address-family ipv4 unicast", "mode": "merge", "lines": ["import vrf default"]},
        {"header": "address-family ipv6 unicast", "lines": ["redistribute connected"]}]}]);
    let scenarios: [(&str, &str, Value); 4] = [
        ("use cases", "", use_cases()),
        (
            "use cases beside hand-written stanzas",
            UNMANAGED,
            use_cases(),
        ),
        ("merge into a hand-written router", UNMANAGED, merge),
        ("500 tenants", "", Value::Array(tenants)),
    ];
    for (name, start, stanzas) in scenarios {
        let dir = tempfile::tempdir().unwrap();
        let path = conf(dir.path());
        fs::write(&path, start).unwrap();
        let out = run(
            dir.path(),
            json!({"path": path, "stanzas": stanzas, "validate": format!("{vtysh} -C -f %s")}),
        );
        assert!(out.success, "{name}: {}", out.result);
        assert_eq!(out.result["changed"], json!(true), "{name}");
        let check = std::process::Command::new(vtysh)
            .args(["-C", "-f"])
            .arg(&path)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        assert!(
            check.status.success() && !said.contains("Unknown command"),
            "{name}: {said}"
        );
        println!("vtysh -C -f accepted the file written for: {name}");
    }
    // The check can fail: vtysh refuses what Proxmox 1.2.x makes of an `exit-vrf` stanza.
    let dir = tempfile::tempdir().unwrap();
    let doubled = dir.path().join("doubled.conf");
    fs::write(
        &doubled,
        "vrf vrf_a\n ip route 0.0.0.0/0 10.0.0.1 nexthop-vrf default\n exit-vrf\nexit-vrf\n",
    )
    .unwrap();
    let check = std::process::Command::new(vtysh)
        .args(["-C", "-f"])
        .arg(&doubled)
        .output()
        .unwrap();
    assert!(!check.status.success(), "vtysh accepted a doubled exit-vrf");
}

/// Check mode runs `validate` too (it only reads the staged file; `vtysh -C` changes nothing): a
/// typo FRR refuses fails the check run as it would fail the real one, an accepted file says
/// so in `msg`, and nothing is written beside the target either way.
#[test]
fn check_mode_runs_validate_and_writes_nothing() {
    // FRR's own check where it is installed (make host-deps), else a stand-in that refuses the
    // same typo, so the test holds on any machine.
    let validate = match ["/usr/bin/vtysh", "/usr/local/bin/vtysh"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    {
        Some(vtysh) => format!("{vtysh} -C -f %s"),
        None => "grep -q '^ ip route ' %s".to_string(),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = conf(dir.path());
    fs::write(&path, "").unwrap();
    // FRR takes a unique abbreviation (`ip rout`), not a misspelling.
    let typo = json!([{"header": "vrf vrf_tdemo", "lines": ["ip routte 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]);
    let refused = run(
        dir.path(),
        json!({"path": path, "stanzas": typo, "validate": validate, "_ansible_check_mode": true}),
    );
    assert!(!refused.success, "{}", refused.result);
    let msg = refused.result["msg"].as_str().unwrap();
    assert!(
        msg.contains("refused the new file") || msg.contains("printed `"),
        "{msg}"
    );
    assert!(msg.contains("Nothing was written"), "{msg}");

    let good = json!([{"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]);
    let accepted = run(
        dir.path(),
        json!({"path": path, "stanzas": good, "validate": validate, "_ansible_check_mode": true}),
    );
    assert!(accepted.success, "{}", accepted.result);
    assert_eq!(accepted.result["changed"], json!(true));
    assert_eq!(
        accepted.result["msg"],
        json!("1 added; lint clean; validate accepted the new file")
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "",
        "check mode wrote the file"
    );
    let mut left: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["args.json", "frr.conf.local"],
        "check mode left a staged file"
    );
}
