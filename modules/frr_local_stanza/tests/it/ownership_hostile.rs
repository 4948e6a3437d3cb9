//! The owner record on a hostile node (issue 29 items 3, 4, 5, 15, 16): what the record may
//! claim, who may have written it, what a failed write leaves, and what the output shows.
//! Files of another user and full disks live on a private tmpfs in a private mount
//! namespace (the runtime's `in_private_mounts`); nothing outside the test's folders is touched.

use deevnet_runtime::test_support::module_run::{in_private_mounts, is_root, run_for};
use serde_json::{json, Value};
use std::fs;
use std::time::Duration;

const BINARY: &str = env!("CARGO_BIN_EXE_frr_local_stanza");
const NOBODY: u32 = 65534;
const ROUTE: &str = "ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default";
const HAND: &str = "! the operator's own\nrouter bgp 65000\n bgp router-id 10.0.0.1\nexit\n!\n";

fn run(args: &Value) -> Value {
    run_for(BINARY, args, Duration::from_secs(30)).expect("the module did not finish in 30 s")
}

fn vrf(name: &str) -> Value {
    json!({"header": format!("vrf {name}"), "lines": [ROUTE]})
}

/// Files the scripts copy from (text with quotes needs no shell quoting this way).
struct Data(tempfile::TempDir);

impl Data {
    fn new(files: &[(&str, &str)]) -> Data {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            fs::write(dir.path().join(name), text).unwrap();
        }
        Data(dir)
    }
    fn path(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }
}

/// One step of a script in a private mount namespace.
enum Step {
    Shell(String),
    Run(Value),
}

/// Runs the steps in one shell in a private mount namespace (so mounts last across them):
/// each run's JSON result, and what the last shell step printed.
fn in_namespace(steps: &[Step]) -> (Vec<Value>, String) {
    let args_dir = tempfile::tempdir().unwrap();
    let mut script = String::from("set -e; ");
    let mut runs = 0;
    for step in steps {
        match step {
            Step::Shell(shell) => script.push_str(&format!("{shell}; ")),
            Step::Run(args) => {
                let file = args_dir.path().join(format!("args{runs}.json"));
                fs::write(&file, args.to_string()).unwrap();
                script.push_str(&format!("{BINARY} {} || true; echo '=='; ", file.display()));
                runs += 1;
            }
        }
    }
    let out = in_private_mounts(&script);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut parts: Vec<&str> = stdout.split("==\n").collect();
    assert_eq!(
        parts.len(),
        runs + 1,
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rest = parts.pop().unwrap_or_default().to_string();
    let results = parts
        .iter()
        .map(|p| serde_json::from_str(p.trim()).unwrap_or_else(|e| panic!("{e}: {p}")))
        .collect();
    (results, rest)
}

/// Item 3: an owner that declared the operator's stanza (unchanged) or line claimed it, and
/// deleted the operator's `vrf vrf_hand` (exact) or route (merge) once it dropped them.
#[test]
fn declaring_the_operators_stanza_or_line_never_lets_the_owner_delete_it() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("frr.conf.local");
    let hand = format!("{HAND}vrf vrf_hand\n {ROUTE}\nexit\n!\n");
    let args = |stanzas: Value| {
        json!({"path": conf, "owner": "role", "owner_record": dir.path().join("state/o.json"),
               "stanzas": stanzas})
    };
    fs::write(&conf, &hand).unwrap();
    let first = run(&args(json!([vrf("vrf_hand")])));
    assert_eq!(
        first["stanzas"]["vrf vrf_hand"],
        json!("unchanged"),
        "{first}"
    );
    let gone = run(&args(json!([])));
    assert_eq!(gone["changed"], json!(false), "{gone}");
    assert_eq!(fs::read_to_string(&conf).unwrap(), hand);

    let v6 = "ipv6 route ::/0 2001:db8::1 nexthop-vrf default";
    let merge = json!([{"header": "vrf vrf_hand", "mode": "merge", "lines": [ROUTE, v6]}]);
    let added = run(&args(merge));
    assert_eq!(
        added["stanzas"]["vrf vrf_hand"],
        json!("updated"),
        "{added}"
    );
    assert!(fs::read_to_string(&conf).unwrap().contains(v6));
    run(&args(json!([])));
    assert_eq!(
        fs::read_to_string(&conf).unwrap(),
        hand,
        "only the owner's line goes, the operator's route stays"
    );
}

