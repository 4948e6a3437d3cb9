//! `state=armed`: the snapshot, `switch.json`, the switch's own copy of this binary, and the
//! switch started and seen running; and the switch's end ([`disarm`]).

use crate::guard::{held_by_another, read_lock, read_switch};
use crate::params::Request;
use crate::records::{self, SwitchRecord, SwitchState, Timer};
use crate::report::{Report, SnapshotItem};
use crate::snapshot::{self, Manifest};
use crate::state_dir::StateDir;
use crate::switch::{self, ProcessId};
use deevnet_runtime::atomic_file::{self, NewFile};
use deevnet_runtime::bounded_command;
use deevnet_runtime::file_policy;
use deevnet_runtime::{Context, Failure, Outcome};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `systemd-run` and `systemctl`, where Debian (merged /usr) has them.
const SYSTEMD_RUN: &str = "/usr/bin/systemd-run";
const SYSTEMCTL: &str = "/usr/bin/systemctl";
/// A `daemon-reload` of a loaded node can take tens of seconds.
const SYSTEMD_LIMIT: Duration = Duration::from_secs(90);

/// Arms the run (or keeps it armed): see the module's header.
pub fn armed(ctx: &Context, dir: &StateDir, request: &Request) -> Result<Outcome, Failure> {
    let lock = read_lock(dir)?;
    match &lock {
        Some(held) if held.run_id == request.run_id => {}
        Some(held) => return Err(held_by_another(held, request)),
        None => {
            return Err(Failure::new(format!(
                "run_id={} does not hold the guard's lock on this node: take it first (state=locked), then arm",
                request.run_id
            ))
            .with_report(&Report::default()))
        }
    }
    for (index, reload) in request.reload.iter().enumerate() {
        if let Err(refusal) = file_policy::trusted_program(Path::new(&reload.argv[0])) {
            return Err(Failure::new(format!(
                "reload[{index}].argv[0]={} is not run as root: {refusal}; give a program that root owns in folders only root can write; nothing was changed",
                reload.argv[0]
            )));
        }
    }
    let previous = read_switch(dir, &request.run_id)?;
    let timer = switch::timer_on(Path::new("/"));
    let mut outcome = match previous {
        Some(record) if record.state == SwitchState::Armed => {
            rearm(ctx, dir, request, record, timer)?
        }
        _ => arm_anew(ctx, dir, request, timer)?,
    };
    let record = read_switch(dir, &request.run_id)?;
    let manifest: Option<Manifest> =
        dir.read_json(&dir.run_dir(&request.run_id).join("manifest.json"))?;
    let mut report = Report {
        lock,
        ..Report::default()
    };
    if let Some(record) = &record {
        report = report.with_switch(record, records::now());
    }
    report.snapshot = manifest
        .map(|m| {
            m.files
                .iter()
                .map(|e| SnapshotItem {
                    path: e.path.clone(),
                    existed: e.existed,
                })
                .collect()
        })
        .unwrap_or_default();
    outcome.set_report(&report);
    Ok(outcome)
}

/// A run armed before: unchanged while its switch runs with the same timeout; a new deadline
/// when the timeout changed; a new switch when the old one is gone.
fn rearm(
    ctx: &Context,
    dir: &StateDir,
    request: &Request,
    mut record: SwitchRecord,
    timer: Timer,
) -> Result<Outcome, Failure> {
    let manifest: Option<Manifest> =
        dir.read_json(&dir.run_dir(&request.run_id).join("manifest.json"))?;
    if manifest.as_ref().map(|m| &m.paths) != Some(&request.paths) {
        return Err(Failure::new(format!(
            "run {} is armed with a snapshot of other paths; confirm or restore it first, or arm another run_id",
            request.run_id
        )));
    }
    let timeout = request.timeout.as_secs();
    let running = switch_running(dir, &record);
    if record.timeout == timeout && running {
        return Ok(Outcome {
            msg: format!("run {} is armed already", record.run_id),
            ..Outcome::default()
        });
    }
    if record.timeout != timeout {
        record.deadline = records::now() + timeout;
        record.timeout = timeout;
    }
    if !ctx.check_mode {
        dir.write_json(&dir.run_dir(&record.run_id).join("switch.json"), &record)?;
        if !running || record.timer == Timer::Systemd {
            disarm(dir, &record);
            start(dir, &mut record, timer)?;
        }
    }
    Ok(Outcome {
        changed: true,
        msg: format!(
            "run {} re-armed: the switch fires at {}",
            record.run_id,
            records::utc(record.deadline)
        ),
        ..Outcome::default()
    })
}

