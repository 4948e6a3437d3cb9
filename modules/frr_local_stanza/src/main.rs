//! deevnet.net.frr_local_stanza — FRR stanzas in `/etc/frr/frr.conf.local`, the file Proxmox
//! VE merges into the `frr.conf` it generates on every SDN apply.
//!
//! Flow: check the arguments → lock the folder and read the file → apply the stanzas (the
//! rest of the file is kept byte for byte) → lint the whole result against Proxmox's merge →
//! validate the staged file → replace the file atomically → report. Any refusal happens
//! before the file is touched. With no `stanzas`, the task is a health check of the file.
//! With `owner`, what that owner wrote earlier and no longer declares is taken back, and what
//! it declares now is recorded in `owner_record` (see `ownership`).

use deevnet_runtime::file_policy::{self, FileLock, Target};
use deevnet_runtime::{atomic_file, Context, Failure, FileDiff, Module, Outcome};
use frr_local_stanza::edit::{self, Change};
use frr_local_stanza::lint::{self, Finding, LintOptions};
use frr_local_stanza::ownership::{self, Ownership};
use frr_local_stanza::params::{LintLevel, Params, SPEC};
use frr_local_stanza::rules::Severity;
use frr_local_stanza::secrets::Secrets;
use frr_local_stanza::stanza::{self, Checks};
use frr_local_stanza::validate::Validator;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

static MODULE: Module = Module {
    name: "frr_local_stanza",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(run_masked)
}

/// The run, with every secret the task, the file or the record holds masked in the result:
/// messages, lint findings, warnings, diffs, result keys (see `secrets`).
fn run_masked(ctx: &mut Context, params: Params) -> Result<Outcome, Failure> {
    let mut secrets = Secrets::default();
    for stanza in params.stanzas.iter().flatten() {
        learn_stanza(&mut secrets, stanza);
    }
    let mut warnings = Vec::new();
    let result = run(ctx.check_mode, &mut warnings, &mut secrets, params);
    for warning in warnings {
        ctx.warn(secrets.mask(&warning));
    }
    match result {
        Ok(mut outcome) => {
            outcome.msg = secrets.mask(&outcome.msg);
            mask_diffs(&secrets, &mut outcome.diff);
            mask_data(&secrets, &mut outcome.data);
            Ok(outcome)
        }
        Err(mut failure) => {
            failure.msg = secrets.mask(&failure.msg);
            mask_diffs(&secrets, &mut failure.diff);
            mask_data(&secrets, &mut failure.data);
            Err(failure)
        }
    }
}

fn learn_stanza(secrets: &mut Secrets, stanza: &stanza::Stanza) {
    secrets.learn(&stanza.header);
    stanza.lines.iter().for_each(|line| secrets.learn(line));
    stanza
        .children
        .iter()
        .for_each(|child| learn_stanza(secrets, child));
}

fn learn_entries(secrets: &mut Secrets, entries: &[ownership::Entry]) {
    for entry in entries {
        secrets.learn(&entry.header);
        entry.lines.iter().for_each(|line| secrets.learn(line));
        learn_entries(secrets, &entry.children);
    }
}

fn mask_diffs(secrets: &Secrets, diffs: &mut [FileDiff]) {
    for diff in diffs {
        diff.before = secrets.mask(&diff.before);
        diff.after = secrets.mask(&diff.after);
    }
}

fn mask_data(secrets: &Secrets, data: &mut serde_json::Map<String, serde_json::Value>) {
    let mut value = serde_json::Value::Object(std::mem::take(data));
    secrets.mask_json(&mut value);
    if let serde_json::Value::Object(map) = value {
        *data = map;
    }
}

