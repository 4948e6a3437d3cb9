//! The dead-man's switch on the node: a process of its own that outlives the module and its
//! process group, fires at the deadline unless confirmed, and the boot's restore of a run whose
//! switch is gone. The timeouts are the minimum the module takes (10 s); these tests run side by
//! side.

use crate::support::{alive, binary, gone_within, kill, pid_of, Lab};
use serde_json::json;
use std::fs;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIRES_WITHIN: Duration = Duration::from_secs(30);

#[test]
fn armed_snapshots_the_paths_and_starts_a_switch_detached_from_the_module() {
    let lab = Lab::new();
    let conf = lab.conf();
    lab.lock("r1");
    let started = Instant::now();
    let armed = lab.run(json!({"state": "armed", "run_id": "r1", "timeout": 300,
        "paths": [conf, lab.path("etc/new.conf")]}));
    // The module's stdout is a pipe the test reads to its end: a switch holding it would keep
    // the run open for its whole timeout.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the run waited for its switch"
    );
    assert_eq!(armed["changed"], json!(true), "{armed}");
    assert_eq!(armed["switch"]["timer"], "process");
    assert_eq!(armed["switch"]["state"], "armed");
    assert_eq!(
        armed["snapshot"],
        json!([{"path": conf, "existed": true}, {"path": lab.path("etc/new.conf"), "existed": false}])
    );
    let remaining = armed["remaining"].as_u64().unwrap();
    assert!((295..=300).contains(&remaining), "{armed}");
    let pid = pid_of(&armed["switch"]);
    assert!(alive(pid));
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let state = fs::canonicalize(lab.state()).unwrap();
    assert_eq!(
        argv,
        [
            state.join("bin/change_guard").display().to_string(),
            "--expire".into(),
            state.display().to_string(),
            "r1".into()
        ]
    );
    // A session of its own (so no hangup of the SSH session reaches it), not the test's.
    let sid = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid))).unwrap();
    assert_ne!(sid, nix::unistd::getsid(None).unwrap());
    let copy = fs::metadata(state.join("bin/change_guard")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&copy.permissions()) & 0o777,
        0o700
    );
    assert_eq!(
        fs::read(state.join("bin/change_guard")).unwrap(),
        fs::read(binary()).unwrap()
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(state.join("runs/r1/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["files"][0]["sha256"].as_str().unwrap().len(), 64);
    let confirmed = lab.run(json!({"state": "confirmed", "run_id": "r1"}));
    assert_eq!(confirmed["changed"], json!(true), "{confirmed}");
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "confirmed left the switch running"
    );
    assert!(
        !state.join("runs/r1/manifest.json").exists(),
        "the snapshot copy stayed"
    );
    assert!(
        !state.join("runs/r1/files").exists(),
        "the snapshot copy stayed"
    );
}

#[test]
fn the_switch_fires_restores_every_change_and_runs_only_the_reloads_it_touched() {
    let lab = Lab::new();
    let etc = lab.path("etc");
    let changed = etc.join("interfaces");
    let deleted = etc.join("frr.conf");
    let created = etc.join("new.conf");
    let folder = etc.join("interfaces.d");
    fs::write(&changed, "auto lo\n").unwrap();
    fs::write(&deleted, "router bgp 65000\n").unwrap();
    fs::set_permissions(
        &deleted,
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("vmbr0"), "iface vmbr0\n").unwrap();
    std::os::unix::fs::symlink("vmbr0", folder.join("current")).unwrap();
    let (ifreload, frr, other) = (
        lab.reload_script("ifreload"),
        lab.reload_script("frr"),
        lab.reload_script("other"),
    );
    lab.lock("r1");
    let armed = lab.run(json!({"state": "armed", "run_id": "r1", "timeout": 10,
        "paths": [changed, deleted, created, folder],
        "reload": [{"paths": [changed, folder], "argv": [ifreload]},
                   {"paths": [etc.join("unrelated")], "argv": [other]},
                   {"paths": [deleted], "argv": [frr]},
                   {"paths": [folder], "argv": [ifreload]}]}));
    assert_eq!(armed["changed"], json!(true), "{armed}");
    // The change: one file edited, one removed, one created, a folder's file added and its
    // link moved.
    fs::write(&changed, "auto lo\nauto vmbr9\n").unwrap();
    fs::remove_file(&deleted).unwrap();
    fs::write(&created, "new\n").unwrap();
    fs::write(folder.join("vmbr9"), "iface vmbr9\n").unwrap();
    fs::remove_file(folder.join("current")).unwrap();
    std::os::unix::fs::symlink("vmbr9", folder.join("current")).unwrap();

    let record = lab.wait_for_state("r1", "expired", FIRES_WITHIN);
    assert_eq!(fs::read_to_string(&changed).unwrap(), "auto lo\n");
    assert_eq!(fs::read_to_string(&deleted).unwrap(), "router bgp 65000\n");
    let mode = fs::metadata(&deleted).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o640
    );
    assert!(!created.exists(), "a created file stayed");
    assert!(
        !folder.join("vmbr9").exists(),
        "a file created in a recorded folder stayed"
    );
    assert_eq!(
        fs::read_link(folder.join("current")).unwrap(),
        std::path::Path::new("vmbr0")
    );
    assert_eq!(
        lab.reload_log(),
        ["ifreload", "frr"],
        "each touched reload once, in order"
    );
    let status = lab.run(json!({"state": "status", "run_id": "r1"}));
    assert_eq!(status["switch"]["state"], "expired", "{status}");
    assert_eq!(status["restored"], record["restored"]);
    assert_eq!(status["restored"].as_array().unwrap().len(), 5, "{status}");
    assert_eq!(status["reloads"].as_array().unwrap().len(), 2, "{status}");
    assert_eq!(status["remaining"], json!(null));
    let restored = lab.run(json!({"state": "restored", "run_id": "r1"}));
    assert_eq!(restored["changed"], json!(false), "{restored}");
    assert_eq!(restored["reloads"], status["reloads"]);
}

