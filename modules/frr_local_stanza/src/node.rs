//! The node's side of one run ([`apply`]): the file resolved by the file policy and locked, read,
//! the owner record opened under its own lock, the staged file validated, and the writes in
//! their crash-safe order (the record, the file replaced atomically, the record again). What is
//! computed in between is pure: [`crate::edit`], [`crate::report`].

use crate::edit;
use crate::ownership::{self, Ownership};
use crate::params::Request;
use crate::report;
use crate::secrets::Secrets;
use crate::validate::Validator;
use deevnet_runtime::file_policy::{self, FileLock, Target};
use deevnet_runtime::{atomic_file, Failure, Outcome};
use std::path::{Path, PathBuf};

/// One run of a checked request: every secret the file or the record holds is taught to
/// `secrets` as it is read; the lint's warnings go to `warnings`. Any refusal happens before
/// the file is touched.
pub fn apply(
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
    let findings = report::lint_whole(request, &edited, stanzas.is_empty(), warnings)?;

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
    let mut outcome = report::outcome(
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

/// The writes, in their crash-safe order: the staged file validated, the owner record with
/// the new claims pending, the file, the record with the new claims (see [`Ownership`]).
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