/// Item 4: the record was written before frr.conf.local; a full disk then failed the file's
/// write, the claim stayed, and once the inventory was corrected the next run deleted the
/// operator's own `vrf vrf_op`. frr.conf.local on a full 64 KiB tmpfs, the record on another.
#[test]
fn a_failed_write_leaves_no_claim_on_what_never_reached_the_file() {
    if !is_root() {
        eprintln!("skipped: mounts need root (make test runs as root)");
        return;
    }
    let mount = tempfile::tempdir().unwrap();
    let m = fs::canonicalize(mount.path()).unwrap();
    let m = m.display();
    let conf = format!("{m}/etc/frr.conf.local");
    let args = |stanzas: Value| {
        json!({"path": conf, "owner": "role", "owner_record": format!("{m}/state/o.json"),
               "stanzas": stanzas})
    };
    let operator = "vrf vrf_op\n ip route 0.0.0.0/0 10.9.9.9 nexthop-vrf default\nexit\n";
    let data = Data::new(&[("hand", HAND), ("operator", operator)]);
    let setup = format!(
        "mount -t tmpfs -o mode=0755 tmpfs {m}; mkdir {m}/etc {m}/state; \
         mount -t tmpfs -o size=64k,mode=0755 tmpfs {m}/etc; cp {hand} {conf}; \
         dd if=/dev/zero of={m}/etc/filler bs=4k 2>/dev/null || true",
        hand = data.path("hand")
    );
    // The inventory names vrf_op by mistake: the write fails on the full disk. Then the disk
    // has room, the operator writes vrf_op by hand, and the inventory is corrected.
    let (results, after) = in_namespace(&[
        Step::Shell(setup),
        Step::Run(args(json!([vrf("vrf_op")]))),
        Step::Shell(format!(
            "rm {m}/etc/filler; cat {} >> {conf}",
            data.path("operator")
        )),
        Step::Run(args(json!([]))),
        Step::Shell(format!("cat {conf}")),
    ]);
    let failed = &results[0];
    assert_eq!(failed["failed"], json!(true), "{failed}");
    assert!(
        failed["msg"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{failed}"
    );
    assert!(results[1].get("failed").is_none(), "{}", results[1]);
    assert_eq!(
        after,
        format!("{HAND}{operator}"),
        "the operator's vrf_op was deleted"
    );
}

/// A record, as another party could write it, claiming `router bgp 65000` (the operator's)
/// for owner `role` in `conf`.
fn planted_record(conf: &str, header: &str, lines: &[&str]) -> String {
    json!({"version": 1, "files": {conf: {"role": [
        {"header": header, "mode": "exact", "lines": lines, "children": []}]}}})
    .to_string()
}

/// Item 5: with the record's folder or the record owned by `nobody`, or writable by others,
/// root's next run trusted it and deleted `router bgp 65000` whole. The record and its folder
/// are on a private tmpfs.
#[test]
fn a_record_or_folder_another_user_could_write_is_refused() {
    if !is_root() {
        eprintln!("skipped: files of another owner need root (make test runs as root)");
        return;
    }
    let mount = tempfile::tempdir().unwrap();
    let m = fs::canonicalize(mount.path()).unwrap();
    let m = m.display();
    let conf = format!("{m}/etc/frr.conf.local");
    let record = format!("{m}/state/o.json");
    let data = Data::new(&[
        ("hand", HAND),
        (
            "record",
            &planted_record(&conf, "router bgp 65000", &["bgp router-id 10.0.0.1"]),
        ),
    ]);
    let cases = [
        (
            format!("chown {NOBODY} {m}/state"),
            format!("the folder {m}/state is owned by user nobody (uid {NOBODY})"),
        ),
        (
            format!("chown {NOBODY} {record}"),
            format!("the record {record} is owned by user nobody (uid {NOBODY})"),
        ),
        (
            format!("chmod 0666 {record}"),
            format!("the record {record} is writable by its group or others (mode 0666)"),
        ),
        (
            format!("chmod 0777 {m}/state"),
            format!("the folder {m}/state is writable by its group or others (mode 0777)"),
        ),
    ];
    for (planted_by, reason) in cases {
        let setup = format!(
            "mount -t tmpfs -o mode=0755 tmpfs {m}; mkdir {m}/etc; mkdir -m 0700 {m}/state; \
             cp {} {conf}; cp {} {record}; chmod 0600 {record}; {planted_by}",
            data.path("hand"),
            data.path("record")
        );
        let args = json!({"path": conf, "owner": "role", "owner_record": record, "stanzas": []});
        let (results, after) = in_namespace(&[
            Step::Shell(setup),
            Step::Run(args),
            Step::Shell(format!("cat {conf}")),
        ]);
        let result = &results[0];
        assert_eq!(result["failed"], json!(true), "{planted_by}: {result}");
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!("owner_record={record} is not trusted: {reason}; ")),
            "{planted_by}: {msg}"
        );
        assert!(msg.ends_with("nothing was changed"), "{msg}");
        assert_eq!(
            after, HAND,
            "{planted_by}: the operator's router was deleted"
        );
    }
}

