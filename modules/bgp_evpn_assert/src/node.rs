//! The node's side: FRR's vtysh, run directly (no shell) with every command a `-c`, bounded in
//! time (`timeout`: killed by its PID on expiry) and in output (`max_output_bytes`: at most one
//! byte more is read, then it is killed). The binary is run only when nobody but root could
//! have planted or changed it: it runs as root and its output is acted on.

use crate::observe::Vtysh;
use deevnet_runtime::bounded_command::{self, NotFinished};
use deevnet_runtime::file_policy::{self, ProgramRefusal};
use deevnet_runtime::Failure;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
/// How much of a non-JSON answer a message quotes.
const QUOTED: usize = 200;

pub struct NodeVtysh {
    /// The binary as checked: its real path (links resolved).
    binary: PathBuf,
    /// As the task gave it, for messages.
    given: PathBuf,
    timeout: Duration,
    max_output_bytes: u64,
}

impl NodeVtysh {
    /// The vtysh at `path`, if it exists, is executable and is trusted (the file policy's rule
    /// for a program run as root).
    pub fn trusted(path: &Path, timeout: Duration, max_output_bytes: u64) -> Result<Self, String> {
        let shown = path.display();
        let binary = file_policy::trusted_program(path).map_err(|refusal| match refusal {
            ProgramRefusal::Missing => format!(
                "vtysh: {shown} does not exist; install FRR (apt-get install frr) or give the path of its vtysh; nothing was run"
            ),
            ProgramRefusal::NotAProgram(why) => format!(
                "vtysh: {shown} cannot be run: {why}; give the path of FRR's vtysh, e.g. /usr/bin/vtysh; nothing was run"
            ),
            ProgramRefusal::Untrusted(why) => untrusted(path, &why),
            ProgramRefusal::Unreadable(why) => format!("vtysh: {why}; nothing was run"),
        })?;
        Ok(NodeVtysh {
            binary,
            given: path.to_path_buf(),
            timeout,
            max_output_bytes,
        })
    }

    /// Runs the commands in one vtysh; its stdout, whole and within the cap.
    fn output(&self, commands: &[String]) -> Result<Vec<u8>, String> {
        let shown = self.given.display();
        let done = bounded_command::run_stopped_over_cap(
            Command::new(&self.binary)
                .args(commands.iter().flat_map(|c| ["-c", c.as_str()]))
                .env_clear()
                .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
            self.timeout,
            self.max_output_bytes,
        )
        .map_err(|e| match e {
            NotFinished::Spawn(e) => format!("vtysh: {shown} cannot be run: {e}; nothing was run"),
            NotFinished::Wait(e) => format!("vtysh: waiting for {shown} failed: {e}"),
            NotFinished::TimedOut => format!(
                "vtysh: {shown} did not finish within timeout={} s on `{}` and was stopped; is FRR running and answering (systemctl status frr)? raise timeout if the node is only slow",
                self.timeout.as_secs(),
                commands.join("`, `")
            ),
            NotFinished::OverCap => self.over_cap(commands),
        })?;
        if done.stdout.len() as u64 > self.max_output_bytes {
            return Err(self.over_cap(commands));
        }
        if !done.status.success() {
            let err = String::from_utf8_lossy(&done.stderr).trim().to_string();
            let said = if err.is_empty() {
                quote(&done.stdout)
            } else {
                err
            };
            return Err(format!(
                "vtysh: {shown} failed ({}) on `{}`: {said}; is FRR running (systemctl status frr)?",
                done.status,
                commands.join("`, `")
            ));
        }
        Ok(done.stdout)
    }

    fn over_cap(&self, commands: &[String]) -> String {
        format!(
            "vtysh: {} printed more than max_output_bytes={} bytes on `{}` and was stopped; raise max_output_bytes if the node's tables are that large",
            self.given.display(),
            self.max_output_bytes,
            commands.join("`, `")
        )
    }
}

impl Vtysh for NodeVtysh {
    fn run(&mut self, commands: &[String]) -> Result<Vec<Value>, Failure> {
        let out = self.output(commands)?;
        Ok(split_answers(&self.given, commands, &out)?)
    }
}

/// One vtysh run's stdout: one JSON value per command, printed one after the other.
pub fn split_answers(vtysh: &Path, commands: &[String], out: &[u8]) -> Result<Vec<Value>, String> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_slice(out).into_iter::<Value>() {
        match value {
            Ok(value) => values.push(value),
            Err(e) => {
                return Err(format!(
                    "vtysh: {} did not print JSON for `{}` ({e}): {}; is it FRR's vtysh, and does this FRR know these commands?",
                    vtysh.display(),
                    commands.get(values.len()).map_or("its commands", String::as_str),
                    quote(out)
                ))
            }
        }
    }
    if values.len() != commands.len() {
        return Err(format!(
            "vtysh: {} printed {} JSON value(s) for {} command(s) (`{}`): {}; is it FRR's vtysh?",
            vtysh.display(),
            values.len(),
            commands.len(),
            commands.join("`, `"),
            quote(out)
        ));
    }
    Ok(values)
}

fn quote(out: &[u8]) -> String {
    let text = String::from_utf8_lossy(out);
    let text = text.trim();
    if text.is_empty() {
        return "nothing".into();
    }
    let cut: String = text.chars().take(QUOTED).collect();
    if cut.len() < text.len() {
        format!("'{cut}…'")
    } else {
        format!("'{cut}'")
    }
}

fn untrusted(path: &Path, why: &str) -> String {
    format!(
        "vtysh: {} could have been planted or changed by another user than root ({why}), so it is not run: it would run as root; have root own it and its folders, writable by root only; nothing was run",
        path.display()
    )
}
