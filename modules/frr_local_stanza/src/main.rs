//! deevnet.net.frr_local_stanza — FRR stanzas in `/etc/frr/frr.conf.local`, the file Proxmox
//! VE merges into the `frr.conf` it generates on every SDN apply.
//!
//! Flow: check the arguments (`params`) → lock and read the file → with `owner`, take back
//! what the owner wrote and no longer declares (`ownership`) → apply the stanzas, the rest of
//! the file kept byte for byte (`edit`) → lint the whole result against Proxmox's merge
//! (`lint`) → validate the staged file → replace it atomically, the owner record's writes
//! around it in their crash-safe order → report, every secret masked (`secrets`). Any refusal
//! happens before the file is touched. With no `stanzas`, the task is a health check.

use deevnet_runtime::file_policy::{self, FileLock, Target};
use deevnet_runtime::{atomic_file, Context, Failure, FileDiff, Module, Outcome};
use frr_local_stanza::edit::{self, Change, Edited};
use frr_local_stanza::lint::{self, Finding, LintOptions};
use frr_local_stanza::ownership::{self, Ownership};
use frr_local_stanza::params::{LintLevel, Params, Request, SPEC};
use frr_local_stanza::rules::Severity;
use frr_local_stanza::secrets::Secrets;
use frr_local_stanza::validate::Validator;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

static MODULE: Module = Module {
    name: "frr_local_stanza",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(run)
}

/// The run, with every secret the task, the file or the record holds masked in what it
/// returns: messages, lint findings, warnings, diffs, result keys, and the echoed arguments.
fn run(ctx: &mut Context, params: Params) -> Result<Outcome, Failure> {
    let mut secrets = Secrets::default();
    secrets.learn_stanzas(params.stanzas.as_deref().unwrap_or_default());
    let mut warnings = Vec::new();
    let result = Request::from_params(params)
        .and_then(|request| apply(&request, ctx.check_mode, &mut secrets, &mut warnings));
    for warning in warnings {
        ctx.warn(secrets.mask(&warning));
    }
    for value in secrets.values() {
        ctx.hide_in_invocation(value.as_str());
    }
    secrets.mask_result(result)
}

/// One run of a checked request.
fn apply(
    request: &Request,
    check_mode: bool,
    secrets: &mut Secrets,
    warnings: &mut Vec<String>,
) -> Result<Outcome, Failure> {
    // The file policy (check mode too): a masked, untrusted or non-regular file fails here.
    let target = file_policy::resolve("path", &request.path, request.follow_untrusted_links)?;
    // Read under the file's lock, held until the new file is in place; then the record.
    let _lock = FileLock::acquire(&target, request.lock_timeout)?;
    let before = file_policy::read_text(&target)?.unwrap_or_default();
    secrets.learn(&before);
    let mut ownership = open_record(request, &target, &before, check_mode)?;
    if let Some(ownership) = &ownership {
        secrets.learn_record(ownership.record());
    }

    // The stanzas, with what the owner wrote and no longer declares taken back, applied;
    // the whole new file linted.
    let stanzas = match &ownership {
        Some(ownership) => ownership::take_back(request.stanzas.clone(), ownership.held()),
        None => request.stanzas.clone(),
    };
    let edited = edit::apply(&before, &stanzas);
    secrets.learn(&edited.text);
    let findings = lint_whole(request, &edited, stanzas.is_empty(), warnings)?;

    // Validate the staged file, then replace the real one, the record's writes around it.
    let file_changed = edited.text != before;
    if let Some(ownership) = ownership.as_mut() {
        ownership.plan(&before, &edited.text, &request.stanzas)?;
    }
    let record_changed = ownership.as_ref().is_some_and(Ownership::changes);
    // validate only reads the staged file (vtysh -C changes nothing), so check mode runs it too:
    // a check run that would be refused says so. Staged in a private folder there, so that
    // check mode writes nothing beside the target.
    let validated = file_changed && request.validator.is_some();
    if let (true, Some(validator)) = (validated && check_mode, &request.validator) {
        let folder = tempfile::Builder::new()
            .prefix("deevnet-frr-validate.")
            .tempdir()
            .map_err(|e| format!("cannot make a private folder to stage the new file for validate (check mode): {e}"))?;
        validate_staged(
            validator,
            &folder.path().join("frr.conf.local"),
            &edited.text,
        )?;
    }
    let mut backup_file = None;
    if (file_changed || record_changed) && !check_mode {
        backup_file = write(
            request,
            &target,
            &edited.text,
            file_changed,
            ownership.as_mut(),
        )?;
    }

    let changed = file_changed || record_changed;
    let record_diff = ownership
        .as_ref()
        .filter(|_| record_changed)
        .map(Ownership::diff);
    let mut outcome = report(
        request,
        changed,
        &before,
        &edited,
        findings,
        record_diff,
        backup_file,
    );
    if validated {
        // Said in check mode as well: validate ran on the new file there too.
        outcome.msg.push_str("; validate accepted the new file");
    }
    Ok(outcome)
}

