//! The module run for real, as root, inside a network namespace each test makes for itself:
//! a veth pair with a dotted name on one end and forwarding 0 at the start, a temp sysctl.d
//! tree, and assertions on the file and on `/proc` afterwards.

use assert_cmd::Command;
use deevnet_runtime::test_support::TestNamespace;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

const TRANSIT: &str = "vmbr0.50";

/// A namespace and a temp sysctl.d tree, removed on drop.
struct Node {
    netns: TestNamespace,
    root: tempfile::TempDir,
}

impl Node {
    fn new() -> Node {
        let node = Node {
            netns: TestNamespace::new("dvn-sf"),
            root: tempfile::tempdir().unwrap(),
        };
        node.ip(&[
            "link", "add", TRANSIT, "type", "veth", "peer", "name", "peer0",
        ]);
        node.ip(&["link", "set", TRANSIT, "up"]);
        for key in [
            "all/forwarding",
            "default/forwarding",
            "vmbr0.50/forwarding",
        ] {
            node.set_proc(&format!("net/ipv4/conf/{key}"), "0");
        }
        fs::create_dir_all(node.etc()).unwrap();
        fs::create_dir_all(node.usr()).unwrap();
        node
    }

    fn ip(&self, args: &[&str]) {
        self.netns.ip(&args.join(" "));
    }

    fn etc(&self) -> PathBuf {
        self.root.path().join("etc/sysctl.d")
    }
    fn usr(&self) -> PathBuf {
        self.root.path().join("usr/lib/sysctl.d")
    }
    fn conf(&self) -> PathBuf {
        self.etc().join("90-deevnet-tenant-fabric.conf")
    }

