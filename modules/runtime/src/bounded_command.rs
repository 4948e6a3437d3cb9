//! A command run to its end within a time limit, its output read up to a cap: for the tools a
//! module runs on the node (frr_local_stanza's `validate`, qinq_check's `nft -j list ruleset`),
//! so that a hung or chatty tool can neither hold the run nor fill its memory.

use crate::file_policy::{self, ProgramRefusal};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;
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

/// Runs `command` (stdin from /dev/null, stdout and stderr piped, in a process group of its
/// own) until it has exited and its pipes are closed, or `limit` passes, when the whole group is
/// killed and the pipes are no longer read; each stream is kept up to `cap` bytes (plus one) and the rest is
/// read and dropped, so that the command never blocks on a full pipe.
pub fn run(command: &mut Command, limit: Duration, cap: u64) -> Result<Finished, NotFinished> {
    run_bounded(command, None, limit, cap, false)
}

/// [`run`] for a command whose output is useless once over the cap (a JSON answer cut short):
/// it is killed as soon as stdout passes the cap, instead of running on to the time limit.
pub fn run_stopped_over_cap(
    command: &mut Command,
    limit: Duration,
    cap: u64,
) -> Result<Finished, NotFinished> {
    run_bounded(command, None, limit, cap, true)
}

/// [`run_bounded`] with `input` on stdin (else /dev/null).
fn run_bounded(
    command: &mut Command,
    input: Option<Vec<u8>>,
    limit: Duration,
    cap: u64,
    stop_over_cap: bool,
) -> Result<Finished, NotFinished> {
    let stdin = if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    // A process group of its own: whatever the command starts (`sleep 30 &`) is stopped with it,
    // and the pipes it may hold are closed by the kill.
    let mut child = command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(NotFinished::Spawn)?;
    let group = Group(child.id() as libc::pid_t);
    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), input) {
        // Written in a thread of its own, so that a command that prints before it reads cannot
        // block the run; the write ends when the command has read it all, or with an error once
        // the command (or the kill at the deadline) closes the pipe.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&input);
        });
    }
    let deadline = Instant::now() + limit;
    let stdout_over_cap = Arc::new(AtomicBool::new(false));
    let stdout = drain(child.stdout.take(), cap, Some(stdout_over_cap.clone()));
    let stderr = drain(child.stderr.take(), cap, None);
    let mut stdout_bytes = None;
    let mut stderr_bytes = None;
    // Done when the command has exited and both pipes are closed: a child left behind that still
    // holds stdout keeps the run going, up to the deadline and no further.
    let ended = loop {
        for (channel, bytes) in [(&stdout, &mut stdout_bytes), (&stderr, &mut stderr_bytes)] {
            if bytes.is_none() {
                match channel.try_recv() {
                    Ok(read) => *bytes = Some(read),
                    Err(TryRecvError::Disconnected) => *bytes = Some(Vec::new()),
                    Err(TryRecvError::Empty) => {}
                }
            }
        }
        let pipes_closed = stdout_bytes.is_some() && stderr_bytes.is_some();
        match group.leader_exited() {
            Ok(true) if pipes_closed => break Ok(()),
            Err(e) => break Err(NotFinished::Wait(e)),
            Ok(_) if stop_over_cap && stdout_over_cap.load(Ordering::Relaxed) => {
                break Err(NotFinished::OverCap)
            }
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(_) => break Err(NotFinished::TimedOut),
        }
    };
    if let Err(e) = ended {
        // The leader is not reaped yet (waitid with WNOWAIT), so the group id is still its own.
        group.kill();
        let _ = child.wait();
        return Err(e);
    }
    let status = child.wait().map_err(NotFinished::Wait)?;
    Ok(Finished {
        status,
        stdout: stdout_bytes.unwrap_or_default(),
        stderr: stderr_bytes.unwrap_or_default(),
        cap,
    })
}

/// The standard output of `program args` (UTF-8), run as [`run_stopped_over_cap`] does with an
/// empty environment, only when [`file_policy::trusted_program`] trusts the program: for a tool
/// whose answer a module acts on as root (`nft -j list ruleset`, `ip -j rule show`).
/// Every refusal and failure is one message that names the program and the arguments.
pub fn trusted_output(
    program: &Path,
    args: &[&str],
    limit: Duration,
    cap: u64,
) -> Result<String, String> {
    trusted_output_with_input(program, args, None, limit, cap)
}

/// [`trusted_output`] with `input` on the program's stdin (else /dev/null): for content a
/// module has read and checked itself, handed to the tool without a path it would open again
/// (`nft -f -`).
pub fn trusted_output_with_input(
    program: &Path,
    args: &[&str],
    input: Option<&[u8]>,
    limit: Duration,
    cap: u64,
) -> Result<String, String> {
    let shown = format!("{} {}", program.display(), args.join(" "));
    let real = file_policy::trusted_program(program).map_err(|refusal| match refusal {
        ProgramRefusal::Missing => format!("{} is not installed", program.display()),
        ProgramRefusal::Untrusted(why) => format!(
            "{} is not run: another user than root could have planted it ({why})",
            program.display()
        ),
        other => format!("{} is not run: {other}", program.display()),
    })?;
    let mut command = Command::new(real);
    command.args(args).env_clear();
    let done = run_bounded(&mut command, input.map(<[u8]>::to_vec), limit, cap, true).map_err(
        |e| match e {
            NotFinished::Spawn(e) => format!("{shown} cannot be run: {e}"),
            NotFinished::Wait(e) => format!("waiting for {shown} failed: {e}"),
            NotFinished::TimedOut => format!(
                "{shown} ran for more than {} s and was stopped",
                limit.as_secs()
            ),
            NotFinished::OverCap => {
                format!("{shown} printed more than {cap} bytes and was stopped")
            }
        },
    )?;
    if done.over_cap() {
        return Err(format!("{shown} printed more than {cap} bytes"));
    }
    if !done.status.success() {
        return Err(format!(
            "{shown} failed ({}): {}",
            done.status,
            String::from_utf8_lossy(&done.stderr).trim()
        ));
    }
    String::from_utf8(done.stdout).map_err(|_| format!("{shown} printed invalid UTF-8"))
}

/// The process group a command runs in; its id is the command's process id.
struct Group(libc::pid_t);

impl Group {
    /// Whether the leader (the command itself) has exited, leaving it unreaped: until
    /// `Child::wait`, its id cannot be taken by another process or group.
    fn leader_exited(&self) -> std::io::Result<bool> {
        // SAFETY: waitid only writes the siginfo_t it is given, which lives on this stack.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                self.0 as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: waitid filled in (or left zeroed) a SIGCHLD siginfo_t, whose si_pid is set.
        Ok(unsafe { info.si_pid() } != 0)
    }

    /// SIGKILL to every process of the group (an error means none is left).
    fn kill(&self) {
        // SAFETY: kill takes no pointers.
        let _ = unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

/// Reads `source` to its end in a thread of its own, keeping `cap` bytes plus one; `over_cap`
/// is raised once more than the cap has come. The bytes come on the channel once the source
/// ends; a run that stops at its deadline no longer waits for them (the thread ends when the
/// killed group's end of the pipe closes).
fn drain<R: Read + Send + 'static>(
    source: Option<R>,
    cap: u64,
    over_cap: Option<Arc<AtomicBool>>,
) -> Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
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
        // The run may have stopped waiting: then nobody is left to receive.
        let _ = sender.send(bytes);
    });
    receiver
}
