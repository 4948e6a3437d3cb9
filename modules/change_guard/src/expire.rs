//! The binary's modes outside Ansible: the switch (`--expire <state_dir> <run_id>`) and the
//! boot (`--boot <state_dir>`). Each re-checks `state_dir` first; each prints one JSON line of
//! what it did (to the run's `switch.log`, or the journal).

use crate::params::check_run_id;
use crate::records::{self, SwitchRecord, SwitchState, Timer};
use crate::restore::{self, Restore};
use crate::snapshot::Manifest;
use crate::state_dir::StateDir;
use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `--expire`: sleeps until the deadline (re-reading the record each second: a confirmed or
/// restored run ends it, a re-armed one moves the deadline), then restores as `state=restored`
/// does and marks the run `expired`. The exit status: 0 done or nothing to do, 1 a restore that
/// was not clean, 2 refused.
pub fn expire(state_dir: &Path, run_id: &str) -> i32 {
    // The SSH session's hangup must not end the switch (it is in a session of its own too).
    // SAFETY: setting a signal's disposition to ignore takes no pointers.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
    let dir = match open(state_dir).and_then(|dir| check_run_id(run_id).map(|()| dir)) {
        Ok(dir) => dir,
        Err(why) => return said(2, &json!({"run_id": run_id, "refused": why})),
    };
    loop {
        match wait_for_deadline(&dir, run_id) {
            Ok(Some(_)) => {}
            Ok(None) => return said(0, &json!({"run_id": run_id, "ended": "not armed"})),
            Err(why) => return said(2, &json!({"run_id": run_id, "refused": why})),
        }
        // A module run may hold the guard (a long reload): wait for it however long it takes,
        // looking again whether the run is still armed once it is done.
        let Ok(_serial) = dir.serialise() else {
            continue;
        };
        return match still_armed(&dir, run_id) {
            Ok(Some(record)) => roll_back(&dir, record, SwitchState::Expired, true),
            Ok(None) => said(0, &json!({"run_id": run_id, "ended": "not armed"})),
            Err(why) => said(2, &json!({"run_id": run_id, "refused": why})),
        };
    }
}

/// Sleeps until the run's deadline (the record re-read twice a second); `None` once the run is
/// no longer armed for this switch.
fn wait_for_deadline(dir: &StateDir, run_id: &str) -> Result<Option<SwitchRecord>, String> {
    loop {
        match still_armed(dir, run_id)? {
            Some(record) if records::now() >= record.deadline => return Ok(Some(record)),
            Some(_) => std::thread::sleep(Duration::from_millis(500)),
            None => return Ok(None),
        }
    }
}

/// `--boot`: every run still armed whose switch is not running is restored and marked
/// `booted`. The reloads do not run: the boot unit runs before the network starts, which then
/// reads the restored files itself.
pub fn boot(state_dir: &Path) -> i32 {
    let dir = match open(state_dir) {
        Ok(dir) => dir,
        Err(why) => return said(2, &json!({"refused": why})),
    };
    let _serial = match dir.serialise() {
        Ok(serial) => serial,
        Err(why) => return said(2, &json!({"refused": why})),
    };
    let mut status = 0;
    for run_id in run_ids(&dir) {
        let record = match crate::guard::read_switch(&dir, &run_id) {
            Ok(Some(record)) if record.state == SwitchState::Armed => record,
            Ok(_) => continue,
            Err(why) => {
                status = said(1, &json!({"run_id": run_id, "refused": why.msg}));
                continue;
            }
        };
        if crate::arming::switch_running(&dir, &record) {
            continue;
        }
        status = status.max(roll_back(&dir, record, SwitchState::Booted, false));
    }
    status
}

fn open(state_dir: &Path) -> Result<StateDir, String> {
    let dir = StateDir::open(state_dir, false)?;
    if !dir.exists {
        return Err(format!("state_dir={} does not exist", state_dir.display()));
    }
    Ok(dir)
}

/// The run's record while it is armed and this process is (or may be) its switch.
fn still_armed(dir: &StateDir, run_id: &str) -> Result<Option<SwitchRecord>, String> {
    let record = crate::guard::read_switch(dir, run_id).map_err(|f| f.msg)?;
    Ok(record.filter(|r| {
        let me = i32::try_from(std::process::id()).ok();
        let superseded = r.timer == Timer::Process && r.pid.is_some() && r.pid != me;
        r.state == SwitchState::Armed && !superseded
    }))
}

/// Restores the run, marks it `state`, prints what it did.
fn roll_back(dir: &StateDir, mut record: SwitchRecord, state: SwitchState, reloads: bool) -> i32 {
    let run_dir = dir.run_dir(&record.run_id);
    let done = dir
        .read_json::<Manifest>(&run_dir.join("manifest.json"))
        .and_then(|m| m.ok_or_else(|| "the snapshot is missing".to_string()))
        .and_then(|m| restore::restore(dir, &run_dir, &m, &record.reload, reloads));
    let done = match done {
        Ok(done) => done,
        Err(why) => Restore {
            errors: vec![why],
            ..Restore::default()
        },
    };
    record.state = state;
    record.restored.clone_from(&done.restored);
    record.reloads.clone_from(&done.reloads);
    let written = dir.write_json(&run_dir.join("switch.json"), &record);
    let line = json!({"run_id": record.run_id, "state": state, "restored": done.restored,
                      "reloads": done.reloads, "errors": done.errors,
                      "record": written.err()});
    said(if done.succeeded() { 0 } else { 1 }, &line)
}

fn run_ids(dir: &StateDir) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir.runs())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|id| check_run_id(id).is_ok())
        .collect();
    ids.sort();
    ids
}

fn said(status: i32, line: &serde_json::Value) -> i32 {
    println!("{line}");
    status
}

/// The binary's mode from its arguments: `Some(status)` after an `--expire` or `--boot` run,
/// `None` for a module run.
pub fn dispatch(args: &[OsString]) -> Option<i32> {
    match args.get(1).and_then(|a| a.to_str()) {
        Some("--expire") if args.len() == 4 => {
            let run_id = args[3].to_string_lossy();
            Some(expire(&PathBuf::from(&args[2]), &run_id))
        }
        Some("--boot") if args.len() == 3 => Some(boot(&PathBuf::from(&args[2]))),
        Some(mode @ ("--expire" | "--boot")) => {
            eprintln!("usage: change_guard --expire STATE_DIR RUN_ID | --boot STATE_DIR (got {mode} with other arguments)");
            Some(2)
        }
        _ => None,
    }
}