fn run(
    check_mode: bool,
    warnings: &mut Vec<String>,
    secrets: &mut Secrets,
    params: Params,
) -> Result<Outcome, Failure> {
    // 1. Arguments: everything that can be refused without reading the file.
    let asn = match params.asn {
        None => None,
        Some(asn @ 1..=4_294_967_295) => Some(asn.to_string()),
        Some(other) => {
            return Err(Failure::new(format!(
                "asn={other} is not a BGP AS number; give the ASN of the router Proxmox generates (1 to 4294967295), e.g. the EVPN controller's"
            )))
        }
    };
    let lock_timeout = file_policy::lock_timeout(params.lock_timeout)?;
    let stanzas = stanza::check(
        params.stanzas.as_deref().unwrap_or_default(),
        Checks {
            refuse_unrecognised_headers: params.lint == LintLevel::Error,
            asn: asn.as_deref(),
        },
    )
    .map_err(Failure::new)?;
    let validator = params
        .validate
        .as_deref()
        .map(Validator::parse)
        .transpose()
        .map_err(Failure::new)?;
    let owner = params.owner.as_deref().map(check_owner).transpose()?;
    if owner.is_some() {
        ownership::check_owned(&stanzas).map_err(Failure::new)?;
    }
    let path = params.path.as_path();
    // The file policy (check mode too): a masked, untrusted or non-regular file fails here.
    let target = file_policy::resolve("path", path, params.follow_untrusted_links)?;

    // 2. Read under the file's lock, held until the new file is in place.
    let _lock = FileLock::acquire(&target, lock_timeout)?;
    let before = file_policy::read_text(&target)?;
    let before_text = before.as_deref().unwrap_or_default();
    secrets.learn(before_text);
    // The owner's record, under its own lock (always taken after the file's).
    let mut ownership = match owner {
        Some(owner) => {
            let ownership = Ownership::open(
                &params.owner_record,
                &target,
                before_text,
                owner,
                params.follow_untrusted_links,
                lock_timeout,
                check_mode,
            )?;
            for owners in ownership.record().files.values() {
                owners.values().for_each(|e| learn_entries(secrets, e));
            }
            for owners in ownership.record().pending.values() {
                owners
                    .values()
                    .for_each(|p| learn_entries(secrets, &p.entries));
            }
            Some(ownership)
        }
        None => None,
    };
    let declared = stanzas.clone();
    let stanzas = match &ownership {
        Some(ownership) => ownership::take_back(stanzas, ownership.held()),
        None => stanzas,
    };

    // 3. Compute the new file and lint all of it.
    let edited = edit::apply(before_text, &stanzas);
    secrets.learn(&edited.text);
    let findings = match params.lint {
        LintLevel::Off => Vec::new(),
        _ => lint::lint(&edited.text, &LintOptions { asn }),
    };
    let changes: BTreeMap<&str, Change> = edited
        .changes
        .iter()
        .map(|(header, change)| (header.as_str(), *change))
        .collect();
    let blocking =
        params.lint == LintLevel::Error && findings.iter().any(|f| f.severity == Severity::Error);
    if blocking {
        return Err(
            Failure::new(lint_failure(path, &findings, stanzas.is_empty()))
                .with("lint", &findings)
                .with("stanzas", &changes),
        );
    }
    for finding in &findings {
        warnings.push(format!(
            "{} line {}: {} ({}): {}",
            path.display(),
            finding.line,
            finding.rule,
            match finding.severity {
                Severity::Error => "Proxmox's merge breaks this",
                Severity::Warning => "worth knowing",
            },
            finding.msg
        ));
    }

    // 4. Validate the staged file, then replace the real one, the record's writes around it
    // in their crash-safe order (see ownership::Ownership).
    let file_changed = edited.text != before_text;
    if let Some(ownership) = ownership.as_mut() {
        ownership
            .plan(before_text, &edited.text, &declared)
            .map_err(Failure::new)?;
    }
    let record_changed = ownership.as_ref().is_some_and(Ownership::changes);
    let changed = file_changed || record_changed;
    let mut backup_file = None;
    if changed && !check_mode {
        if let Some(validator) = &validator {
            if file_changed {
                validate_staged(validator, &target.real, &edited.text)?;
            }
        }
        if file_changed {
            if let Some(ownership) = ownership.as_mut() {
                ownership.before_file_write()?;
            }
            backup_file = write(&target, &edited.text, params.backup)?;
        }
        if let Some(ownership) = ownership.as_mut() {
            ownership.after_file_write()?;
        }
    }

    // 5. Report.
    let mut outcome = Outcome {
        changed,
        msg: summary(&edited.changes, &findings),
        ..Outcome::default()
    };
    if file_changed {
        outcome
            .diff
            .push(FileDiff::of_file(path, before_text, &edited.text));
    }
    if let (true, Some(ownership)) = (record_changed, &ownership) {
        let (before, after) = ownership.diff();
        outcome
            .diff
            .push(FileDiff::of_file(&params.owner_record, &before, &after));
    }
    outcome.set("stanzas", &changes);
    outcome.set("lint", &findings);
    if let Some(backup) = backup_file {
        outcome.set("backup_file", backup.display().to_string());
    }
    Ok(outcome)
}

/// `owner`: a name, one line of text (it keys the record).
fn check_owner(owner: &str) -> Result<&str, Failure> {
    if owner.trim().is_empty() || owner.chars().any(char::is_control) {
        return Err(Failure::new(format!(
            "owner={owner:?} is not a name; give one line of text that names who writes these stanzas, such as deevnet.net.proxmox_node_network"
        )));
    }
    Ok(owner)
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
        .map_err(|e| Failure::new(format!("cannot stage the new file for validate: {e}")))?;
    std::fs::write(staged.path(), text)
        .map_err(|e| Failure::new(format!("cannot stage the new file for validate: {e}")))?;
    validator.run(staged.path()).map_err(Failure::new)
}

/// Replaces the file; a new one is created `0640`, group `frr` where that group exists (as
/// Debian's FRR package keeps `/etc/frr`): the file may hold BGP passwords.
fn write(target: &Target, text: &str, backup: bool) -> Result<Option<PathBuf>, Failure> {
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
