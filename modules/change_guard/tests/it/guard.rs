//! The module's states as a controller runs them: the lock, the refusals, check mode,
//! idempotence, a rollback now.

use crate::support::{alive, gone_within, pid_of, Lab};
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

fn failed(result: &Value) -> bool {
    result["failed"] == json!(true)
}

#[test]
fn the_lock_is_taken_refused_to_another_run_naming_its_holder_and_released_only_by_its_run() {
    let lab = Lab::new();
    let first = lab.run(json!({"state": "locked", "run_id": "run-a", "holder": "ctl1/alice"}));
    assert_eq!(first["changed"], json!(true), "{first}");
    assert_eq!(first["lock"]["run_id"], "run-a");
    let state = fs::metadata(lab.state()).unwrap();
    assert_eq!(
        state.permissions().mode() & 0o777,
        0o700,
        "state_dir is created 0700"
    );
    let on_disk: Value =
        serde_json::from_str(&fs::read_to_string(lab.state().join("lock")).unwrap()).unwrap();
    assert_eq!(on_disk["holder"], "ctl1/alice");

    let again = lab.run(json!({"state": "locked", "run_id": "run-a", "holder": "ctl1/alice"}));
    assert_eq!(again["changed"], json!(false), "{again}");

    let other = lab.run(json!({"state": "locked", "run_id": "run-b", "holder": "ctl2/bob"}));
    assert!(failed(&other), "{other}");
    let msg = other["msg"].as_str().unwrap();
    for needed in [
        "run-a",
        "ctl1/alice",
        on_disk["since"].as_str().unwrap(),
        "state=unlocked run_id=run-a",
    ] {
        assert!(msg.contains(needed), "{needed:?} not in {msg}");
    }
    let steal = lab.run(json!({"state": "unlocked", "run_id": "run-b"}));
    assert!(failed(&steal), "{steal}");
    assert!(steal["msg"].as_str().unwrap().contains("run-a"), "{steal}");
    assert!(
        lab.state().join("lock").exists(),
        "another run's lock is never removed"
    );

    let released = lab.run(json!({"state": "unlocked", "run_id": "run-a"}));
    assert_eq!(released["changed"], json!(true), "{released}");
    assert!(!lab.state().join("lock").exists());
    let free = lab.run(json!({"state": "unlocked", "run_id": "run-a"}));
    assert_eq!(free["changed"], json!(false), "{free}");
    let taken = lab.run(json!({"state": "locked", "run_id": "run-b", "holder": "ctl2/bob"}));
    assert_eq!(taken["changed"], json!(true), "{taken}");
}

#[test]
fn two_runs_locking_at_once_leave_one_holder_and_a_whole_lock_file() {
    for round in 0..8 {
        let lab = Lab::new();
        let args = |run_id: &str| json!({"state": "locked", "run_id": run_id, "holder": "h", "state_dir": lab.state()});
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(|| lab.run(args("run-a")));
            let b = scope.spawn(|| lab.run(args("run-b")));
            (a.join().unwrap(), b.join().unwrap())
        });
        let winners: Vec<&Value> = [&a, &b].into_iter().filter(|r| !failed(r)).collect();
        assert_eq!(winners.len(), 1, "round {round}: {a} {b}");
        let on_disk: Value =
            serde_json::from_str(&fs::read_to_string(lab.state().join("lock")).unwrap()).unwrap();
        assert_eq!(
            on_disk["run_id"], winners[0]["lock"]["run_id"],
            "round {round}"
        );
    }
}

#[test]
fn bad_input_is_refused_naming_the_parameter_the_value_and_the_fix_and_nothing_changes() {
    let lab = Lab::new();
    let cases = [
        (
            json!({"state": "locked", "run_id": "../evil"}),
            ["run_id", "../evil", "give 1 to 64"],
        ),
        (
            json!({"state": "armed", "run_id": "r1", "paths": ["etc/x"]}),
            ["paths", "etc/x", "absolute"],
        ),
        (
            json!({"state": "armed", "run_id": "r1", "paths": ["/etc/x"], "timeout": 5}),
            ["timeout", "5", "from 10 to 86400"],
        ),
        (
            json!({"state": "armed", "run_id": "r1", "paths": ["/etc/x"],
                   "reload": [{"paths": ["/etc/x"], "argv": ["systemctl", "reload", "frr"]}]}),
            ["reload[0].argv[0]", "systemctl", "absolute path"],
        ),
        (
            json!({"state": "locked", "run_id": "r1", "state_dir": "var/lib/x"}),
            ["state_dir", "var/lib/x", "absolute"],
        ),
    ];
    for (mut args, needed) in cases {
        let state_dir = args.get("state_dir").cloned();
        let result = match state_dir {
            Some(_) => {
                args["state_dir"] = json!("var/lib/x");
                deevnet_runtime::test_support::module_run::run_for(
                    crate::support::binary(),
                    &args,
                    Duration::from_secs(30),
                )
                .unwrap()
            }
            None => lab.run(args.clone()),
        };
        assert!(failed(&result), "{args}: {result}");
        let msg = result["msg"].as_str().unwrap();
        for word in needed {
            assert!(msg.contains(word), "{word:?} not in {msg}");
        }
        assert!(!lab.state().exists(), "{args}: state_dir created");
    }
}

