//! `check_mode_findings`: what an assertion module (one that changes nothing and fails on what
//! it finds) does with its findings in check mode.
//!
//! In check mode the tasks before the assertion changed nothing, so a finding may be exactly
//! what a real run would fix first. `fail` (the default) keeps the assertion an assertion;
//! `warn` reports each finding as one of the module's own `warnings`, which Ansible prints as a
//! real `[WARNING]` line on stderr (and AWX shows as a warning event), and the task succeeds
//! with its full result. Outside check mode, and for errors that are not findings (bad input,
//! a missing device), nothing changes: the task fails.
//!
//! `findings`: the same choice outside check mode, for an assertion an operator runs as a report
//! (the role's `warn` settings): `warn` turns every finding into a warning, in any mode.

use crate::protocol::{Context, Failure, Outcome};
use crate::spec::{DefaultValue, Kind, OptionSpec};

crate::choices! {
    /// `check_mode_findings`: fail on the findings in check mode, or report them as warnings.
    pub enum CheckModeFindings { Fail = "fail", Warn = "warn" }
}

/// The option, declared once for every module that takes it.
pub const CHECK_MODE_FINDINGS: OptionSpec = OptionSpec::new("check_mode_findings", Kind::Str)
    .choices(CheckModeFindings::CHOICES)
    .default(DefaultValue::Str("fail"));

crate::choices! {
    /// `findings`: fail on the findings, or report them as warnings, in any mode.
    pub enum Findings { Fail = "fail", Warn = "warn" }
}

/// The option, declared once for every module that takes it.
pub const FINDINGS: OptionSpec = OptionSpec::new("findings", Kind::Str)
    .choices(Findings::CHOICES)
    .default(DefaultValue::Str("fail"));

impl Findings {
    /// The run's end when the module found `findings` (non-empty) and would fail with
    /// `failure`: with `warn`, a success that carries the failure's result keys and message,
    /// each finding a warning; with `fail`, what `check_mode` says ([`CheckModeFindings::finish`]).
    pub fn finish<S: AsRef<str>>(
        self,
        check_mode: CheckModeFindings,
        ctx: &mut Context,
        findings: &[S],
        failure: Failure,
    ) -> Result<Outcome, Failure> {
        if self == Findings::Fail {
            return check_mode.finish(ctx, findings, failure);
        }
        for finding in findings {
            ctx.warn(finding.as_ref().to_string());
        }
        Ok(Outcome {
            changed: false,
            msg: format!(
                "not failed (findings=warn): {} finding{}, see the warnings: {}",
                findings.len(),
                if findings.len() == 1 { "" } else { "s" },
                failure.msg
            ),
            diff: failure.diff,
            data: failure.data,
        })
    }
}

/// What an assertion module does with its findings: `findings` in any mode, then
/// `check_mode_findings` in check mode.
#[derive(Debug, Clone, Copy)]
pub struct FindingsPolicy {
    pub findings: Findings,
    pub check_mode: CheckModeFindings,
}

impl FindingsPolicy {
    /// The end of an assertion's run, the one place that shapes it: when `passed`, a success
    /// saying `passed_msg`; else the failure `failed_msg`, which the policy may turn into
    /// warnings (one per finding). The report's keys are the result's either way, and
    /// `changed` is false: an assertion changes nothing.
    pub fn conclude<S: AsRef<str>>(
        self,
        ctx: &mut Context,
        passed: bool,
        findings: &[S],
        failed_msg: String,
        passed_msg: String,
        report: &impl serde::Serialize,
    ) -> Result<Outcome, Failure> {
        if !passed {
            let failure = Failure::new(failed_msg)
                .with("changed", false)
                .with_report(report);
            return self
                .findings
                .finish(self.check_mode, ctx, findings, failure);
        }
        let mut outcome = Outcome {
            changed: false,
            msg: passed_msg,
            ..Outcome::default()
        };
        outcome.set_report(report);
        Ok(outcome)
    }
}

/// What each warning says before the finding itself.
pub const WARNING_PREFIX: &str =
    "would still be wrong unless a task before this one fixes it (check mode): ";

impl CheckModeFindings {
    /// The run's end when the module found `findings` (non-empty) and would fail with
    /// `failure`: the failure itself, or in check mode with `warn` a success that carries the
    /// failure's result keys and message, each finding a warning.
    pub fn finish<S: AsRef<str>>(
        self,
        ctx: &mut Context,
        findings: &[S],
        failure: Failure,
    ) -> Result<Outcome, Failure> {
        if !(ctx.check_mode && self == CheckModeFindings::Warn) {
            return Err(failure);
        }
        for finding in findings {
            ctx.warn(format!("{WARNING_PREFIX}{}", finding.as_ref()));
        }
        Ok(Outcome {
            changed: false,
            msg: format!(
                "check mode, not failed (check_mode_findings=warn): {} finding{}, see the warnings: {}",
                findings.len(),
                if findings.len() == 1 { "" } else { "s" },
                failure.msg
            ),
            diff: failure.diff,
            data: failure.data,
        })
    }
}