/// With `owner`, its record, under its own lock (always taken after the file's).
fn open_record(
    request: &Request,
    target: &Target,
    before: &str,
    check_mode: bool,
) -> Result<Option<Ownership>, Failure> {
    let Some(owner) = &request.owner else {
        return Ok(None);
    };
    let ownership = Ownership::open(
        &owner.record,
        target,
        before,
        (&owner.name, &request.stanzas),
        request.follow_untrusted_links,
        request.lock_timeout,
        check_mode,
    )?;
    Ok(Some(ownership))
}

/// What the run did: the file's diff (and the record's), each stanza's change, the findings.
fn report(
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
fn lint_whole(
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

/// `stanzas` in the result: each requested header with what happened to it.
/// The module's result keys (RETURN), declared once for success and failure.
#[derive(serde::Serialize)]
struct Returned<'a> {
    /// Each declared stanza's header and what happened to it.
    stanzas: BTreeMap<&'a str, Change>,
    lint: &'a [Finding],
    #[serde(skip_serializing_if = "Option::is_none")]
    backup_file: Option<String>,
}

fn changes(edited: &Edited) -> BTreeMap<&str, Change> {
    edited
        .changes
        .iter()
        .map(|(header, change)| (header.as_str(), *change))
        .collect()
}

/// The writes, in their crash-safe order: the staged file validated, the owner record with
/// the new claims pending, the file, the record with the new claims (see `Ownership`).
fn write(
    request: &Request,
    target: &Target,
    text: &str,
    file_changed: bool,
    mut ownership: Option<&mut Ownership>,
) -> Result<Option<PathBuf>, Failure> {
    let mut backup_file = None;
    if file_changed {
        if let Some(validator) = &request.validator {
            validate_staged(validator, &target.real, text)?;
        }
        if let Some(ownership) = ownership.as_deref_mut() {
            ownership.before_file_write()?;
        }
        backup_file = replace(target, text, request.backup)?;
    }
    if let Some(ownership) = ownership {
        ownership.after_file_write()?;
    }
    Ok(backup_file)
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

/// The candidate is staged beside the target (created exclusively, mode 0600), never in a
/// shared /tmp where another user could interfere with it.
fn validate_staged(validator: &Validator, target: &Path, text: &str) -> Result<(), Failure> {
    let folder = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let staged = tempfile::Builder::new()
        .prefix(".frr.conf.local.")
        .suffix(".staged")
        .tempfile_in(folder)
        .and_then(|staged| std::fs::write(staged.path(), text).map(|()| staged))
        .map_err(|e| format!("cannot stage the new file for validate: {e}"))?;
    Ok(validator.run(staged.path())?)
}

/// Replaces the file; a new one is created `0640`, group `frr` where that group exists (as
/// Debian's FRR package keeps `/etc/frr`): the file may hold BGP passwords.
fn replace(target: &Target, text: &str, backup: bool) -> Result<Option<PathBuf>, Failure> {
    const PRIVATE_FRR_FILE: atomic_file::NewFile = atomic_file::NewFile {
        mode: 0o640,
        group: Some("frr"),
    };
    Ok(atomic_file::replace(
        target,
        text.as_bytes(),
        backup,
        PRIVATE_FRR_FILE,
    )?)
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