#[test]
fn a_planted_state_dir_is_refused_naming_it_and_nothing_changes() {
    let lab = Lab::new();
    // Owned by another user.
    fs::create_dir(lab.state()).unwrap();
    std::os::unix::fs::chown(lab.state(), Some(65534), Some(65534)).unwrap();
    let result = lab.run(json!({"state": "locked", "run_id": "r1"}));
    assert!(failed(&result), "{result}");
    let msg = result["msg"].as_str().unwrap();
    assert!(
        msg.contains(&lab.state().display().to_string()) && msg.contains("65534"),
        "{msg}"
    );
    assert!(!lab.state().join("lock").exists());
    // Root's but writable by others.
    std::os::unix::fs::chown(lab.state(), Some(0), Some(0)).unwrap();
    fs::set_permissions(lab.state(), fs::Permissions::from_mode(0o777)).unwrap();
    let result = lab.run(json!({"state": "locked", "run_id": "r1"}));
    assert!(failed(&result), "{result}");
    assert!(
        result["msg"]
            .as_str()
            .unwrap()
            .contains("writable by its group or others"),
        "{result}"
    );
    assert!(!lab.state().join("lock").exists());
    // A folder above it writable by others (no sticky bit).
    let above = lab.path("open");
    fs::create_dir(&above).unwrap();
    fs::set_permissions(&above, fs::Permissions::from_mode(0o777)).unwrap();
    let mut args = json!({"state": "locked", "run_id": "r1"});
    args["state_dir"] = json!(above.join("state"));
    let result = deevnet_runtime::test_support::module_run::run_for(
        crate::support::binary(),
        &args,
        Duration::from_secs(30),
    )
    .unwrap();
    assert!(failed(&result), "{result}");
    assert!(
        result["msg"]
            .as_str()
            .unwrap()
            .contains(&above.display().to_string()),
        "{result}"
    );
    assert!(!above.join("state").exists());
    // The same folder, put right: accepted.
    fs::set_permissions(lab.state(), fs::Permissions::from_mode(0o700)).unwrap();
    let result = lab.run(json!({"state": "locked", "run_id": "r1"}));
    assert_eq!(result["changed"], json!(true), "{result}");
}

#[test]
fn check_mode_changes_nothing() {
    let lab = Lab::new();
    let conf = lab.conf();
    let locked = lab.run(json!({"state": "locked", "run_id": "r1", "_ansible_check_mode": true}));
    assert_eq!(locked["changed"], json!(true), "{locked}");
    assert!(!lab.state().exists(), "check mode created state_dir");
    lab.lock("r1");
    let arm = json!({"state": "armed", "run_id": "r1", "paths": [conf], "timeout": 60});
    let mut check = arm.clone();
    check["_ansible_check_mode"] = json!(true);
    let armed = lab.run(check.clone());
    assert_eq!(armed["changed"], json!(true), "{armed}");
    assert!(!lab.state().join("runs").exists(), "check mode armed");
    let armed = lab.run(arm);
    let pid = pid_of(&armed["switch"]);
    fs::write(&conf, "new\n").unwrap();
    let restore = lab.run(
        json!({"state": "restored", "run_id": "r1", "_ansible_check_mode": true,
                       "_ansible_diff": true}),
    );
    assert_eq!(restore["changed"], json!(true), "{restore}");
    assert_eq!(restore["restored"], json!([conf]), "{restore}");
    assert_eq!(restore["diff"][0]["before"], "new\n", "{restore}");
    assert_eq!(restore["diff"][0]["after"], "old\n", "{restore}");
    assert_eq!(
        fs::read_to_string(&conf).unwrap(),
        "new\n",
        "check mode restored"
    );
    let confirm =
        lab.run(json!({"state": "confirmed", "run_id": "r1", "_ansible_check_mode": true}));
    assert_eq!(confirm["changed"], json!(true), "{confirm}");
    assert!(alive(pid), "check mode ended the switch");
    assert_eq!(lab.switch_record("r1")["state"], "armed");
    let unlock = lab.run(json!({"state": "unlocked", "run_id": "r1", "_ansible_check_mode": true}));
    assert_eq!(unlock["changed"], json!(true), "{unlock}");
    assert!(lab.state().join("lock").exists());
    let done = lab.run(json!({"state": "confirmed", "run_id": "r1"}));
    assert_eq!(done["changed"], json!(true), "{done}");
}

