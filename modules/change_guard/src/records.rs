//! The guard's records on the node, as JSON in `state_dir`: the collection's lock
//! ([`LockRecord`]) and each run's switch ([`SwitchRecord`]), with what a restore did
//! ([`ReloadRun`]). Pure.

use crate::params::Reload;
use deevnet_runtime::choices;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// The collection's lock on a node: which run holds it, who runs it, since when (UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockRecord {
    pub run_id: String,
    pub holder: String,
    pub since: String,
}

choices! {
    /// Where a run's switch is: waiting, disarmed by the controller, or rolled back by the
    /// controller (`restored`), by its own timer (`expired`) or at boot (`booted`).
    pub enum SwitchState {
        Armed = "armed",
        Confirmed = "confirmed",
        Restored = "restored",
        Expired = "expired",
        Booted = "booted",
    }
}

impl SwitchState {
    /// Whether the snapshot was put back.
    pub fn rolled_back(self) -> bool {
        matches!(
            self,
            SwitchState::Restored | SwitchState::Expired | SwitchState::Booted
        )
    }
}

choices! {
    /// What fires the switch: a transient systemd timer, or a detached process of its own.
    pub enum Timer { Systemd = "systemd", Process = "process" }
}

/// One reload command a restore ran: its output's tails.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReloadRun {
    pub argv: Vec<String>,
    /// The exit status; -1 when it did not run or was killed.
    pub rc: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `runs/<run_id>/switch.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchRecord {
    pub run_id: String,
    /// Epoch seconds when the switch fires.
    pub deadline: u64,
    /// The timeout the deadline came from (a re-arm with another timeout moves the deadline).
    pub timeout: u64,
    pub state: SwitchState,
    pub reload: Vec<Reload>,
    pub timer: Timer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The process's start time (clock ticks since boot, `/proc/<pid>/stat` field 22).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<u64>,
    /// What the restore put back and ran, once rolled back.
    #[serde(default)]
    pub restored: Vec<PathBuf>,
    #[serde(default)]
    pub reloads: Vec<ReloadRun>,
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `2026-12-07T14:15:00Z` for epoch seconds.
pub fn utc(epoch: u64) -> String {
    let days = epoch / 86400;
    let secs = epoch % 86400;
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Howard Hinnant's days-to-civil: the proleptic Gregorian date of a day count since 1970.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