    fn proc(&self, key: &str) -> String {
        let out = Process::new("ip")
            .args([
                "netns",
                "exec",
                self.netns.name(),
                "cat",
                &format!("/proc/sys/{key}"),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn set_proc(&self, key: &str, value: &str) {
        let script = format!("echo {value} > /proc/sys/{key}");
        run(&[
            "ip",
            "netns",
            "exec",
            self.netns.name(),
            "sh",
            "-c",
            &script,
        ]);
    }

    /// The arguments every test starts from: the temp tree instead of the real folders.
    fn args(&self, extra: Value) -> Value {
        let mut args = json!({
            "path": self.conf(),
            "sysctl_dirs": [self.etc(), self.usr()],
            "interfaces": [TRANSIT],
        });
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    }

    /// Runs the module in the namespace with `args` as its args file; returns (exit, result).
    fn module(&self, args: &Value) -> (i32, Value) {
        let file = self.root.path().join("args.json");
        fs::write(&file, args.to_string()).unwrap();
        self.module_raw(&[file.to_str().unwrap()], None)
    }

    fn module_raw(&self, module_args: &[&str], stdin: Option<&str>) -> (i32, Value) {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", self.netns.name()])
            .arg(module_binary())
            .args(module_args);
        if let Some(input) = stdin {
            cmd.write_stdin(input);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "exactly one JSON line: {stdout}");
        let result =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
        (out.status.code().unwrap_or(-1), result)
    }

    /// Everything a run could change: the tree's files and the namespace's forwarding values.
    fn snapshot(&self) -> Vec<(String, String)> {
        let mut state = Vec::new();
        for dir in [self.etc(), self.usr()] {
            let mut names: Vec<_> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            names.sort();
            for name in names {
                state.push((
                    name.display().to_string(),
                    fs::read_to_string(&name).unwrap_or_default(),
                ));
            }
        }
        for key in [
            "net/ipv4/conf/all/forwarding",
            "net/ipv4/conf/default/forwarding",
            "net/ipv4/conf/vmbr0.50/forwarding",
            "net/ipv4/conf/vmbr0.50/rp_filter",
            "net/ipv6/conf/all/forwarding",
        ] {
            state.push((key.to_string(), self.proc(key)));
        }
        state
    }
}

fn run(cmd: &[&str]) {
    let status = Process::new(cmd[0]).args(&cmd[1..]).status().unwrap();
    assert!(status.success(), "{cmd:?} failed");
}

fn module_binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("sysctl_forwarding")
}

fn assert_failed_without_change(node: &Node, args: Value, expected: &[&str]) {
    let before = node.snapshot();
    let (code, result) = node.module(&args);
    assert_eq!(code, 1, "{result}");
    assert_eq!(result["failed"], json!(true), "{result}");
    let msg = result["msg"].as_str().unwrap();
    for part in expected {
        assert!(msg.contains(part), "message {msg:?} lacks {part:?}");
    }
    assert_eq!(node.snapshot(), before, "a failed run changed something");
}

#[test]
fn first_run_fixes_file_and_runtime_second_run_changes_nothing() {
    let node = Node::new();
    let (code, result) = node.module(&node.args(json!({})));
    assert_eq!(code, 0, "{result}");
    assert_eq!(result["changed"], json!(true));
    let text = fs::read_to_string(node.conf()).unwrap();
    assert!(
        text.contains("\nnet.ipv4.conf.all.forwarding = 1\nnet.ipv4.conf.default.forwarding = 1\n"),
        "{text}"
    );
    // The transit interface under its own key: a re-created device gets it from udev.
    assert!(
        text.contains("\n-net.ipv4.conf.vmbr0/50.forwarding = 1\n"),
        "{text}"
    );
    assert_eq!(
        result["boot"]["net.ipv4.conf.vmbr0/50.forwarding"]["value"],
        json!("1")
    );
    assert_eq!(node.proc("net/ipv4/conf/vmbr0.50/forwarding"), "1");
    assert_eq!(node.proc("net/ipv4/conf/all/forwarding"), "1");
    assert_eq!(node.proc("net/ipv4/conf/default/forwarding"), "1");
    assert_eq!(
        result["interfaces"][TRANSIT],
        json!({"before": "0", "after": "1"})
    );
    assert_eq!(
        result["runtime"]["net.ipv4.conf.vmbr0/50.forwarding"],
        json!({"before": "0", "after": "1"})
    );
    assert_eq!(
        result["boot"]["net.ipv4.conf.all.forwarding"]["file"],
        json!(node.conf())
    );
    assert_eq!(
        result["boot"]["net.ipv4.conf.all.forwarding"]["value"],
        json!("1")
    );
    assert_eq!(
        fs::metadata(node.conf())
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
            .unwrap(),
        0o644
    );

    let before = node.snapshot();
    let (code, again) = node.module(&node.args(json!({})));
    assert_eq!(code, 0, "{again}");
    assert_eq!(again["changed"], json!(false), "{again}");
    assert_eq!(
        again["interfaces"][TRANSIT],
        json!({"before": "1", "after": "1"})
    );
    assert_eq!(node.snapshot(), before);
}

#[test]
fn an_interface_set_back_to_zero_is_fixed_even_when_the_file_is_right() {
    let node = Node::new();
    node.module(&node.args(json!({})));
    // What the mission saw: `all` is 1, yet a device created later came up with 0.
    node.set_proc("net/ipv4/conf/vmbr0.50/forwarding", "0");
    let (_, result) = node.module(&node.args(json!({})));
    assert_eq!(result["changed"], json!(true));
    assert!(result.get("diff").is_none(), "no diff outside diff mode");
    assert_eq!(node.proc("net/ipv4/conf/vmbr0.50/forwarding"), "1");
}

#[test]
fn check_mode_changes_nothing_and_reports_what_would_change() {
    let node = Node::new();
    let before = node.snapshot();
    let (code, result) =
        node.module(&node.args(json!({"_ansible_check_mode": true, "_ansible_diff": true})));
    assert_eq!(code, 0, "{result}");
    assert_eq!(result["changed"], json!(true));
    assert_eq!(
        result["interfaces"][TRANSIT],
        json!({"before": "0", "after": "1"})
    );
    assert!(result["diff"][0]["after"]
        .as_str()
        .unwrap()
        .contains("net.ipv4.conf.all.forwarding = 1"));
    assert_eq!(node.snapshot(), before);
    assert!(!node.conf().exists());
}

#[test]
fn diff_mode_shows_the_file_before_and_after() {
    let node = Node::new();
    fs::write(node.conf(), "net.ipv4.conf.all.forwarding = 0\n").unwrap();
    let (_, result) = node.module(&node.args(json!({"_ansible_diff": true})));
    let diff = &result["diff"][0];
    assert_eq!(diff["before"], json!("net.ipv4.conf.all.forwarding = 0\n"));
    assert!(diff["after"]
        .as_str()
        .unwrap()
        .contains("net.ipv4.conf.default.forwarding = 1"));
    assert_eq!(diff["before_header"], json!(node.conf()));
}

#[test]
fn rp_filter_on_a_dotted_interface_is_persisted_with_slashes_and_applied() {
    let node = Node::new();
    let (code, result) = node.module(&node.args(json!({"rp_filter": {"vmbr0.50": "2"}})));
    assert_eq!(code, 0, "{result}");
    assert!(fs::read_to_string(node.conf())
        .unwrap()
        .contains("\n-net.ipv4.conf.vmbr0/50.rp_filter = 2\n"));
    assert_eq!(node.proc("net/ipv4/conf/vmbr0.50/rp_filter"), "2");
    assert_eq!(
        result["boot"]["net.ipv4.conf.vmbr0/50.rp_filter"]["value"],
        json!("2")
    );
}

#[test]
fn src_valid_mark_is_persisted_applied_then_unchanged() {
    let node = Node::new();
    node.set_proc("net/ipv4/conf/all/src_valid_mark", "0");
    node.set_proc("net/ipv4/conf/vmbr0.50/src_valid_mark", "0");
    let args = node.args(json!({"src_valid_mark": ["all", TRANSIT]}));
    let (code, result) = node.module(&args);
    assert_eq!(code, 0, "{result}");
    let text = fs::read_to_string(node.conf()).unwrap();
    assert!(
        text.contains(
            "\nnet.ipv4.conf.all.src_valid_mark = 1\n-net.ipv4.conf.vmbr0/50.src_valid_mark = 1\n"
        ),
        "{text}"
    );
    assert_eq!(node.proc("net/ipv4/conf/all/src_valid_mark"), "1");
    assert_eq!(node.proc("net/ipv4/conf/vmbr0.50/src_valid_mark"), "1");
    assert_eq!(
        result["runtime"]["net.ipv4.conf.all.src_valid_mark"],
        json!({"before": "0", "after": "1"})
    );
    assert_eq!(
        result["boot"]["net.ipv4.conf.vmbr0/50.src_valid_mark"]["value"],
        json!("1")
    );
    let (code, again) = node.module(&args);
    assert_eq!((code, &again["changed"]), (0, &json!(false)), "{again}");
}

#[test]
fn src_valid_mark_undone_at_boot_fails_before_any_change() {
    let node = Node::new();
    node.set_proc("net/ipv4/conf/all/src_valid_mark", "0");
    fs::write(
        node.usr().join("99-later.conf"),
        "net.ipv4.conf.all.src_valid_mark = 0\n",
    )
    .unwrap();
    assert_failed_without_change(
        &node,
        node.args(json!({"src_valid_mark": ["all"]})),
        &[
            "net.ipv4.conf.all.src_valid_mark = 0 from",
            "99-later.conf:1 wins at boot over 1",
        ],
    );
    assert_eq!(node.proc("net/ipv4/conf/all/src_valid_mark"), "0");
}

#[test]
fn a_missing_src_valid_mark_interface_is_named_by_its_option() {
    let node = Node::new();
    assert_failed_without_change(
        &node,
        node.args(json!({"src_valid_mark": ["vmbr0.99"]})),
        &["src_valid_mark: interface 'vmbr0.99' does not exist"],
    );
}

#[test]
fn a_missing_interface_fails_naming_it_and_changes_nothing() {
    let node = Node::new();
    let args = node.args(json!({"interfaces": [TRANSIT, "vmbr0.99"]}));
    assert_failed_without_change(
        &node,
        args,
        &["interfaces: interface 'vmbr0.99' does not exist"],
    );
}

#[test]
fn a_later_file_that_undoes_forwarding_at_boot_fails_or_warns() {
    let node = Node::new();
    fs::write(
        node.usr().join("99-hardening.conf"),
        "net.ipv4.conf.all.forwarding = 0\n",
    )
    .unwrap();
    let args = node.args(json!({}));
    assert_failed_without_change(
        &node,
        args,
        &[
            "99-hardening.conf:1 wins at boot",
            "net.ipv4.conf.all.forwarding = 0",
        ],
    );

    let (code, result) = node.module(&node.args(json!({"boot_conflict": "warn"})));
    assert_eq!(code, 0, "{result}");
    let warnings = result["warnings"].to_string();
    assert!(warnings.contains("99-hardening.conf"), "{warnings}");
    assert!(result["boot"]["net.ipv4.conf.all.forwarding"]["file"]
        .as_str()
        .unwrap()
        .ends_with("99-hardening.conf"));
}

#[test]
fn state_absent_removes_the_file_and_leaves_runtime_alone() {
    let node = Node::new();
    node.module(&node.args(json!({})));
    let (code, result) = node.module(&node.args(json!({"state": "absent", "backup": true})));
    assert_eq!(code, 0, "{result}");
    assert_eq!(result["changed"], json!(true));
    assert!(!node.conf().exists());
    let backup = result["backup_file"].as_str().unwrap();
    assert!(fs::read_to_string(backup)
        .unwrap()
        .contains("forwarding = 1"));
    assert_eq!(
        node.proc("net/ipv4/conf/vmbr0.50/forwarding"),
        "1",
        "runtime untouched"
    );
    let (_, again) = node.module(&node.args(json!({"state": "absent"})));
    assert_eq!(again["changed"], json!(false));
}

#[test]
fn apply_false_writes_only_the_file() {
    let node = Node::new();
    let (_, result) = node.module(&node.args(json!({"apply": false})));
    assert_eq!(result["changed"], json!(true));
    assert!(node.conf().exists());
    assert_eq!(node.proc("net/ipv4/conf/vmbr0.50/forwarding"), "0");
}

#[test]
fn ipv6_off_reports_and_warns_when_ipv6_forwarding_is_on() {
    let node = Node::new();
    node.set_proc("net/ipv6/conf/all/forwarding", "1");
    let (_, result) = node.module(&node.args(json!({})));
    assert_eq!(
        result["runtime"]["net.ipv6.conf.all.forwarding"],
        json!({"before": "1", "after": "1"})
    );
    assert!(result["warnings"]
        .to_string()
        .contains("IPv6 forwarding is on (net.ipv6.conf.all.forwarding = 1) though ipv6 is off"));
    assert!(!fs::read_to_string(node.conf()).unwrap().contains("ipv6"));
    // A role names the variable that controls the switch instead.
    let args = node.args(json!({"ipv6_switch_name": "proxmox_node_network_ipv6"}));
    let (_, result) = node.module(&args);
    assert!(result["warnings"]
        .to_string()
        .contains("though proxmox_node_network_ipv6 is off: IPv6 is routed with no policy from this module; set proxmox_node_network_ipv6=true"), "{result}");
}

#[test]
fn ipv6_on_is_managed_like_ipv4() {
    let node = Node::new();
    node.set_proc("net/ipv6/conf/all/forwarding", "0");
    let (code, result) = node.module(&node.args(json!({"ipv6": "yes"})));
    assert_eq!(code, 0, "{result}");
    assert!(fs::read_to_string(node.conf())
        .unwrap()
        .contains("net.ipv6.conf.all.forwarding = 1"));
    assert_eq!(node.proc("net/ipv6/conf/all/forwarding"), "1");
    assert_eq!(node.proc("net/ipv6/conf/vmbr0.50/forwarding"), "1");
    assert!(fs::read_to_string(node.conf())
        .unwrap()
        .contains("\n-net.ipv6.conf.vmbr0/50.forwarding = 1\n"));
}

#[test]
fn arguments_from_standard_input_with_ad_hoc_strings() {
    let node = Node::new();
    let args = json!({"path": node.conf(), "sysctl_dirs": format!("{},{}", node.etc().display(), node.usr().display()),
                      "interfaces": TRANSIT, "apply": "yes", "lock_timeout": "5"});
    let (code, result) = node.module_raw(&["-"], Some(&args.to_string()));
    assert_eq!(code, 0, "{result}");
    assert_eq!(node.proc("net/ipv4/conf/vmbr0.50/forwarding"), "1");
}

#[test]
fn bad_inputs_fail_clearly_and_change_nothing() {
    let node = Node::new();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"bogus": 1}),
            vec![
                "Unsupported parameters for (deevnet.net.sysctl_forwarding) module: bogus",
                "Supported parameters include: apply",
            ],
        ),
        (
            json!({"interfaces": 5}),
            vec!["argument 'interfaces' is of type int", "list"],
        ),
        (
            json!({"ipv6": "maybe"}),
            vec!["argument 'ipv6'", "'maybe'", "yes, no"],
        ),
        (
            json!({"interfaces": ["../../kernel"]}),
            vec![
                "interfaces: '../../kernel' is not a valid interface name",
                "'/'",
            ],
        ),
        (
            json!({"interfaces": ["a/b"]}),
            vec!["'a/b' is not a valid interface name"],
        ),
        (
            json!({"interfaces": ["sixteen_chars_xx"]}),
            vec!["longer than 15 bytes"],
        ),
        (
            json!({"rp_filter": {"vmbr0.50": 3}}),
            vec!["value of rp_filter.vmbr0.50 must be one of: 0, 1, 2, got: 3"],
        ),
        (
            json!({"rp_filter": {"a b": 1}}),
            vec!["rp_filter: 'a b' is not a valid interface name"],
        ),
        (
            json!({"src_valid_mark": ["a:b"]}),
            vec!["src_valid_mark: 'a:b' is not a valid interface name"],
        ),
        (
            json!({"src_valid_mark": ["eth*"]}),
            vec!["src_valid_mark: 'eth*' holds '*'"],
        ),
        (
            json!({"state": "gone"}),
            vec!["value of state must be one of: present, absent, got: gone"],
        ),
        (
            json!({"path": node.root.path().join("nope/x.conf")}),
            vec!["the folder", "does not exist"],
        ),
        (json!({"lock_timeout": 0}), vec!["lock_timeout=0"]),
        (
            json!({"path": ""}),
            vec!["argument 'path' is '': an empty path names no file or folder; give a path"],
        ),
        (
            json!({"path": "", "_ansible_check_mode": true}),
            vec!["argument 'path' is '': an empty path names no file or folder; give a path"],
        ),
        (
            json!({"sysctl_dirs": [""]}),
            vec!["argument 'sysctl_dirs[0]' is '': an empty path"],
        ),
    ];
    for (extra, expected) in cases {
        assert_failed_without_change(&node, node.args(extra), &expected);
    }
}

