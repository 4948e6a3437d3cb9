//! Who made a probe interface, in its alias: a run's [`Mark`] (the boot, the PID namespace, the
//! process id and its start time), and which marked interfaces belong to runs that are over
//! ([`leftovers`]). A name alone proves nothing: an operator's `dvprobe4000000`, or the live
//! probe of a run in another PID namespace, is never taken for a leftover.

use deevnet_runtime::netlink::{Link, Links};
use deevnet_runtime::Failure;
use std::io;
use std::os::unix::fs::MetadataExt;

/// Who made a probe interface, written into its alias (IFLA_IFALIAS, which only a user with
/// CAP_NET_ADMIN over the node's namespace can set): enough to tell, later and from another
/// process, whether that run is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// /proc/sys/kernel/random/boot_id: a process id means nothing across boots.
    pub boot_id: String,
    /// The inode of the run's PID namespace: its process id means nothing in another.
    pub pid_namespace: u64,
    pub pid: u32,
    /// The process's start time (clock ticks after boot, /proc/PID/stat): a reused process
    /// id has another.
    pub start_ticks: u64,
}

const MARK_HEAD: &str = "deevnet.net egress_probe";

impl Mark {
    /// The alias text.
    pub fn alias(&self) -> String {
        format!(
            "{MARK_HEAD} boot={} pidns={} pid={} start={}",
            self.boot_id, self.pid_namespace, self.pid, self.start_ticks
        )
    }

    /// The mark in `alias`, or `None` for any text [`Mark::alias`] would not have written.
    pub fn parse(alias: &str) -> Option<Mark> {
        let rest = alias.strip_prefix(MARK_HEAD)?.strip_prefix(' ')?;
        let mut fields = rest.split(' ');
        let mut field = |key: &str| fields.next()?.strip_prefix(key)?.strip_prefix('=');
        let boot_id = field("boot")?;
        let mark = Mark {
            boot_id: boot_id.to_string(),
            pid_namespace: field("pidns")?.parse().ok()?,
            pid: field("pid")?.parse().ok()?,
            start_ticks: field("start")?.parse().ok()?,
        };
        let boot_id_form =
            boot_id.len() == 36 && boot_id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
        // Canonical only: no trailing fields, no leading zeros, no sign.
        (boot_id_form && mark.alias() == alias).then_some(mark)
    }

    /// The mark of process `pid` (as this process's /proc numbers it).
    pub fn of_process(pid: u32) -> io::Result<Mark> {
        Ok(Mark {
            boot_id: boot_id()?,
            pid_namespace: std::fs::metadata(format!("/proc/{pid}/ns/pid"))?.ino(),
            pid,
            start_ticks: start_ticks(pid)?.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("process {pid} is gone"))
            })?,
        })
    }

    /// This run's mark; refused where /proc belongs to another PID namespace (its numbers
    /// would not be this process's).
    pub fn of_this_process() -> Result<Mark, Failure> {
        let fail =
            |e: io::Error| Failure::new(format!("reading this run's identity from /proc: {e}"));
        let pid = std::process::id();
        let seen = std::fs::read_link("/proc/self")
            .map_err(fail)?
            .to_string_lossy()
            .parse::<u32>()
            .ok();
        if seen != Some(pid) {
            return Err(Failure::new(format!(
                "/proc is not this process's PID namespace's (/proc/self is {seen:?}, the \
                 process is {pid}): the probe cannot mark its interfaces; run it with the \
                 node's /proc"
            )));
        }
        Mark::of_process(pid).map_err(fail)
    }

    /// Whether the run that wrote this mark is verifiably over, judged from `this` run's own
    /// mark: the same boot and PID namespace, and no process `pid` started at `start_ticks`.
    /// Anything this run cannot verify (another boot or namespace, an unreadable /proc) is
    /// not over.
    pub fn run_is_over(&self, this: &Mark) -> bool {
        self.boot_id == this.boot_id
            && self.pid_namespace == this.pid_namespace
            && matches!(start_ticks(self.pid), Ok(start) if start != Some(self.start_ticks))
    }
}

fn boot_id() -> io::Result<String> {
    Ok(std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
        .trim()
        .to_string())
}

/// The start time of process `pid`, `None` when there is none.
fn start_ticks(pid: u32) -> io::Result<Option<u64>> {
    let stat = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat,
        // ESRCH: the process exited while being read.
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH) => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    // `pid (comm) state ...`: comm may hold spaces and parentheses, so count after the last
    // `)`; starttime is field 22, the 20th after it.
    stat.rsplit_once(')')
        .and_then(|(_, fields)| fields.split_whitespace().nth(19)?.parse().ok())
        .map(Some)
        .ok_or_else(|| io::Error::other(format!("/proc/{pid}/stat has no start time")))
}

/// The links that carry a probe's [`Mark`] whose run is over, per `run_is_over`.
pub fn leftovers(links: &Links, run_is_over: impl Fn(&Mark) -> bool) -> Vec<&Link> {
    links
        .iter()
        .filter(|link| {
            link.alias
                .as_deref()
                .and_then(Mark::parse)
                .is_some_and(|mark| run_is_over(&mark))
        })
        .collect()
}
