//! One module run: the state asked for, under the serialising lock of `state_dir` (two runs
//! on one node never interleave their reads and writes of the lock or a switch).

use crate::params::{Request, State};
use crate::records::{self, LockRecord, SwitchRecord, SwitchState};
use crate::report::Report;
use crate::state_dir::{self, StateDir};
use crate::{arming, restore, snapshot};
use deevnet_runtime::{atomic_file, Context, Failure, FileDiff, Outcome};

/// Runs the state `request` asks for.
pub fn run(ctx: &Context, request: &Request) -> Result<Outcome, Failure> {
    let creates = matches!(request.state, State::Locked | State::Armed) && !ctx.check_mode;
    let dir = StateDir::open(&request.state_dir, creates)?;
    let _serial = dir.serialise()?;
    match request.state {
        State::Locked => locked(ctx, &dir, request),
        State::Unlocked => unlocked(ctx, &dir, request),
        State::Armed => arming::armed(ctx, &dir, request),
        State::Confirmed => confirmed(ctx, &dir, request),
        State::Restored => restored(ctx, &dir, request),
        State::Status => status(&dir, request),
    }
}

/// The lock as it is.
pub fn read_lock(dir: &StateDir) -> Result<Option<LockRecord>, Failure> {
    Ok(dir.read_json(&dir.lock_file())?)
}

/// The run's switch as it is.
pub fn read_switch(dir: &StateDir, run_id: &str) -> Result<Option<SwitchRecord>, Failure> {
    Ok(dir.read_json(&dir.run_dir(run_id).join("switch.json"))?)
}

/// The refusal when another run holds the lock.
pub fn held_by_another(held: &LockRecord, request: &Request) -> Failure {
    Failure::new(format!(
        "the guard's lock on this node is held by run {} (holder {:?}, since {}), not by run_id={}: one guarded change at a time; wait for that run to end, or, if it died, clear its lock with state=unlocked run_id={}",
        held.run_id, held.holder, held.since, request.run_id, held.run_id
    ))
    .with_report(&Report {
        lock: Some(held.clone()),
        ..Report::default()
    })
}

fn locked(ctx: &Context, dir: &StateDir, request: &Request) -> Result<Outcome, Failure> {
    let held = read_lock(dir)?;
    let mut outcome = Outcome::default();
    let lock = match held {
        Some(held) if held.run_id == request.run_id => {
            outcome.msg = format!("the lock is held by run {} already", held.run_id);
            held
        }
        Some(held) => return Err(held_by_another(&held, request)),
        None => {
            let lock = LockRecord {
                run_id: request.run_id.clone(),
                holder: request.holder.clone(),
                since: records::utc(records::now()),
            };
            if !ctx.check_mode {
                let text = serde_json::to_string_pretty(&lock).map_err(|e| e.to_string())?;
                if !state_dir::create_exclusive(&dir.lock_file(), text.as_bytes())? {
                    // Only a writer outside the serialising lock (a hand edit) gets here.
                    return Err(Failure::new(format!(
                        "{} appeared during the run; run again",
                        dir.lock_file().display()
                    )));
                }
            }
            outcome.changed = true;
            outcome.msg = format!("lock taken for run {}", request.run_id);
            lock
        }
    };
    outcome.set_report(&Report {
        lock: Some(lock),
        ..Report::default()
    });
    Ok(outcome)
}

fn unlocked(ctx: &Context, dir: &StateDir, request: &Request) -> Result<Outcome, Failure> {
    let mut outcome = Outcome::default();
    match read_lock(dir)? {
        None => outcome.msg = "the lock is free".into(),
        Some(held) if held.run_id != request.run_id => {
            return Err(Failure::new(format!(
                "the guard's lock is held by run {} (holder {:?}, since {}), not by run_id={}; it is left as it is: release it with that run's run_id",
                held.run_id, held.holder, held.since, request.run_id
            ))
            .with_report(&Report {
                lock: Some(held),
                ..Report::default()
            }))
        }
        Some(_) => {
            if !ctx.check_mode {
                atomic_file::remove(&dir.target(&dir.lock_file())?, false)?;
            }
            outcome.changed = true;
            outcome.msg = format!("lock of run {} released", request.run_id);
        }
    }
    outcome.set_report(&Report::default());
    Ok(outcome)
}

/// The refusal when the run has no switch on this node.
pub fn never_armed(dir: &StateDir, request: &Request) -> Failure {
    Failure::new(format!(
        "run_id={} was never armed on this node (no {}): arm it first (state=armed), or give the run_id the controller armed",
        request.run_id,
        dir.run_dir(&request.run_id).join("switch.json").display()
    ))
    .with_report(&Report::default())
}