#[test]
fn a_confirmed_run_stays_changed_after_its_deadline() {
    let lab = Lab::new();
    let conf = lab.conf();
    let pid = lab.arm_with_reload(&conf, 10);
    fs::write(&conf, "new\n").unwrap();
    let confirmed = lab.run(json!({"state": "confirmed", "run_id": "r1"}));
    assert_eq!(confirmed["changed"], json!(true), "{confirmed}");
    assert!(gone_within(pid, Duration::from_secs(5)));
    std::thread::sleep(Duration::from_secs(13));
    assert_eq!(
        fs::read_to_string(&conf).unwrap(),
        "new\n",
        "a confirmed run was restored"
    );
    assert!(lab.reload_log().is_empty());
    assert_eq!(lab.switch_record("r1")["state"], "confirmed");
}

#[test]
fn the_switch_survives_the_controller_s_death_and_its_process_group_killed() {
    let lab = Lab::new();
    let conf = lab.conf();
    lab.lock("r1");
    let args = lab.path("args.json");
    let mut values = json!({"state": "armed", "run_id": "r1", "timeout": 10, "paths": [conf]});
    values["state_dir"] = json!(lab.state());
    fs::write(&args, values.to_string()).unwrap();
    // The controller's side: a shell that runs the module and then waits, in a process group
    // of its own, as an SSH session's would be.
    let mut controller = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' '{}' >/dev/null; sleep 60",
            binary().display(),
            args.display()
        ))
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let started = Instant::now();
    let pid = loop {
        let record = lab.state().join("runs/r1/switch.json");
        if let Some(pid) = fs::read_to_string(&record)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|r| r["pid"].as_i64())
        {
            break pid as i32;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never armed");
        std::thread::sleep(Duration::from_millis(50));
    };
    fs::write(&conf, "new\n").unwrap();
    // The SSH session's hangup, sent to the switch itself.
    kill(pid, libc::SIGHUP);
    let group = controller.id() as i32;
    kill(-group, libc::SIGHUP);
    kill(-group, libc::SIGKILL);
    controller.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        alive(pid),
        "the switch died with the controller's process group"
    );
    lab.wait_for_state("r1", "expired", FIRES_WITHIN);
    assert_eq!(fs::read_to_string(&conf).unwrap(), "old\n");
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the switch lingered after firing"
    );
}

