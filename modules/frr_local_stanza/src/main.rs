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
use frr_local_stanza::ownership::{self, RecordFile};
use frr_local_stanza::params::{LintLevel, Params, SPEC};
use frr_local_stanza::rules::Severity;
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
    MODULE.run(run)
}

fn run(ctx: &mut Context, params: Params) -> Result<Outcome, Failure> {
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
    let path = params.path.as_path();
    // The file policy (check mode too): a masked, untrusted or non-regular file fails here.
    let target = file_policy::resolve("path", path, params.follow_untrusted_links)?;

    // 2. Read under the file's lock, held until the new file is in place.
    let _lock = FileLock::acquire(&target, lock_timeout)?;
    let before = file_policy::read_text(&target)?;
    let before_text = before.as_deref().unwrap_or_default();
    // The owner's record, under its own lock (always taken after the file's).
    let file_key = target.key.display().to_string();
    let mut owned = match owner {
        Some(owner) => {
            let record = RecordFile::open(
                &params.owner_record,
                params.follow_untrusted_links,
                lock_timeout,
                ctx.check_mode,
            )?;
            let recorded = record.entries(&file_key, owner);
            Some((owner, record, recorded))
        }
        None => None,
    };
    let declared = ownership::declared(&stanzas);
    let stanzas = match &owned {
        Some((_, _, recorded)) => ownership::take_back(stanzas, recorded),
        None => stanzas,
    };

    // 3. Compute the new file and lint all of it.
    let edited = edit::apply(before_text, &stanzas);
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
        ctx.warn(format!(
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

    // 4. Validate the staged file, then replace the real one. The record first holds both
    // what was and what is declared, so a run killed between the writes forgets nothing.
    let file_changed = edited.text != before_text;
    let record_after = owned.as_ref().map(|(owner, record, _)| {
        record
            .record
            .with_entries(&file_key, owner, declared.clone())
    });
    let record_changed = match (&owned, &record_after) {
        (Some((_, record, _)), Some(after)) => record.differs(after),
        _ => false,
    };
    let changed = file_changed || record_changed;
    let mut backup_file = None;
    if changed && !ctx.check_mode {
        if let Some(validator) = &validator {
            if file_changed {
                validate_staged(validator, &target.real, &edited.text)?;
            }
        }
        if file_changed {
            // Old and new entries recorded first: a crash between the two writes loses no
            // claim. Without a file write there is nothing to interrupt, so one record write.
            if let Some((owner, record, recorded)) = owned.as_mut() {
                let both = ownership::union(recorded, &declared);
                record.write(&record.record.with_entries(&file_key, owner, both))?;
            }
            backup_file = write(&target, &edited.text, params.backup)?;
        }
        if let (Some((_, record, _)), Some(after)) = (owned.as_mut(), &record_after) {
            record.write(after)?;
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
    if let (true, Some((_, record, _)), Some(after)) = (record_changed, &owned, &record_after) {
        outcome.diff.push(FileDiff::of_file(
            &params.owner_record,
            &record.text,
            &after.render(),
        ));
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