/// Item 5: a record naming `hostname …` or `line vty` deleted those lines; the module never
/// writes such a stanza for an owner, so no record may name one.
#[test]
fn a_record_naming_what_the_module_never_writes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("frr.conf.local");
    let record = dir.path().join("o.json");
    let text = "hostname pve1\nline vty\n exec-timeout 0 0\nexit\n!\n";
    let key = fs::canonicalize(dir.path()).unwrap().join("frr.conf.local");
    let key = key.display().to_string();
    for (header, lines) in [
        ("hostname pve1", vec![]),
        ("line vty", vec!["exec-timeout 0 0"]),
    ] {
        fs::write(&conf, text).unwrap();
        fs::write(&record, planted_record(&key, header, &lines)).unwrap();
        let result = run(
            &json!({"path": conf, "owner": "role", "owner_record": record,
                                 "stanzas": [], "lint": "off"}),
        );
        assert_eq!(result["failed"], json!(true), "{header}: {result}");
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.contains("is not a record this module wrote (entry 1 of owner \"role\"")
                && msg.contains("is not a stanza the module writes for an owner"),
            "{msg}"
        );
        assert_eq!(
            fs::read_to_string(&conf).unwrap(),
            text,
            "{header} was deleted"
        );
    }
}

/// Item 15: `owner_record` equal to `path` (or a link to it) waited on its own lock, then
/// failed with "another run holds the lock". Refused at once, naming both.
#[test]
fn an_owner_record_that_is_the_file_itself_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("frr.conf.local");
    fs::write(&conf, HAND).unwrap();
    let link = dir.path().join("record-link.json");
    std::os::unix::fs::symlink(&conf, &link).unwrap();
    for record in [&conf, &link] {
        let result = run(
            &json!({"path": conf, "owner": "role", "owner_record": record,
                                 "stanzas": [vrf("vrf_a")], "lock_timeout": 2}),
        );
        assert_eq!(result["failed"], json!(true), "{result}");
        let msg = result["msg"].as_str().unwrap();
        assert!(
            msg.starts_with(&format!(
                "owner_record={} names the same file as path={}",
                record.display(),
                conf.display()
            )),
            "{msg}"
        );
        assert_eq!(fs::read_to_string(&conf).unwrap(), HAND);
    }
}

/// Item 16: lint messages quoted BGP `password` lines verbatim, diffs showed them, and the
/// record's parse error echoed its values. No secret appears anywhere in the result.
#[test]
fn secrets_appear_in_no_message_finding_warning_or_diff() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("frr.conf.local");
    let record = dir.path().join("state/o.json");
    // A `!` in the line: the lint quotes it (bang-in-command).
    let broken = "router bgp 65000\n neighbor 10.0.0.1 password FileSecret1!x\nexit\n";
    fs::write(&conf, broken).unwrap();
    let health = run(&json!({"path": conf}));
    let warned = run(&json!({"path": conf, "lint": "warn", "owner": "role",
        "owner_record": record, "_ansible_diff": true, "stanzas": [
        {"header": "router bgp 65000", "mode": "merge",
         "lines": ["neighbor 10.0.0.2 password TaskSecret2"]}]}));
    assert_eq!(health["failed"], json!(true), "{health}");
    assert!(
        health["msg"]
            .as_str()
            .unwrap()
            .contains("password ********"),
        "{health}"
    );
    assert_eq!(warned["changed"], json!(true), "{warned}");
    let diff = warned["diff"].to_string();
    assert!(
        diff.contains("neighbor 10.0.0.2 password ********"),
        "{diff}"
    );
    assert_eq!(
        warned["diff"].as_array().unwrap().len(),
        2,
        "file and record: {diff}"
    );
    assert!(
        !warned["warnings"].as_array().unwrap().is_empty(),
        "{warned}"
    );
    // The record as a parse error would have echoed it.
    fs::write(&record, r#"{"version": "password RecordSecret3"}"#).unwrap();
    let unreadable =
        run(&json!({"path": conf, "owner": "role", "owner_record": record, "lint": "off"}));
    assert_eq!(unreadable["failed"], json!(true), "{unreadable}");
    for result in [&health, &warned, &unreadable] {
        // `invocation` included: the task's own arguments, echoed by the runtime.
        let text = result.to_string();
        for secret in ["FileSecret1", "TaskSecret2", "RecordSecret3"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
    }
}