fn arm_anew(
    ctx: &Context,
    dir: &StateDir,
    request: &Request,
    timer: Timer,
) -> Result<Outcome, Failure> {
    // Every refusal of the paths first, in check mode too, before anything is written.
    let found = snapshot::collect(&request.paths)?.files;
    let timeout = request.timeout.as_secs();
    let mut record = SwitchRecord {
        run_id: request.run_id.clone(),
        deadline: records::now() + timeout,
        timeout,
        state: SwitchState::Armed,
        reload: request.reload.clone(),
        timer,
        unit: None,
        pid: None,
        start_time: None,
        restored: Vec::new(),
        reloads: Vec::new(),
    };
    if ctx.check_mode {
        return Ok(Outcome {
            changed: true,
            msg: format!(
                "run {} would be armed: {} file(s) in the snapshot",
                request.run_id,
                found.len()
            ),
            ..Outcome::default()
        });
    }
    let run_dir = dir.run_dir(&request.run_id);
    dir.subdir(&dir.runs())?;
    dir.subdir(&run_dir)?;
    snapshot::take(dir, &run_dir, &request.paths)?;
    dir.write_json(&run_dir.join("switch.json"), &record)?;
    if let Err(failure) = install_binary(dir).and_then(|()| start(dir, &mut record, timer)) {
        // Nothing armed stays behind a failure: no switch, and no record the boot would restore.
        disarm(dir, &record);
        let _ = remove_snapshot_copy(dir, &record.run_id);
        return Err(match fs::remove_file(run_dir.join("switch.json")) {
            Ok(()) => failure,
            Err(e) => Failure::new(format!(
                "{}; and its record {} is left armed ({e}): remove it before a reboot restores the snapshot",
                failure.msg,
                run_dir.join("switch.json").display()
            )),
        });
    }
    Ok(Outcome {
        changed: true,
        msg: format!(
            "run {} armed: the switch fires at {}",
            record.run_id,
            records::utc(record.deadline)
        ),
        ..Outcome::default()
    })
}

