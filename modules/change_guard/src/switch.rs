//! The dead-man's switch: what fires it ([`timer_on`]: a transient systemd timer when systemd is
//! PID 1, else a detached process), the command lines it runs as data ([`expire_argv`],
//! [`systemd_run_argv`], [`boot_unit`]), and the process's identity ([`ProcessId`]): a
//! recorded pid is signalled only while `/proc/<pid>` is that very process (same start time,
//! same command line), never another that took its number.

use crate::records::{SwitchRecord, Timer};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The folder whose presence says systemd is PID 1 (`sd_booted`).
pub const SYSTEMD_MARKER: &str = "run/systemd/system";

/// Where the boot unit lives.
pub const BOOT_UNIT_PATH: &str = "/etc/systemd/system/deevnet-change-guard-boot.service";

/// The boot unit's name.
pub const BOOT_UNIT: &str = "deevnet-change-guard-boot.service";

/// How the switch is timed on the node whose root is `root` (`/` on a real node).
pub fn timer_on(root: &Path) -> Timer {
    if root.join(SYSTEMD_MARKER).is_dir() {
        Timer::Systemd
    } else {
        Timer::Process
    }
}

/// The transient unit of a run.
pub fn unit_name(run_id: &str) -> String {
    format!("deevnet-change-guard-{run_id}")
}

/// `<binary> --expire <state_dir> <run_id>`: the switch's own command.
pub fn expire_argv(binary: &Path, state_dir: &Path, run_id: &str) -> Vec<OsString> {
    vec![
        binary.into(),
        "--expire".into(),
        state_dir.into(),
        run_id.into(),
    ]
}

/// `systemd-run --unit=... --on-active=<timeout>s --timer-property=AccuracySec=1s <expire
/// command>` (without the program). A timer's default accuracy is a minute: the switch would
/// fire up to that late.
pub fn systemd_run_argv(
    binary: &Path,
    state_dir: &Path,
    run_id: &str,
    timeout: Duration,
) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![
        format!("--unit={}", unit_name(run_id)).into(),
        format!("--on-active={}s", timeout.as_secs()).into(),
        "--timer-property=AccuracySec=1s".into(),
    ];
    argv.extend(expire_argv(binary, state_dir, run_id));
    argv
}

/// The boot unit: restores every unconfirmed run before the network comes up.
pub fn boot_unit(binary: &Path, state_dir: &Path) -> String {
    format!(
        "# deevnet.net: restores a guarded change that was never confirmed, before the network starts.\n\
         [Unit]\n\
         Description=deevnet.net: restore unconfirmed guarded changes\n\
         DefaultDependencies=no\n\
         After=local-fs.target\n\
         Before=network-pre.target\n\
         Wants=network-pre.target\n\
         \n\
         [Service]\n\
         Type=oneshot\n\
         ExecStart={} --boot {}\n\
         \n\
         [Install]\n\
         WantedBy=sysinit.target\n",
        binary.display(),
        state_dir.display()
    )
}

/// A process as `/proc` shows it: its start time (clock ticks since boot) and command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: i32,
    pub start_time: u64,
    pub argv: Vec<OsString>,
}

impl ProcessId {
    /// `/proc/<pid>` read now; `None` when there is no such process (or it is a zombie).
    pub fn read(pid: i32) -> Option<ProcessId> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses and may hold anything: fields follow the last ')'.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            return None;
        }
        let start_time = fields.get(19)?.parse().ok()?;
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let argv = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| {
                <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(a).to_os_string()
            })
            .collect();
        Some(ProcessId {
            pid,
            start_time,
            argv,
        })
    }
}

/// The recorded switch process, when it is still the one the record names: same pid, same
/// start time, same command line.
pub fn recorded_process(record: &SwitchRecord, expected: &[OsString]) -> Option<ProcessId> {
    let (pid, start) = (record.pid?, record.start_time?);
    ProcessId::read(pid).filter(|p| p.start_time == start && p.argv == expected)
}

/// Ends the recorded switch process, if it is still that process: SIGTERM, then SIGKILL after
/// two seconds; true once it is gone.
pub fn end_process(record: &SwitchRecord, expected: &[OsString]) -> bool {
    let Some(process) = recorded_process(record, expected) else {
        return true;
    };
    let started = Instant::now();
    let mut signal = libc::SIGTERM;
    loop {
        // Checked again right before each signal: the number is never signalled once reused.
        if recorded_process(record, expected).is_none() {
            return true;
        }
        // SAFETY: kill takes no pointers.
        unsafe { libc::kill(process.pid, signal) };
        std::thread::sleep(Duration::from_millis(50));
        if started.elapsed() > Duration::from_secs(2) {
            signal = libc::SIGKILL;
        }
        if started.elapsed() > Duration::from_secs(5) {
            return recorded_process(record, expected).is_none();
        }
    }
}

/// Starts `argv` detached from this process: its own session (setsid), reparented at once (a
/// second fork whose middle process exits), stdin from /dev/null and stdout and stderr to
/// `log`, so that neither this run's end, nor its process group's, nor the SSH session's
/// hangup reaches it, and it holds none of the module's pipes. Returns the switch's pid.
pub fn spawn_detached(argv: &[OsString], log: &Path) -> Result<i32, String> {
    use std::os::unix::process::CommandExt;
    let log_file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags_nofollow()
        .open(log)
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let (read_end, write_end) = pid_pipe()?;
    let mut command = std::process::Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file);
    let write_fd = write_end;
    // SAFETY: between fork and exec only async-signal-safe calls: setsid, fork, getpid, write,
    // _exit.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            match libc::fork() {
                -1 => Err(std::io::Error::last_os_error()),
                0 => {
                    let pid = libc::getpid().to_ne_bytes();
                    libc::write(write_fd, pid.as_ptr().cast(), pid.len());
                    Ok(())
                }
                _ => libc::_exit(0),
            }
        });
    }
    let spawned = command.spawn();
    // SAFETY: the write end is ours; closing it lets the read see the end once the switch execs.
    unsafe { libc::close(write_end) };
    let mut middle = spawned.map_err(|e| format!("{}: {e}", PathBuf::from(&argv[0]).display()))?;
    let _ = middle.wait();
    read_pid(read_end)
}

trait NoFollow {
    fn custom_flags_nofollow(&mut self) -> &mut Self;
}

impl NoFollow for fs::OpenOptions {
    fn custom_flags_nofollow(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
    }
}

/// A pipe whose ends close on exec: the switch's pid comes through it.
fn pid_pipe() -> Result<(i32, i32), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    Ok((fds[0], fds[1]))
}

fn read_pid(read_end: i32) -> Result<i32, String> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: read_end is a descriptor of ours, owned from here on.
    let mut file = unsafe { fs::File::from_raw_fd(read_end) };
    let mut bytes = [0u8; 4];
    file.read_exact(&mut bytes)
        .map_err(|e| format!("the switch did not start: {e}"))?;
    Ok(i32::from_ne_bytes(bytes))
}
