//! A command run to its end within a time limit, its output read up to a cap: for the tools a
//! module runs on the node (frr_local_stanza's `validate`, qinq_check's `nft -j list ruleset`),
//! so that a hung or chatty tool can neither hold the run nor fill its memory.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a command left behind when it ended.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// At most the cap plus one byte, so that [`Finished::over_cap`] can tell.
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    cap: u64,
}

impl Finished {
    /// Whether stdout or stderr printed more than the cap.
    pub fn over_cap(&self) -> bool {
        self.stdout.len() as u64 > self.cap || self.stderr.len() as u64 > self.cap
    }
}

/// Why a command did not end by itself.
#[derive(Debug)]
pub enum NotFinished {
    /// It could not be started (not found, not executable).
    Spawn(std::io::Error),
    /// It ran past the limit and was killed.
    TimedOut,
    /// It printed more than the cap on stdout and was killed ([`run_stopped_over_cap`] only).
    OverCap,
    Wait(std::io::Error),
}

/// Runs `command` (stdin from /dev/null, stdout and stderr piped) until it ends or `limit`
/// passes, when it is killed; each stream is kept up to `cap` bytes (plus one) and the rest is
/// read and dropped, so that the command never blocks on a full pipe.
pub fn run(command: &mut Command, limit: Duration, cap: u64) -> Result<Finished, NotFinished> {
    run_bounded(command, limit, cap, false)
}

/// [`run`] for a command whose output is useless once over the cap (a JSON answer cut short):
/// it is killed as soon as stdout passes the cap, instead of running on to the time limit.
pub fn run_stopped_over_cap(
    command: &mut Command,
    limit: Duration,
    cap: u64,
) -> Result<Finished, NotFinished> {
    run_bounded(command, limit, cap, true)
}

fn run_bounded(
    command: &mut Command,
    limit: Duration,
    cap: u64,
    stop_over_cap: bool,
) -> Result<Finished, NotFinished> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(NotFinished::Spawn)?;
    let stdout_over_cap = Arc::new(AtomicBool::new(false));
    let stdout = drain(child.stdout.take(), cap, Some(stdout_over_cap.clone()));
    let stderr = drain(child.stderr.take(), cap, None);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if stop_over_cap && stdout_over_cap.load(Ordering::Relaxed) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotFinished::OverCap);
            }
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotFinished::TimedOut);
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotFinished::Wait(e));
            }
        }
    };
    Ok(Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        cap,
    })
}

/// Reads `source` to its end in a thread of its own, keeping `cap` bytes plus one; `over_cap`
/// is raised once more than the cap has come.
fn drain<R: Read + Send + 'static>(
    source: Option<R>,
    cap: u64,
    over_cap: Option<Arc<AtomicBool>>,
) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(source) = source {
            let mut kept = source.take(cap + 1);
            let _ = kept.read_to_end(&mut bytes);
            if bytes.len() as u64 > cap {
                if let Some(flag) = &over_cap {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            let _ = std::io::copy(&mut kept.into_inner(), &mut std::io::sink());
        }
        bytes
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_capped_and_a_hung_command_is_killed() {
        let done = run(
            Command::new("sh").args(["-c", "head -c 100000 /dev/zero; echo err >&2"]),
            Duration::from_secs(10),
            1000,
        )
        .unwrap();
        assert!(done.status.success());
        assert_eq!(done.stdout.len(), 1001);
        assert!(done.over_cap());
        assert_eq!(done.stderr, b"err\n");

        let started = Instant::now();
        let hung = run(
            Command::new("sleep").arg("30"),
            Duration::from_millis(200),
            1000,
        );
        assert!(matches!(hung, Err(NotFinished::TimedOut)), "{hung:?}");
        assert!(started.elapsed() < Duration::from_secs(5));

        let missing = run(
            &mut Command::new("/nonexistent/tool"),
            Duration::from_secs(1),
            10,
        );
        assert!(matches!(missing, Err(NotFinished::Spawn(_))));
    }

    #[test]
    fn endless_output_is_stopped_at_the_cap_when_asked() {
        let started = Instant::now();
        let endless = run_stopped_over_cap(&mut Command::new("yes"), Duration::from_secs(30), 1000);
        assert!(matches!(endless, Err(NotFinished::OverCap)), "{endless:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let within =
            run_stopped_over_cap(Command::new("echo").arg("ok"), Duration::from_secs(5), 1000)
                .unwrap();
        assert_eq!(within.stdout, b"ok\n");
    }
}