fn confirmed(ctx: &Context, dir: &StateDir, request: &Request) -> Result<Outcome, Failure> {
    let Some(mut record) = read_switch(dir, &request.run_id)? else {
        return Err(never_armed(dir, request));
    };
    let lock = read_lock(dir)?;
    let mut outcome = Outcome::default();
    match record.state {
        SwitchState::Confirmed => {
            outcome.msg = format!("run {} is confirmed already", record.run_id)
        }
        state if state.rolled_back() => {
            let report = Report {
                lock,
                ..Report::default()
            }
            .with_switch(&record, records::now());
            return Err(Failure::new(format!(
                "run {} cannot be confirmed: its switch already rolled it back (state {state}); the node runs the snapshot again: look at `restored` and `reloads`",
                record.run_id
            ))
            .with_report(&report));
        }
        _ => {
            if !ctx.check_mode {
                // Marked first: a switch that wakes up now finds the run confirmed and ends.
                record.state = SwitchState::Confirmed;
                dir.write_json(&dir.run_dir(&record.run_id).join("switch.json"), &record)?;
                arming::disarm(dir, &record);
                arming::remove_snapshot_copy(dir, &record.run_id)?;
            }
            record.state = SwitchState::Confirmed;
            outcome.changed = true;
            outcome.msg = format!("run {} confirmed: the switch is disarmed", record.run_id);
        }
    }
    outcome.set_report(
        &Report {
            lock,
            ..Report::default()
        }
        .with_switch(&record, records::now()),
    );
    Ok(outcome)
}

fn restored(ctx: &Context, dir: &StateDir, request: &Request) -> Result<Outcome, Failure> {
    let Some(mut record) = read_switch(dir, &request.run_id)? else {
        return Err(never_armed(dir, request));
    };
    let lock = read_lock(dir)?;
    let now = records::now();
    let mut outcome = Outcome::default();
    match record.state {
        state if state.rolled_back() => {
            outcome.msg = format!("run {} was rolled back already (state {state})", record.run_id)
        }
        SwitchState::Confirmed => {
            return Err(Failure::new(format!(
                "run {} is confirmed: its snapshot is gone, there is nothing to restore; undo the change with a new guarded change",
                record.run_id
            ))
            .with_report(&Report { lock, ..Report::default() }.with_switch(&record, now)))
        }
        _ => return restore_now(ctx, dir, &mut record, lock),
    }
    outcome.set_report(
        &Report {
            lock,
            ..Report::default()
        }
        .with_switch(&record, now),
    );
    Ok(outcome)
}

/// `restored` of an armed run: the diff, then (unless check mode) the restore, the record, the
/// switch ended.
fn restore_now(
    ctx: &Context,
    dir: &StateDir,
    record: &mut SwitchRecord,
    lock: Option<LockRecord>,
) -> Result<Outcome, Failure> {
    let run_dir = dir.run_dir(&record.run_id);
    let manifest: snapshot::Manifest = dir
        .read_json(&run_dir.join("manifest.json"))?
        .ok_or_else(|| Failure::new(format!("{}: the snapshot is missing", run_dir.display())))?;
    let pending = restore::pending(&manifest)?;
    let mut outcome = Outcome {
        changed: !pending.is_empty(),
        ..Outcome::default()
    };
    if ctx.diff {
        for action in &pending {
            let (now, then) = snapshot::texts(dir, &run_dir, action);
            outcome
                .diff
                .push(FileDiff::of_file(action.path(), &now, &then));
        }
    }
    if ctx.check_mode {
        let paths: Vec<_> = pending.iter().map(|a| a.path().to_path_buf()).collect();
        let reloads = restore::reloads_for(&record.reload, &paths);
        outcome.msg = format!(
            "run {} would be rolled back: {} file(s) restored, {} reload(s) run",
            record.run_id,
            paths.len(),
            reloads.len()
        );
        let report = Report {
            lock,
            restored: paths,
            ..Report::default()
        };
        outcome.set_report(&Report {
            switch: Some((&*record).into()),
            ..report
        });
        return Ok(outcome);
    }
    let done = restore::restore(dir, &run_dir, &manifest, &record.reload, true)?;
    record.state = SwitchState::Restored;
    record.restored.clone_from(&done.restored);
    record.reloads.clone_from(&done.reloads);
    dir.write_json(&run_dir.join("switch.json"), &*record)?;
    arming::disarm(dir, record);
    outcome.changed = true;
    let report = Report {
        lock,
        ..Report::default()
    }
    .with_switch(record, records::now());
    if !done.succeeded() {
        let failed: Vec<String> = done
            .reloads
            .iter()
            .filter(|r| r.rc != 0)
            .map(|r| r.argv.join(" "))
            .collect();
        let mut failure = Failure::new(format!(
            "run {} rolled back, but not cleanly: {}{}the files stay restored",
            record.run_id,
            done.errors
                .iter()
                .map(|e| format!("{e}; "))
                .collect::<String>(),
            failed
                .iter()
                .map(|a| format!("the reload `{a}` failed; "))
                .collect::<String>()
        ))
        .with_report(&report);
        failure.diff = outcome.diff;
        return Err(failure);
    }
    outcome.msg = format!(
        "run {} rolled back: {} file(s) restored, {} reload(s) run",
        record.run_id,
        done.restored.len(),
        done.reloads.len()
    );
    outcome.set_report(&report);
    Ok(outcome)
}

fn status(dir: &StateDir, request: &Request) -> Result<Outcome, Failure> {
    let lock = read_lock(dir)?;
    let record = read_switch(dir, &request.run_id)?;
    let report = Report {
        lock,
        ..Report::default()
    };
    let mut outcome = Outcome::default();
    match &record {
        Some(record) => {
            outcome.msg = format!("run {}: {}", record.run_id, record.state);
            outcome.set_report(&report.with_switch(record, records::now()));
        }
        None => {
            outcome.msg = format!("run {} was never armed on this node", request.run_id);
            outcome.set_report(&report);
        }
    }
    Ok(outcome)
}
