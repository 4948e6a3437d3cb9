//! What the module reports: each check's outcome and the result's `slaves`, `mtu`,
//! `fdb_vlan1`, `configured_slaves`, `guest_ports`, `guest_vlan_guard` and `guest_mtu`.

use crate::stack::HopRole;
use serde::Serialize;
use std::collections::BTreeMap;

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub expected: String,
    pub actual: String,
    /// What to do about a failure; empty when ok.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

impl Check {
    pub(crate) fn new(
        name: impl Into<String>,
        ok: bool,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        Check {
            name: name.into(),
            ok,
            expected: expected.into(),
            actual: actual.into(),
            fix: String::new(),
        }
    }
    pub(crate) fn fix_with(mut self, fix: impl Into<String>) -> Self {
        if !self.ok {
            self.fix = fix.into();
        }
        self
    }
    /// The line of the failure message.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{}: expected {}, found {}",
            self.name, self.expected, self.actual
        );
        if !self.fix.is_empty() {
            line.push_str("; ");
            line.push_str(&self.fix);
        }
        line
    }
}

/// `slaves` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlaveReport {
    pub name: String,
    pub driver: Option<String>,
    pub role: Option<&'static str>,
    pub feature: &'static str,
    pub enabled: bool,
    pub fixed: bool,
    pub changed: bool,
}

/// One hop in `mtu.hops`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HopReport {
    pub role: HopRole,
    pub mtu: Option<u32>,
    pub required: u32,
}

/// `mtu` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MtuReport {
    /// The requested zone MTU, or `null` when not given.
    pub zone_mtu: Option<u32>,
    /// What the uplink VLAN device allows the zone: its MTU minus the inner tag.
    pub uplink_allows: Option<u32>,
    pub hops: BTreeMap<String, HopReport>,
}

/// One MAC learned through the uplink without its inner tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostTag {
    pub mac: String,
    /// The VLAN it was learned in; `null` when the bridge learned it without one.
    pub vlan: Option<u16>,
}

/// Everything the module reports: the result's keys besides `changed` and `msg`, for success
/// and failure alike (tests/it/recorded.rs holds them to RETURN).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    pub slaves: Vec<SlaveReport>,
    pub mtu: MtuReport,
    pub fdb_vlan1: Vec<LostTag>,
    /// The slaves `interfaces_file` lists for the bond, in file order.
    pub configured_slaves: Vec<String>,
    /// Guest ports that can send tagged frames onto the uplink ([`crate::guest_ports`]).
    pub guest_ports: Vec<crate::guest_ports::GuestPortFinding>,
    pub guest_vlan_guard: GuardReport,
    /// The zone bridge's guest ports not at the zone's MTU ([`crate::guest_mtu`]).
    pub guest_mtu: crate::guest_mtu::GuestMtuReport,
}

/// `guest_vlan_guard` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuardReport {
    /// The option was set.
    pub requested: bool,
    /// The guard's table is in place and in force after this run (would be, in check mode).
    pub present: bool,
    /// Why it is not (absent, dormant, changed), with the fix; `null` when it is.
    pub not_in_force: Option<String>,
    /// This run put it in place (would, in check mode).
    pub changed: bool,
    /// What nft runs to put it in place; the role persists the same for boot.
    pub commands: String,
}

impl Report {
    pub fn failures(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| !c.ok).collect()
    }

    /// The message of a failed run: one line per failed check, then, when some guest port is
    /// not at the zone's MTU, their count.
    pub fn failure_message(&self) -> String {
        let mut lines: Vec<String> = self.failures().iter().map(|c| c.line()).collect();
        if self.guest_mtu.count > 0 {
            lines.push(self.guest_mtu.summary());
        }
        lines.join("\n")
    }

    /// The message of a run whose checks all passed: their number, `changes` (what the run
    /// changed, each after `; `), and the count of guest ports at the zone's MTU.
    pub fn success_message(&self, changes: &str) -> String {
        format!(
            "all {} QinQ checks passed{changes}; {}",
            self.checks.len(),
            self.guest_mtu.summary()
        )
    }

    /// The names of the failed checks, in order.
    pub fn failed_names(&self) -> Vec<&str> {
        self.failures().iter().map(|c| c.name.as_str()).collect()
    }
}
