//! What the module reports ([`Report`]: every result key besides `changed` and `msg`, declared
//! once for success and failure). Pure.

use crate::records::{LockRecord, ReloadRun, SwitchRecord, SwitchState, Timer};
use serde::Serialize;
use std::path::PathBuf;

/// The switch as the result shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchReport {
    pub run_id: String,
    pub deadline: u64,
    pub timer: Timer,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    pub state: SwitchState,
}

impl From<&SwitchRecord> for SwitchReport {
    fn from(record: &SwitchRecord) -> Self {
        SwitchReport {
            run_id: record.run_id.clone(),
            deadline: record.deadline,
            timer: record.timer,
            unit: record.unit.clone(),
            pid: record.pid,
            state: record.state,
        }
    }
}

/// One file of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotItem {
    pub path: PathBuf,
    pub existed: bool,
}

/// The result's keys (the module's RETURN documentation), every one in every result.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The collection's lock on the node, as it is after the run; null when free.
    pub lock: Option<LockRecord>,
    /// The run's switch after the run; null when the run was never armed.
    pub switch: Option<SwitchReport>,
    /// The files the snapshot holds (state=armed).
    pub snapshot: Vec<SnapshotItem>,
    /// The paths the restore put back or removed.
    pub restored: Vec<PathBuf>,
    /// The reload commands the restore ran.
    pub reloads: Vec<ReloadRun>,
    /// Seconds until the switch fires, while it is armed.
    pub remaining: Option<u64>,
}

impl Report {
    /// The switch's part of the report: its record, the restore it made, the time left.
    pub fn with_switch(mut self, record: &SwitchRecord, now: u64) -> Self {
        self.switch = Some(record.into());
        self.restored.clone_from(&record.restored);
        self.reloads.clone_from(&record.reloads);
        self.remaining =
            (record.state == SwitchState::Armed).then(|| record.deadline.saturating_sub(now));
        self
    }
}