#[test]
fn armed_needs_the_lock_and_refuses_what_it_cannot_restore_or_run_before_any_change() {
    let lab = Lab::new();
    let conf = lab.path("etc/a.conf");
    fs::write(&conf, "x\n").unwrap();
    let arm = |extra: Value| {
        let mut args = json!({"state": "armed", "run_id": "r1", "paths": [conf], "timeout": 60});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        lab.run(args)
    };
    let unlocked = arm(json!({}));
    assert!(failed(&unlocked), "{unlocked}");
    assert!(
        unlocked["msg"].as_str().unwrap().contains("state=locked"),
        "{unlocked}"
    );
    lab.lock("r1");
    let fifo = lab.path("etc/fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let refused = arm(json!({"paths": [lab.path("etc")]}));
    assert!(failed(&refused), "{refused}");
    assert!(
        refused["msg"]
            .as_str()
            .unwrap()
            .contains(&fifo.display().to_string()),
        "{refused}"
    );
    let open_folder = lab.path("open");
    fs::create_dir(&open_folder).unwrap();
    fs::set_permissions(&open_folder, fs::Permissions::from_mode(0o777)).unwrap();
    let planted = open_folder.join("reload");
    fs::write(&planted, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    let untrusted = arm(json!({"reload": [{"paths": [conf], "argv": [planted]}]}));
    assert!(failed(&untrusted), "{untrusted}");
    assert!(
        untrusted["msg"]
            .as_str()
            .unwrap()
            .contains("reload[0].argv[0]"),
        "{untrusted}"
    );
    assert!(
        !lab.state().join("runs").join("r1").exists(),
        "a refused arm wrote its run"
    );
}

#[test]
fn restored_rolls_back_now_runs_the_touched_reloads_and_reports_it_once() {
    let lab = Lab::new();
    let conf = lab.conf();
    fs::set_permissions(&conf, fs::Permissions::from_mode(0o644)).unwrap();
    let touched = lab.reload_script("touched");
    let untouched = lab.reload_script("untouched");
    lab.lock("r1");
    let armed = lab.run(
        json!({"state": "armed", "run_id": "r1", "paths": [conf], "timeout": 300,
        "reload": [{"paths": [lab.path("etc")], "argv": [touched, "arg"]},
                   {"paths": [lab.path("elsewhere")], "argv": [untouched]}]}),
    );
    let pid = pid_of(&armed["switch"]);
    fs::write(&conf, "new\n").unwrap();
    // Same content, another owner and mode: put back too.
    std::os::unix::fs::chown(&conf, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&conf, fs::Permissions::from_mode(0o666)).unwrap();
    let started = Instant::now();
    let restored = lab.run(json!({"state": "restored", "run_id": "r1", "_ansible_diff": true}));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "restored waited for the timer"
    );
    assert_eq!(restored["changed"], json!(true), "{restored}");
    assert_eq!(fs::read_to_string(&conf).unwrap(), "old\n");
    let meta = fs::metadata(&conf).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((meta.uid(), meta.gid(), meta.mode() & 0o777), (0, 0, 0o644));
    assert_eq!(restored["restored"], json!([conf]));
    assert_eq!(restored["switch"]["state"], "restored");
    assert_eq!(restored["reloads"][0]["rc"], 0, "{restored}");
    assert_eq!(restored["reloads"][0]["stdout"], "reloaded touched\n");
    assert_eq!(
        restored["reloads"].as_array().unwrap().len(),
        1,
        "{restored}"
    );
    assert_eq!(lab.reload_log(), ["touched"]);
    assert_eq!(restored["diff"][0]["after"], "old\n", "{restored}");
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the switch outlived the restore"
    );
    let again = lab.run(json!({"state": "restored", "run_id": "r1"}));
    assert_eq!(again["changed"], json!(false), "{again}");
    assert_eq!(again["restored"], json!([conf]), "{again}");
    assert_eq!(
        lab.reload_log(),
        ["touched"],
        "a second restored ran the reload again"
    );
    let confirm = lab.run(json!({"state": "confirmed", "run_id": "r1"}));
    assert!(failed(&confirm), "a rolled-back run confirmed: {confirm}");
}

