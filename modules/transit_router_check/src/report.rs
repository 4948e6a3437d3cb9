//! The result: each check, the state it adds up to, and what was observed on the way; the
//! run fails when any check fails, its message the state and each violation with its fix.

use crate::routes::VpcRoute;
use deevnet_runtime::{Failure, Outcome};
use serde::Serialize;

/// One check: its name, whether it passed, what was found, and the command or step that fixes
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub message: String,
    pub fix: String,
}

impl Check {
    pub fn pass(name: &'static str, message: impl Into<String>) -> Check {
        Check {
            name,
            ok: true,
            message: message.into(),
            fix: String::new(),
        }
    }

    pub fn fail(name: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name,
            ok: false,
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// What transit traffic meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// The table decides it first and the routing gate stands behind it.
    Enforced,
    /// Nothing is forwarded: forwarding is off, or the table does not decide and the gate holds.
    Closed,
    /// Forwarding is on and the table does not decide (or decides with no gate behind it).
    Open,
}

impl State {
    fn word(self) -> &'static str {
        match self {
            State::Enforced => "enforced",
            State::Closed => "closed",
            State::Open => "open",
        }
    }
}

/// A forward base chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForwardChain {
    pub family: String,
    pub table: String,
    pub chain: String,
    pub priority: i64,
    pub policy: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Gate {
    pub ipv4: bool,
    pub ipv6: bool,
}

/// The runtime values of `net.ipv4.ip_forward` and `net.ipv4.conf.<transit>.forwarding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Forwarding {
    pub ip_forward: bool,
    pub transit: bool,
}

/// Every result key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub state: State,
    pub checks: Vec<Check>,
    pub violations: Vec<&'static str>,
    pub forward_chains: Vec<ForwardChain>,
    pub routes_into_vpc: Vec<VpcRoute>,
    pub gate: Gate,
    pub forwarding: Forwarding,
    pub nft_version: String,
}

impl Report {
    /// The run's end: success when every check passed, else a failure whose message is the
    /// state and each violation with its fix; the report's keys either way.
    pub fn conclude(&self) -> Result<Outcome, Failure> {
        if self.violations.is_empty() {
            let mut outcome = Outcome::default();
            outcome.set_report(self);
            outcome.msg = format!(
                "transit router {}: all {} checks passed",
                self.state.word(),
                self.checks.len()
            );
            return Ok(outcome);
        }
        let lines: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| format!("{}: {} Fix: {}", c.name, c.message, c.fix))
            .collect();
        Err(Failure::new(format!(
            "transit router {}: {}",
            self.state.word(),
            lines.join("\n")
        ))
        .with("changed", false)
        .with_report(self))
    }
}