#[test]
fn boot_restores_an_armed_run_whose_switch_is_gone_and_leaves_a_live_one() {
    let lab = Lab::new();
    let conf = lab.conf();
    let pid = lab.arm_with_reload(&conf, 300);
    fs::write(&conf, "new\n").unwrap();
    let boot = || {
        Command::new(binary())
            .arg("--boot")
            .arg(lab.state())
            .output()
            .unwrap()
    };
    let early = boot();
    assert!(early.status.success(), "{early:?}");
    assert_eq!(
        lab.switch_record("r1")["state"],
        "armed",
        "boot restored a run whose switch runs"
    );
    assert_eq!(fs::read_to_string(&conf).unwrap(), "new\n");
    // The reboot: the switch is gone.
    kill(pid, libc::SIGKILL);
    assert!(gone_within(pid, Duration::from_secs(5)));
    let booted = boot();
    assert!(booted.status.success(), "{booted:?}");
    assert_eq!(fs::read_to_string(&conf).unwrap(), "old\n");
    let record = lab.switch_record("r1");
    assert_eq!(record["state"], "booted", "{record}");
    assert!(
        lab.reload_log().is_empty(),
        "boot ran a reload before the network"
    );
    let status = lab.run(json!({"state": "status", "run_id": "r1"}));
    assert_eq!(status["switch"]["state"], "booted", "{status}");
    assert_eq!(status["restored"], json!([conf]));
}

#[test]
fn the_switch_and_the_boot_refuse_a_planted_state_dir() {
    let lab = Lab::new();
    fs::create_dir(lab.state()).unwrap();
    std::os::unix::fs::chown(lab.state(), Some(65534), Some(0)).unwrap();
    for mode in [&["--boot"][..], &["--expire"][..]] {
        let mut command = Command::new(binary());
        command.args(mode).arg(lab.state());
        if mode[0] == "--expire" {
            command.arg("r1");
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("65534"), "{said}");
    }
}

#[test]
fn confirm_and_restore_never_signal_another_process_that_took_the_switch_s_pid() {
    let lab = Lab::new();
    let conf = lab.conf();
    lab.lock("r1");
    for (round, state) in ["confirmed", "restored"].into_iter().enumerate() {
        let run_id = format!("r{}", round + 1);
        if round > 0 {
            lab.run(json!({"state": "unlocked", "run_id": "r1"}));
            lab.lock(&run_id);
            // An older copy of the program: arming replaces it.
            fs::write(lab.state().join("bin/change_guard"), "#!/bin/sh\n").unwrap();
        }
        let armed =
            lab.run(json!({"state": "armed", "run_id": run_id, "timeout": 300, "paths": [conf]}));
        assert!(armed["switch"]["pid"].is_i64(), "round {round}: {armed}");
        let copy = fs::read(lab.state().join("bin/change_guard")).unwrap();
        assert_eq!(copy, fs::read(binary()).unwrap(), "round {round}");
        let pid = pid_of(&armed["switch"]);
        kill(pid, libc::SIGKILL);
        assert!(gone_within(pid, Duration::from_secs(5)));
        // Another process takes the switch's number: round 0 with another start time, round 1
        // with its own start time recorded too (only the command line differs).
        let mut stranger = Command::new("sleep").arg("60").spawn().unwrap();
        let stranger_pid = stranger.id() as i32;
        let record_path = lab.state().join("runs").join(&run_id).join("switch.json");
        let mut record = lab.switch_record(&run_id);
        record["pid"] = json!(stranger_pid);
        if round == 1 {
            let stat = fs::read_to_string(format!("/proc/{stranger_pid}/stat")).unwrap();
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .unwrap()
                .1
                .split_whitespace()
                .collect();
            record["start_time"] = json!(fields[19].parse::<u64>().unwrap());
        }
        fs::write(&record_path, record.to_string()).unwrap();
        let result = lab.run(json!({"state": state, "run_id": run_id}));
        assert_eq!(result["changed"], json!(true), "{result}");
        std::thread::sleep(Duration::from_millis(300));
        let survived = alive(stranger_pid);
        stranger.kill().unwrap();
        stranger.wait().unwrap();
        assert!(
            survived,
            "{state} signalled a process that was not the switch"
        );
    }
}