/// Copies this module's binary to `<state_dir>/bin/change_guard` (0700), replaced only when
/// different: the switch and the boot unit run that copy, which outlives Ansible's.
pub fn install_binary(dir: &StateDir) -> Result<(), Failure> {
    let own = std::env::current_exe()?;
    let bytes =
        fs::read(&own).map_err(|e| Failure::new(format!("reading {}: {e}", own.display())))?;
    let path = dir.binary();
    dir.subdir(&file_policy::parent_of(&path))?;
    let target = dir.target(&path)?;
    if !same_content(&target, &bytes)? {
        let program = NewFile {
            mode: 0o700,
            group: None,
        };
        atomic_file::replace(&target, &bytes, false, program)?;
    }
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// Whether the file holds `bytes` (a program is larger than the policy's read cap: read whole,
/// after a size check, opened by the policy).
fn same_content(target: &file_policy::Target, bytes: &[u8]) -> Result<bool, Failure> {
    use std::io::Read as _;
    let Some(mut file) = file_policy::open_regular(target)? else {
        return Ok(false);
    };
    if file.metadata()?.len() != bytes.len() as u64 {
        return Ok(false);
    }
    let mut existing = Vec::with_capacity(bytes.len());
    file.read_to_end(&mut existing)?;
    Ok(existing == bytes)
}

/// Starts the switch and records it; fails unless it was seen running.
fn start(dir: &StateDir, record: &mut SwitchRecord, timer: Timer) -> Result<(), Failure> {
    record.timer = timer;
    let binary = dir.binary();
    let run_dir = dir.run_dir(&record.run_id);
    match timer {
        Timer::Process => {
            let argv = switch::expire_argv(&binary, &dir.root, &record.run_id);
            let pid = switch::spawn_detached(&argv, &run_dir.join("switch.log"))?;
            let process = wait_for_process(pid, &argv).ok_or_else(|| {
                Failure::new(format!(
                    "the switch (pid {pid}) was not seen running; look at {}",
                    run_dir.join("switch.log").display()
                ))
            })?;
            record.pid = Some(pid);
            record.start_time = Some(process.start_time);
            record.unit = None;
        }
        Timer::Systemd => {
            let remaining =
                Duration::from_secs(record.deadline.saturating_sub(records::now()).max(1));
            // The boot unit first: a switch is never running without it.
            ensure_boot_unit(dir)?;
            systemd_run(&binary, &dir.root, &record.run_id, remaining)?;
            record.unit = Some(switch::unit_name(&record.run_id));
            record.pid = None;
            record.start_time = None;
        }
    }
    dir.write_json(&run_dir.join("switch.json"), &*record)?;
    Ok(())
}

fn wait_for_process(pid: i32, argv: &[std::ffi::OsString]) -> Option<ProcessId> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if let Some(process) = ProcessId::read(pid).filter(|p| p.argv == argv) {
            return Some(process);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Whether the run's switch is running now: its process (the very one recorded) or its timer.
pub fn switch_running(dir: &StateDir, record: &SwitchRecord) -> bool {
    match record.timer {
        Timer::Process => {
            let argv = switch::expire_argv(&dir.binary(), &dir.root, &record.run_id);
            switch::recorded_process(record, &argv).is_some()
        }
        Timer::Systemd => systemctl(&[
            "is-active",
            &format!("{}.timer", switch::unit_name(&record.run_id)),
        ])
        .is_ok_and(|out| out.trim() == "active"),
    }
}

/// Ends the run's switch: the recorded process (only while it is that process) or the unit.
/// The record says the run is no longer armed first, so a switch that survives ends by itself.
pub fn disarm(dir: &StateDir, record: &SwitchRecord) {
    match record.timer {
        Timer::Process => {
            let argv = switch::expire_argv(&dir.binary(), &dir.root, &record.run_id);
            switch::end_process(record, &argv);
        }
        Timer::Systemd => {
            let unit = switch::unit_name(&record.run_id);
            let _ = systemctl(&["stop", &format!("{unit}.timer"), &format!("{unit}.service")]);
        }
    }
}

/// Removes the run's copies and manifest (its record stays).
pub fn remove_snapshot_copy(dir: &StateDir, run_id: &str) -> Result<(), Failure> {
    let run_dir = dir.run_dir(run_id);
    let files = run_dir.join("files");
    if files.is_dir() {
        for entry in fs::read_dir(&files)?.flatten() {
            // unlink never follows a link.
            fs::remove_file(entry.path())?;
        }
        fs::remove_dir(&files)?;
    }
    let manifest = run_dir.join("manifest.json");
    if manifest.exists() {
        fs::remove_file(&manifest)?;
    }
    Ok(())
}

fn systemd_run(
    binary: &Path,
    state_dir: &Path,
    run_id: &str,
    timeout: Duration,
) -> Result<(), Failure> {
    let argv = switch::systemd_run_argv(binary, state_dir, run_id, timeout);
    let args: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    bounded_command::trusted_output(Path::new(SYSTEMD_RUN), &args, SYSTEMD_LIMIT, 1 << 16)?;
    let timer = format!("{}.timer", switch::unit_name(run_id));
    match systemctl(&["is-active", &timer]) {
        Ok(out) if out.trim() == "active" => Ok(()),
        Ok(out) => Err(Failure::new(format!(
            "the switch's timer {timer} is {} after systemd-run",
            out.trim()
        ))),
        Err(e) => Err(Failure::new(format!(
            "the switch's timer {timer} was not seen active: {e}"
        ))),
    }
}

fn systemctl(args: &[&str]) -> Result<String, String> {
    bounded_command::trusted_output(Path::new(SYSTEMCTL), args, SYSTEMD_LIMIT, 1 << 16)
}

/// The boot unit written (when different) and enabled.
fn ensure_boot_unit(dir: &StateDir) -> Result<(), Failure> {
    let text = switch::boot_unit(&dir.binary(), &dir.root);
    let path = PathBuf::from(switch::BOOT_UNIT_PATH);
    let target = file_policy::resolve("state_dir", &path, false)?;
    if file_policy::read_text(&target)?.as_deref() != Some(text.as_str()) {
        atomic_file::replace(&target, text.as_bytes(), false, atomic_file::PUBLIC_FILE)?;
        systemctl(&["daemon-reload"])?;
    }
    // `systemctl enable` reloads the manager too: only when the unit is not enabled yet.
    if systemctl(&["is-enabled", switch::BOOT_UNIT]).map(|out| out.trim().to_owned())
        != Ok("enabled".into())
    {
        systemctl(&["enable", switch::BOOT_UNIT])?;
    }
    Ok(())
}
