//! The synthetic workload: a network namespace of this process and a veth pair into it.
//!
//! The namespace has no name: it lives only as long as this process holds it (an open file,
//! the probe's sockets), so the kernel removes it, and with it the veth pair, whenever the
//! process ends, by error, timeout, panic, SIGTERM or kill -9. The node end of the veth is
//! named `dvprobe<pid>` and carries a [`Mark`] in its alias (the boot, the PID namespace, the
//! process id and its start time): the one thing a run can leave behind (during the kernel's
//! asynchronous teardown) is recognizable by that mark, and [`sweep_leftovers`] removes it
//! on the next run's start once its process is verifiably dead. A name alone proves nothing:
//! an operator's `dvprobe4000000`, or the live probe of a run in another PID namespace, is
//! never touched.

use crate::node;
use deevnet_runtime::netlink::{Link, Links, Netlink, NetlinkError};
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

/// The prefix of every interface name a run creates.
pub const NAME_PREFIX: &str = "dvprobe";

/// The veth ends of the run with process id `pid`: on the node, and inside the workload.
pub fn veth_names(pid: u32) -> (String, String) {
    (
        format!("{NAME_PREFIX}{pid}"),
        format!("{NAME_PREFIX}{pid}w"),
    )
}

/// The veth ends of probe `index` of a run of many (`probes`) with process id `pid`:
/// `dvp<pid>p<index>` and `dvp<pid>p<index>w`, within the kernel's 15 characters for any
/// process id (at most 7 digits) and probe index (below MAX_PROBES, 3 digits).
pub fn probe_veth_names(pid: u32, index: usize) -> (String, String) {
    (
        format!("{LISTED_PREFIX}{pid}p{index}"),
        format!("{LISTED_PREFIX}{pid}p{index}w"),
    )
}

/// The prefix of the interfaces of a run of many probes.
pub const LISTED_PREFIX: &str = "dvp";

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

/// Removes the interfaces of runs that are over, found in `links` (the node dump this run
/// already read); returns their names.
pub fn sweep_leftovers(
    netlink: &Netlink,
    links: &Links,
    this: &Mark,
) -> Result<Vec<String>, NetlinkError> {
    let mut removed = Vec::new();
    for link in leftovers(links, |mark| mark.run_is_over(this)) {
        // The kernel may finish its own teardown meanwhile: gone is as good as deleted.
        if node::delete_link_at(netlink, link.index, &link.name)? {
            removed.push(link.name.clone());
        }
    }
    Ok(removed)
}

/// The workload's network namespace, open for as long as this value lives.
pub struct Namespace {
    file: File,
}

impl Namespace {
    /// A new namespace. An IPv4 workload has IPv6 off (it sends IPv4 probes and nothing else:
    /// no router solicitation, no duplicate address detection on the tenant's VNet). An IPv6
    /// one (`ipv6`) has it on, but learns nothing from routers (no RA, no autoconf, no router
    /// solicitation), has no link-local address, and runs one DAD solicitation for its
    /// address: what it sends is that, its neighbor discovery and the probes.
    pub fn new(ipv6: bool) -> Result<Namespace, Failure> {
        std::thread::spawn(move || {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| {
                Failure::new(format!("creating the workload's network namespace: {e}"))
            })?;
            let settings: &[(&str, &str)] = if ipv6 {
                &[
                    ("disable_ipv6", "0"),
                    ("accept_ra", "0"),
                    ("autoconf", "0"),
                    ("router_solicitations", "0"),
                    ("addr_gen_mode", "1"),
                    ("accept_dad", "1"),
                    ("dad_transmits", "1"),
                ]
            } else {
                &[("disable_ipv6", "1")]
            };
            for key in ["all", "default"] {
                for (name, value) in settings {
                    let path = SysctlKey::ipv6_conf(key, name).proc_path();
                    match std::fs::write(&path, value) {
                        // A kernel without IPv6 has nothing to switch off.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !ipv6 => {}
                        Err(e) => {
                            return Err(Failure::new(format!(
                                "setting IPv6 up in the workload ({}): {e}",
                                path.display()
                            )))
                        }
                        Ok(()) => {}
                    }
                }
            }
            File::open("/proc/thread-self/ns/net")
                .map(|file| Namespace { file })
                .map_err(|e| Failure::new(format!("opening the workload's namespace: {e}")))
        })
        .join()
        .map_err(|_| Failure::new("the thread creating the workload's namespace panicked"))?
    }

    pub fn fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }

    /// Runs `body` on a thread inside the namespace (setns is per thread; sockets belong to
    /// the namespace of the thread that makes them).
    pub fn run<T: Send + 'static>(
        &self,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Failure> {
        join(self.spawn(body)?)
    }

    /// Starts `body` on a thread inside the namespace; [`join`] waits for it.
    pub fn spawn<T: Send + 'static>(
        &self,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> Result<std::thread::JoinHandle<Result<T, Failure>>, Failure> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| Failure::new(format!("sharing the workload's namespace: {e}")))?;
        Ok(std::thread::spawn(move || {
            nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(|e| Failure::new(format!("entering the workload's namespace: {e}")))?;
            Ok(body())
        }))
    }
}

/// What a thread [`Namespace::spawn`] started returned.
pub fn join<T>(handle: std::thread::JoinHandle<Result<T, Failure>>) -> Result<T, Failure> {
    handle
        .join()
        .map_err(|_| Failure::new("the workload's thread panicked"))?
}

/// The node end of the workload's veth; deleting it deletes the pair. Dropped on every way
/// out of the run that unwinds; the kernel covers the others (see the module docs). Only a
/// link of that name carrying this run's mark is deleted: if the veth vanished mid-run, an
/// interface someone made under its name since is not this run's.
pub struct VethGuard<'a> {
    netlink: &'a Netlink,
    pub name: String,
    mark: String,
}

impl<'a> VethGuard<'a> {
    pub fn new(netlink: &'a Netlink, name: String, mark: &Mark) -> Self {
        VethGuard {
            netlink,
            name,
            mark: mark.alias(),
        }
    }

    /// Deletes the pair now, reporting a failure (drop only tries); `false` when there was
    /// nothing of this run's to delete.
    pub fn remove(mut self) -> Result<bool, NetlinkError> {
        let name = std::mem::take(&mut self.name);
        delete_if_marked(self.netlink, &name, &self.mark)
    }
}

impl Drop for VethGuard<'_> {
    fn drop(&mut self) {
        if !self.name.is_empty() {
            let _ = delete_if_marked(self.netlink, &self.name, &self.mark);
        }
    }
}

fn delete_if_marked(netlink: &Netlink, name: &str, mark: &str) -> Result<bool, NetlinkError> {
    match node::link_by_name(netlink, name)? {
        Some(link) if link.alias.as_deref() == Some(mark) => {
            node::delete_link_at(netlink, link.index, name)
        }
        _ => Ok(false),
    }
}