#[test]
fn unreadable_arguments_fail_as_json() {
    let node = Node::new();
    let not_json = node.root.path().join("bad.json");
    fs::write(&not_json, "path=/etc/x").unwrap();
    let (code, result) = node.module_raw(&[not_json.to_str().unwrap()], None);
    assert_eq!(code, 1);
    assert!(
        result["msg"].as_str().unwrap().contains("are not JSON"),
        "{result}"
    );
    let (code, result) = node.module_raw(&["/nonexistent/args.json"], None);
    assert_eq!(code, 1);
    assert!(
        result["msg"]
            .as_str()
            .unwrap()
            .contains("cannot read the arguments file /nonexistent/args.json"),
        "{result}"
    );
    let (code, result) = node.module_raw(&[], None);
    assert_eq!(code, 1);
    assert!(
        result["msg"]
            .as_str()
            .unwrap()
            .contains("no arguments file"),
        "{result}"
    );
}

#[test]
fn read_only_proc_sys_fails_before_touching_the_file() {
    let node = Node::new();
    let args_file = node.root.path().join("ro.json");
    fs::write(&args_file, node.args(json!({})).to_string()).unwrap();
    let before = node.snapshot();
    // A container's view: /proc/sys bind-mounted read-only in a private mount namespace.
    let script = format!(
        "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec {} {}",
        module_binary().display(),
        args_file.display()
    );
    let out = Process::new("ip")
        .args([
            "netns",
            "exec",
            node.netns.name(),
            "unshare",
            "--mount",
            "sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["failed"], json!(true), "{result}");
    assert!(
        result["msg"].as_str().unwrap().contains("read-only"),
        "{result}"
    );
    assert!(
        result["msg"].as_str().unwrap().contains("apply=false"),
        "{result}"
    );
    assert_eq!(node.snapshot(), before);
}

#[test]
fn backups_use_ansibles_naming() {
    let node = Node::new();
    fs::write(node.conf(), "# old\n").unwrap();
    let (_, result) = node.module(&node.args(json!({"backup": true})));
    let backup = PathBuf::from(result["backup_file"].as_str().unwrap());
    assert_eq!(fs::read_to_string(&backup).unwrap(), "# old\n");
    let name = backup.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("90-deevnet-tenant-fabric.conf.")
            && name.ends_with('~')
            && name.contains('@'),
        "{name}"
    );
    assert!(Path::new(&backup).starts_with(node.etc()));
}