#[test]
fn a_failing_reload_fails_the_run_and_the_files_stay_restored() {
    let lab = Lab::new();
    let conf = lab.conf();
    let script = lab.path("bin/fails");
    fs::write(&script, "#!/bin/sh\necho broken >&2\nexit 3\n").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    lab.lock("r1");
    lab.run(
        json!({"state": "armed", "run_id": "r1", "paths": [conf], "timeout": 300,
        "reload": [{"paths": [conf], "argv": [script]}]}),
    );
    fs::write(&conf, "new\n").unwrap();
    let restored = lab.run(json!({"state": "restored", "run_id": "r1"}));
    assert!(failed(&restored), "{restored}");
    assert_eq!(restored["reloads"][0]["rc"], 3, "{restored}");
    assert_eq!(restored["reloads"][0]["stderr"], "broken\n", "{restored}");
    assert_eq!(fs::read_to_string(&conf).unwrap(), "old\n");
}

#[test]
fn idempotence_a_second_armed_and_a_second_confirmed_change_nothing() {
    let lab = Lab::new();
    let conf = lab.conf();
    lab.lock("r1");
    let arm = json!({"state": "armed", "run_id": "r1", "paths": [conf], "timeout": 300});
    let first = lab.run(arm.clone());
    assert_eq!(first["changed"], json!(true), "{first}");
    let second = lab.run(arm.clone());
    assert_eq!(second["changed"], json!(false), "{second}");
    assert_eq!(
        second["switch"], first["switch"],
        "a second arm moved the switch"
    );
    let mut longer = arm.clone();
    longer["timeout"] = json!(600);
    let rearmed = lab.run(longer);
    assert_eq!(rearmed["changed"], json!(true), "{rearmed}");
    assert!(rearmed["switch"]["deadline"].as_u64() > first["switch"]["deadline"].as_u64());
    assert_eq!(
        rearmed["switch"]["pid"], first["switch"]["pid"],
        "the running switch re-reads its deadline"
    );
    let confirmed = lab.run(json!({"state": "confirmed", "run_id": "r1"}));
    assert_eq!(confirmed["changed"], json!(true), "{confirmed}");
    assert_eq!(confirmed["switch"]["state"], "confirmed");
    let again = lab.run(json!({"state": "confirmed", "run_id": "r1"}));
    assert_eq!(again["changed"], json!(false), "{again}");
    let never = lab.run(json!({"state": "confirmed", "run_id": "r2"}));
    assert!(
        failed(&never) && never["msg"].as_str().unwrap().contains("r2"),
        "{never}"
    );
    let status = lab.run(json!({"state": "status", "run_id": "r1"}));
    assert_eq!(status["changed"], json!(false));
    assert_eq!(status["switch"]["state"], "confirmed", "{status}");
    assert_eq!(status["lock"]["run_id"], "r1", "{status}");
}

#[test]
fn a_missing_state_dir_and_its_missing_parents_are_created_for_a_run_that_writes() {
    let lab = Lab::new();
    let nested = lab.path("var/lib/deevnet/fabric-change");
    let mut args = json!({"state": "status", "run_id": "r1"});
    args["state_dir"] = json!(nested);
    let run = |args: &Value| {
        deevnet_runtime::test_support::module_run::run_for(
            crate::support::binary(),
            args,
            Duration::from_secs(30),
        )
        .unwrap()
    };
    let status = run(&args);
    assert_eq!(status["changed"], json!(false), "{status}");
    assert_eq!(status["lock"], json!(null), "{status}");
    assert!(!lab.path("var").exists(), "a read-only run created folders");
    args["state"] = json!("locked");
    let locked = run(&args);
    assert_eq!(locked["changed"], json!(true), "{locked}");
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&nested), 0o700);
    assert_eq!(mode(&lab.path("var/lib/deevnet")), 0o755);
}

#[test]
fn an_arm_that_fails_after_its_snapshot_leaves_no_record_a_boot_would_restore() {
    let lab = Lab::new();
    let conf = lab.conf();
    lab.lock("r1");
    // The switch's program cannot be installed: a folder stands where its copy goes.
    fs::create_dir_all(lab.state().join("bin/change_guard")).unwrap();
    let armed = lab.run(json!({"state": "armed", "run_id": "r1", "timeout": 300, "paths": [conf]}));
    assert!(failed(&armed), "{armed}");
    let run = lab.state().join("runs/r1");
    assert!(
        !run.join("switch.json").exists(),
        "a failed arm left its record"
    );
    assert!(!run.join("files").exists() && !run.join("manifest.json").exists());
    let status = lab.run(json!({"state": "status", "run_id": "r1"}));
    assert_eq!(status["switch"], json!(null), "{status}");
}
