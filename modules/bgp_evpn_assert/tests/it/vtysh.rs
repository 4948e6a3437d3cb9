//! The binary against fake vtysh scripts: FRR's answers served from tests/data/node, and
//! vtyshs that are missing, hang, print no JSON, print without end, or could have been planted.

use deevnet_runtime::test_support::module_run::{is_root, run_for};
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::{chown, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_bgp_evpn_assert");
const CORE: &str = "2001:db8:60::1";

fn data(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/node")
        .join(file)
}

/// A folder of the test's own (root's, 0700 under the sticky /tmp) holding a vtysh script.
struct FakeVtysh {
    dir: tempfile::TempDir,
}

impl FakeVtysh {
    /// A vtysh whose body is `body` (sh), executable, root's, writable by root only.
    fn script(body: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vtysh");
        fs::write(
            &path,
            format!(
                "#!/bin/sh\ntouch '{}'\n{body}\n",
                dir.path().join("ran").display()
            ),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        FakeVtysh { dir }
    }

    /// A vtysh that answers each `-c` from a file; `leaking`: the core gets a /32 and the default.
    fn frr(leaking: bool) -> Self {
        let advertised_v4 = if leaking {
            "core-ipv4-advertised-leaking.json"
        } else {
            "core-ipv4-advertised.json"
        };
        let route = |af: &str, kind: &str| {
            format!("show bgp vrf vrf_tdemo {af} unicast neighbors {CORE} {kind} json")
        };
        let answers = [
            (
                "show bgp vrf all neighbors json".to_string(),
                data("neighbors.json"),
            ),
            (
                "show bgp vrf all summary json".to_string(),
                data("summary.json"),
            ),
            ("show evpn vni detail json".to_string(), data("vnis.json")),
            (
                "show evpn next-hops vni all json".to_string(),
                data("next-hops.json"),
            ),
            (route("ipv4", "routes"), data("core-ipv4-routes.json")),
            (route("ipv6", "routes"), data("core-ipv6-routes.json")),
            (route("ipv4", "advertised-routes"), data(advertised_v4)),
            (
                route("ipv6", "advertised-routes"),
                data("core-ipv6-advertised.json"),
            ),
        ];
        let cases: String = answers
            .iter()
            .map(|(command, file)| format!("    '{command}') cat '{}' ;;\n", file.display()))
            .collect();
        FakeVtysh::script(&format!(
            "while [ \"$#\" -gt 0 ]; do\n  [ \"$1\" = -c ] || {{ echo \"vtysh: unexpected $1\" >&2; exit 2; }}\n  case \"$2\" in\n{cases}    *) echo \"% Unknown command: $2\"; exit 1 ;;\n  esac\n  shift 2\ndone"
        ))
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("vtysh")
    }

    fn ran(&self) -> bool {
        self.dir.path().join("ran").exists()
    }

    fn run(&self, mut args: Value) -> Value {
        args["vtysh"] = json!(self.path());
        run_for(BINARY, &args, Duration::from_secs(30)).expect("bgp_evpn_assert finished")
    }
}

fn full_args() -> Value {
    json!({
        "fabric_ipv6_only": true,
        "peers": [
            {"peer": "bgpv6", "address_families": ["ipv6_unicast", "l2vpn_evpn"]},
            {"peer": CORE, "vrf": "vrf_tdemo", "remote_as": 65100,
             "address_families": ["ipv4_unicast", "ipv6_unicast"],
             "receives_default": ["ipv4", "ipv6"], "advertises": "aggregates_only"}
        ],
        "vnis": [{"vni": 10100, "remote_vteps": ["fd00:51::22", "fd00:51::23"]}, {"vni": 4001}]
    })
}

#[test]
fn a_healthy_node_passes_in_check_mode_too_and_changes_nothing() {
    let vtysh = FakeVtysh::frr(false);
    for check_mode in [false, true] {
        let mut args = full_args();
        args["_ansible_check_mode"] = json!(check_mode);
        let result = vtysh.run(args);
        assert_eq!(result["failed"], json!(null), "{result:#}");
        assert_eq!(result["changed"], json!(false));
        assert_eq!(result["findings"], json!([]));
        assert_eq!(
            result["msg"],
            "3 BGP sessions Established with the expected address families, routes and AS; 2 VNIs present with the expected VTEPs"
        );
        let core = &result["peers"][2];
        assert_eq!(core["peer"], CORE);
        assert_eq!(
            core["default_received"],
            json!({"ipv4": true, "ipv6": true})
        );
        assert_eq!(core["advertised_host_routes"], json!([]));
        assert_eq!(
            result["vnis"][1],
            json!({"vni": 4001, "type": "L3", "vrf": "vrf_tdemo", "remote_vteps": ["fd00:51::22", "fd00:51::23"]})
        );
    }
}

#[test]
fn a_leak_to_the_core_fails_with_its_finding() {
    let result = FakeVtysh::frr(true).run(full_args());
    assert_eq!(result["failed"], true, "{result:#}");
    assert_eq!(result["changed"], false);
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.starts_with("1 finding in FRR's control plane:\npeer 2001:db8:60::1 in VRF vrf_tdemo: expected only aggregates advertised (no /32, no /128, no default), found advertised: 10.20.129.5/32, 0.0.0.0/0;"), "{msg}");
    assert_eq!(result["findings"].as_array().unwrap().len(), 1);
    assert_eq!(result["peers"][2]["advertised_default"], true);
}

#[test]
fn with_findings_warn_the_leak_is_a_warning_and_the_task_passes() {
    let mut args = full_args();
    args["findings"] = json!("warn");
    let result = FakeVtysh::frr(true).run(args);
    assert_eq!(result.get("failed"), None, "{result:#}");
    assert_eq!(result["changed"], false);
    let warnings = result["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{result:#}");
    assert!(
        warnings[0].as_str().unwrap().starts_with(
            "peer 2001:db8:60::1 in VRF vrf_tdemo: expected only aggregates advertised"
        ),
        "{warnings:?}"
    );
    assert!(result["msg"]
        .as_str()
        .unwrap()
        .starts_with("not failed (findings=warn): 1 finding"));
    assert_eq!(result["findings"].as_array().unwrap().len(), 1);
}

#[test]
fn a_missing_vtysh_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("vtysh");
    let result = run_for(
        BINARY,
        &json!({"vtysh": missing, "vnis": [{"vni": 1}]}),
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(result["failed"], true);
    assert_eq!(
        result["msg"],
        format!("vtysh: {} does not exist; install FRR (apt-get install frr) or give the path of its vtysh; nothing was run", missing.display())
    );
}

#[test]
fn a_hanging_vtysh_is_stopped_at_the_timeout() {
    let vtysh = FakeVtysh::script("exec sleep 60");
    let started = Instant::now();
    let result = vtysh.run(json!({"timeout": 1, "vnis": [{"vni": 1}]}));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result["failed"], true);
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.contains("did not finish within timeout=1 s on `show evpn vni detail json`, `show evpn next-hops vni all json` and was stopped"), "{msg}");
}

