//! The `validate` option: a command run on the staged file before it replaces the real one,
//! as Ansible's `template` does. It is split like a shell would (Python's shlex) but run
//! without one; its exit status and its output both count, because `vtysh -C` can exit 0
//! and still print `Unknown command` (spec A.4).

use deevnet_runtime::bounded_command::{self, NotFinished};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Output that means the staged file was refused even when the exit status is 0.
const REFUSAL_MARKERS: &[&str] = &[
    "Unknown command",
    "Ambiguous command",
    "Command incomplete",
    "early exit",
    "Warning",
];

/// How long a validate command may run before it is killed.
const TIME_LIMIT: Duration = Duration::from_secs(120);
/// How much of its output (each stream) is kept: enough for any refusal vtysh prints.
const MAX_OUTPUT: u64 = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validator {
    text: String,
    words: Vec<String>,
}

impl Validator {
    pub fn parse(text: &str) -> Result<Validator, String> {
        let words = shlex::split(text).ok_or_else(|| {
            format!("validate='{text}' has an unbalanced quote or a trailing backslash; quote it as a shell would")
        })?;
        if words.is_empty() {
            return Err("validate is empty; give a command with %s, e.g. `vtysh -C -f %s`".into());
        }
        if !words.iter().any(|w| w.contains("%s")) {
            return Err(format!(
                "validate must contain %s: {text}; %s stands for the staged file, e.g. `vtysh -C -f %s`"
            ));
        }
        Ok(Validator {
            text: text.to_string(),
            words,
        })
    }

    /// Runs the command on `staged`; `Err` says why the file is refused.
    pub fn run(&self, staged: &Path) -> Result<(), String> {
        let staged = staged.to_string_lossy();
        let words: Vec<String> = self
            .words
            .iter()
            .map(|w| w.replace("%s", &staged))
            .collect();
        let program = &words[0];
        let done = bounded_command::run(
            Command::new(program).args(&words[1..]),
            TIME_LIMIT,
            MAX_OUTPUT,
        )
        .map_err(|e| match e {
            NotFinished::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound => format!(
                "validate='{}': `{program}` is not installed on this host (not found on PATH); install it (for vtysh: apt-get install frr) or drop validate. Nothing was written",
                self.text
            ),
            NotFinished::Spawn(e) => {
                format!("validate='{}': cannot run `{program}`: {e}. Nothing was written", self.text)
            }
            NotFinished::TimedOut => format!(
                "validate='{}' ran for more than {} s and was stopped. Nothing was written",
                self.text,
                TIME_LIMIT.as_secs()
            ),
            NotFinished::Wait(e) => {
                format!("validate='{}': waiting for it failed: {e}", self.text)
            }
            // `run` keeps running past the cap; named for completeness.
            NotFinished::OverCap => format!(
                "validate='{}' printed more than {MAX_OUTPUT} bytes. Nothing was written",
                self.text
            ),
        })?;
        let status = done.status;
        let output = format!(
            "{}{}",
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        );
        let output = output.trim();
        if !status.success() {
            return Err(format!(
                "validate='{}' refused the new file ({status}): {output}. Nothing was written",
                self.text
            ));
        }
        if let Some(marker) = REFUSAL_MARKERS.iter().find(|m| output.contains(*m)) {
            return Err(format!(
                "validate='{}' exited 0 but printed `{marker}`: {output}. Nothing was written",
                self.text
            ));
        }
        Ok(())
    }
}
