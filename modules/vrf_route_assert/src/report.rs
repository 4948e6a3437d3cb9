//! What a run found: one [`CheckResult`] per check, and the [`Report`] that gathers them with
//! the VRFs' states and the undeclared VRFs that leak; it splits them into failures and
//! warnings by the `undeclared_vrfs` policy.

use crate::defaults::VrfState;
use crate::fall_through::LeakingVrf;
use crate::params::UndeclaredVrfs;
use serde::Serialize;
use serde_json::Value;

/// One check and its outcome (the module's `checks` return value).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckResult {
    pub vrf: String,
    /// `vrf`, `default_route`, `no_fall_through`, `lookup <dst>`, `forwarding <dev>` or
    /// `rp_filter <dev>`.
    pub check: String,
    pub ok: bool,
    pub expected: Value,
    pub actual: Value,
    /// The check on one line, as the failure message lists it.
    pub msg: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub vrfs: Vec<VrfState>,
    pub checks: Vec<CheckResult>,
    /// The VRFs `vrfs` does not list whose lookups fall through (when they are inspected).
    pub leaking_vrfs: Vec<LeakingVrf>,
    #[serde(skip)]
    pub(crate) undeclared_vrfs: UndeclaredVrfs,
    /// Findings that fail nothing.
    #[serde(skip)]
    pub(crate) notes: Vec<String>,
    /// Why the undeclared VRFs could not be judged (a kernel without VRF support): a finding
    /// under `undeclared_vrfs`, never "none falls through".
    #[serde(skip)]
    pub(crate) undeclared_unknown: Option<String>,
}

impl Report {
    pub(crate) fn new(undeclared_vrfs: UndeclaredVrfs) -> Self {
        Report {
            vrfs: Vec::new(),
            checks: Vec::new(),
            leaking_vrfs: Vec::new(),
            undeclared_vrfs,
            notes: Vec::new(),
            undeclared_unknown: None,
        }
    }

    /// Why whether an undeclared VRF falls through could not be told, when it could not.
    pub fn undeclared_unknown(&self) -> Option<&str> {
        self.undeclared_unknown.as_deref()
    }

    /// Whether waiting could change the outcome: not when a VRF is missing (a VRF is made by
    /// the node's network configuration, never by a route arriving) or the kernel cannot have
    /// VRFs; the findings then stand at once.
    pub fn may_settle(&self) -> bool {
        self.undeclared_unknown.is_none() && !self.checks.iter().any(|r| !r.ok && r.check == "vrf")
    }

    /// One line per failed check (and per leaking undeclared VRF with `undeclared_vrfs=fail`);
    /// empty when all passed.
    pub fn failures(&self) -> Vec<&str> {
        let checks = self.checks.iter().filter(|r| !r.ok).map(|r| r.msg.as_str());
        let leaks = self.leaks_when(UndeclaredVrfs::Fail);
        checks
            .chain(leaks)
            .chain(self.unknown_when(UndeclaredVrfs::Fail))
            .collect()
    }

    /// What the task warns about: leaking undeclared VRFs with `undeclared_vrfs=warn`, and
    /// checks that could not be made.
    pub fn warnings(&self) -> Vec<&str> {
        let leaks = self.leaks_when(UndeclaredVrfs::Warn);
        leaks
            .chain(self.unknown_when(UndeclaredVrfs::Warn))
            .chain(self.notes.iter().map(String::as_str))
            .collect()
    }

    fn unknown_when(&self, policy: UndeclaredVrfs) -> Option<&str> {
        self.undeclared_unknown
            .as_deref()
            .filter(|_| self.undeclared_vrfs == policy)
    }

    fn leaks_when(&self, policy: UndeclaredVrfs) -> impl Iterator<Item = &str> {
        let reported = self.undeclared_vrfs == policy;
        self.leaking_vrfs
            .iter()
            .filter(move |_| reported)
            .map(|leak| leak.msg.as_str())
    }
}