/// BG1: a vtysh that exits but leaves a child holding its stdout is still bound by `timeout`:
/// the run fails at the timeout, naming the program and the option, and the child is stopped.
#[test]
fn a_vtysh_leaving_a_child_on_its_stdout_is_stopped_at_the_timeout() {
    let vtysh =
        FakeVtysh::script("sleep 30 &\necho $! > \"$(dirname \"$0\")/child_pid\"\necho '{}'");
    let pid_file = vtysh.dir.path().join("child_pid");
    let result = vtysh.run(json!({"timeout": 2, "vnis": [{"vni": 1}]}));
    assert_eq!(result["failed"], true, "{result}");
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.contains("did not finish within timeout=2 s"), "{msg}");
    assert!(
        msg.contains(&vtysh.dir.path().join("vtysh").display().to_string()),
        "{msg}"
    );
    // The child went with the group: it is gone (or, reparented, a zombie being reaped).
    let pid = fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let gone = (0..100).any(|_| {
        let state = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let alive = state
            .split(") ")
            .nth(1)
            .is_some_and(|rest| !rest.starts_with('Z'));
        if alive {
            std::thread::sleep(Duration::from_millis(100));
        }
        !alive
    });
    assert!(gone, "sleep {pid} outlived the run");
}

#[test]
fn a_vtysh_printing_no_json_fails_quoting_it() {
    let vtysh = FakeVtysh::script("echo '% Unknown command: show evpn vni detail json'");
    let result = vtysh.run(json!({"vnis": [{"vni": 1}]}));
    assert_eq!(result["failed"], true);
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.contains("did not print JSON for `show evpn vni detail json`"),
        "{msg}"
    );
    assert!(
        msg.contains("'% Unknown command: show evpn vni detail json'"),
        "{msg}"
    );
}

#[test]
fn output_over_the_cap_is_stopped_and_names_the_option() {
    // It never ends on its own: only the cap stops it.
    let vtysh = FakeVtysh::script("while :; do echo '{\"filler\": \"0123456789abcdef\"}'; done");
    let started = Instant::now();
    let result = vtysh.run(json!({"max_output_bytes": 4096, "timeout": 30, "vnis": [{"vni": 1}]}));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result["failed"], true);
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.contains("printed more than max_output_bytes=4096 bytes"),
        "{msg}"
    );
    assert!(
        msg.ends_with("raise max_output_bytes if the node's tables are that large"),
        "{msg}"
    );
}

#[test]
fn a_vtysh_another_user_could_have_planted_is_not_run() {
    if !is_root() {
        eprintln!("skipped: needs root to give the script away");
        return;
    }
    let owned = FakeVtysh::frr(false);
    chown(owned.path(), Some(65534), None).unwrap();
    let group_writable = FakeVtysh::frr(false);
    fs::set_permissions(group_writable.path(), fs::Permissions::from_mode(0o775)).unwrap();
    let open_folder = FakeVtysh::frr(false);
    fs::set_permissions(open_folder.dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    for (vtysh, why) in [
        (
            &owned,
            format!("the program {} is owned by", owned.path().display()),
        ),
        (
            &group_writable,
            format!(
                "the program {} is writable by its group or others (mode 0775)",
                group_writable.path().display()
            ),
        ),
        (
            &open_folder,
            format!(
                "the folder {} is writable by its group or others (mode 0777)",
                open_folder.dir.path().display()
            ),
        ),
    ] {
        let result = vtysh.run(full_args());
        assert_eq!(result["failed"], true);
        let msg = result["msg"].as_str().unwrap();
        assert!(msg.contains(&why), "{msg}");
        assert!(
            msg.ends_with(
                "have root own it and its folders, writable by root only; nothing was run"
            ),
            "{msg}"
        );
        assert!(!vtysh.ran(), "the untrusted vtysh was run");
    }
}

#[test]
fn a_failing_vtysh_fails_with_what_it_said() {
    let vtysh = FakeVtysh::script("echo 'Exiting: failed to connect to any daemons.' >&2; exit 1");
    let result = vtysh.run(json!({"vnis": [{"vni": 1}]}));
    let msg = result["msg"].as_str().unwrap();
    assert!(msg.contains("failed (exit status: 1) on `show evpn vni detail json`, `show evpn next-hops vni all json`: Exiting: failed to connect to any daemons.; is FRR running"), "{msg}");
}
