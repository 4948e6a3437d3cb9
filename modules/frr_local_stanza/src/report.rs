//! What a run returns: the result keys ([`Returned`], declared once for success and failure),
//! the outcome of a run with its diffs ([`outcome`]), the lint's verdict on the whole new file
//! ([`lint_whole`]) and the one-line summary. Pure: [`crate::node`] calls it with what the run
//! read and did.

use crate::edit::{Change, Edited};
use crate::lint::{self, Finding, LintOptions};
use crate::params::{LintLevel, Request};
use crate::rules::Severity;
use deevnet_runtime::{Failure, FileDiff, Outcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The module's result keys (RETURN), declared once for success and failure.
#[derive(serde::Serialize)]
pub struct Returned<'a> {
    /// Each declared stanza's header and what happened to it.
    pub stanzas: BTreeMap<&'a str, Change>,
    pub lint: &'a [Finding],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_file: Option<String>,
}

/// `stanzas` in the result: each requested header with what happened to it.
pub fn changes(edited: &Edited) -> BTreeMap<&str, Change> {
    edited
        .changes
        .iter()
        .map(|(header, change)| (header.as_str(), *change))
        .collect()
}

/// What the run did: the file's diff (and the record's), each stanza's change, the findings.
pub fn outcome(
    request: &Request,
    changed: bool,
    before: &str,
    edited: &Edited,
    findings: Vec<Finding>,
    record_diff: Option<(String, String)>,
    backup_file: Option<PathBuf>,
) -> Outcome {
    let mut outcome = Outcome {
        changed,
        msg: summary(&edited.changes, &findings),
        ..Outcome::default()
    };
    if edited.text != before {
        let diff = FileDiff::of_file(&request.path, before, &edited.text);
        outcome.diff.push(diff);
    }
    if let (Some((before, after)), Some(owner)) = (record_diff, &request.owner) {
        let diff = FileDiff::of_file(&owner.record, &before, &after);
        outcome.diff.push(diff);
    }
    outcome.set_report(&Returned {
        stanzas: changes(edited),
        lint: &findings,
        backup_file: backup_file.map(|backup| backup.display().to_string()),
    });
    outcome
}

/// The findings on the whole new file: with `lint=error`, one that Proxmox's merge breaks
/// fails the task (nothing written); the others are warnings.
pub fn lint_whole(
    request: &Request,
    edited: &Edited,
    health_check: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<Finding>, Failure> {
    let findings = match request.lint {
        LintLevel::Off => Vec::new(),
        _ => lint::lint(
            &edited.text,
            &LintOptions {
                asn: request.asn.clone(),
            },
        ),
    };
    let is_error = |f: &Finding| f.severity == Severity::Error;
    if request.lint == LintLevel::Error && findings.iter().any(is_error) {
        let msg = lint_failure(&request.path, &findings, health_check);
        return Err(Failure::new(msg).with_report(&Returned {
            stanzas: changes(edited),
            lint: &findings,
            backup_file: None,
        }));
    }
    for finding in &findings {
        let severity = match finding.severity {
            Severity::Error => "Proxmox's merge breaks this",
            Severity::Warning => "worth knowing",
        };
        warnings.push(format!(
            "{} line {}: {} ({severity}): {}",
            request.path.display(),
            finding.line,
            finding.rule,
            finding.msg
        ));
    }
    Ok(findings)
}

fn lint_failure(path: &Path, findings: &[Finding], health_check: bool) -> String {
    let errors: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("line {}: {}: {}", f.line, f.rule, f.msg))
        .collect();
    let (subject, consequence) = if health_check {
        (format!("{} has", path.display()), "")
    } else {
        (
            format!("the new {} would have", path.display()),
            "; nothing was written (lint=warn writes anyway)",
        )
    };
    format!(
        "{subject} {} construct(s) that Proxmox's merge drops, changes or breaks{consequence}: {}",
        errors.len(),
        errors.join(" | ")
    )
}

fn summary(changes: &[(String, Change)], findings: &[Finding]) -> String {
    let count = |wanted: Change| changes.iter().filter(|(_, c)| *c == wanted).count();
    let mut parts: Vec<String> = [
        (Change::Added, "added"),
        (Change::Updated, "updated"),
        (Change::Removed, "removed"),
        (Change::Unchanged, "unchanged"),
    ]
    .iter()
    .filter(|(change, _)| count(*change) > 0)
    .map(|(change, word)| format!("{} {word}", count(*change)))
    .collect();
    if parts.is_empty() {
        parts.push("no stanzas given".into());
    }
    let lint = match findings.len() {
        0 => "lint clean".to_string(),
        n => format!("{n} lint finding(s)"),
    };
    format!("{}; {lint}", parts.join(", "))
}
