//! The synthetic workload: a network namespace of this process and a veth pair into it.
//!
//! The namespace has no name: it lives only as long as this process holds it (an open file,
//! the probe's sockets), so the kernel removes it, and with it the veth pair, whenever the
//! process ends, by error, timeout, panic, SIGTERM or kill -9. The node end of the veth is
//! named `dvprobe<pid>`: the one thing a run can leave behind (during the kernel's
//! asynchronous teardown, or if it died between two netlink calls) is recognizable by name,
//! and [`sweep_leftovers`] removes those of dead processes on the next run's start.

use crate::node;
use deevnet_runtime::netlink::{Links, Netlink, NetlinkError};
use deevnet_runtime::sysctl::SysctlKey;
use std::fs::File;
use std::os::fd::AsRawFd;

/// The prefix of every interface name a run creates.
pub const NAME_PREFIX: &str = "dvprobe";

/// The veth ends of the run with process id `pid`: on the node, and inside the workload.
pub fn veth_names(pid: u32) -> (String, String) {
    (
        format!("{NAME_PREFIX}{pid}"),
        format!("{NAME_PREFIX}{pid}w"),
    )
}

/// The process id a probe interface name carries, or `None` for any other name.
pub fn owner_pid(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(NAME_PREFIX)?;
    let digits = digits.strip_suffix('w').unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The probe interfaces in `links` whose run is no longer alive, per `is_alive`.
pub fn leftovers(links: &Links, is_alive: impl Fn(u32) -> bool) -> Vec<String> {
    links
        .iter()
        .filter_map(|link| owner_pid(&link.name).map(|pid| (pid, &link.name)))
        .filter(|(pid, _)| !is_alive(*pid))
        .map(|(_, name)| name.clone())
        .collect()
}

/// Whether process `pid` exists (kill(pid, 0) is not ESRCH).
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
        .map(|()| true)
        .unwrap_or_else(|errno| errno != nix::errno::Errno::ESRCH)
}

/// Removes the interfaces killed runs left, found in `links` (the node dump this run already
/// read); returns their names.
pub fn sweep_leftovers(netlink: &Netlink, links: &Links) -> Result<Vec<String>, NetlinkError> {
    let mut removed = Vec::new();
    for name in leftovers(links, process_alive) {
        let Some(link) = links.by_name(&name) else {
            continue;
        };
        // The kernel may finish its own teardown meanwhile: gone is as good as deleted.
        if node::delete_link_at(netlink, link.index, &name)? {
            removed.push(name);
        }
    }
    Ok(removed)
}

/// The workload's network namespace, open for as long as this value lives.
pub struct Namespace {
    file: File,
}

impl Namespace {
    /// A new namespace with IPv6 off (the workload sends IPv4 probes and nothing else: no
    /// router solicitation, no duplicate address detection on the tenant's VNet).
    pub fn new() -> Result<Namespace, String> {
        std::thread::spawn(|| {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(|e| format!("creating the workload's network namespace: {e}"))?;
            for key in ["all", "default"] {
                let path = SysctlKey::ipv6_conf(key, "disable_ipv6").proc_path();
                match std::fs::write(&path, "1") {
                    // A kernel without IPv6 has nothing to switch off.
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(format!(
                            "switching IPv6 off in the workload ({}): {e}",
                            path.display()
                        ))
                    }
                    _ => {}
                }
            }
            File::open("/proc/thread-self/ns/net")
                .map(|file| Namespace { file })
                .map_err(|e| format!("opening the workload's namespace: {e}"))
        })
        .join()
        .map_err(|_| "the thread creating the workload's namespace panicked".to_string())?
    }

    pub fn fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }

    /// Runs `body` on a thread inside the namespace (setns is per thread; sockets belong to
    /// the namespace of the thread that makes them).
    pub fn run<T: Send + 'static>(
        &self,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        let file = self
            .file
            .try_clone()
            .map_err(|e| format!("sharing the workload's namespace: {e}"))?;
        std::thread::spawn(move || {
            nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(|e| format!("entering the workload's namespace: {e}"))?;
            Ok(body())
        })
        .join()
        .map_err(|_| "the workload's thread panicked".to_string())?
    }
}

/// The node end of the workload's veth; deleting it deletes the pair. Dropped on every way
/// out of the run that unwinds; the kernel covers the others (see the module docs).
pub struct VethGuard<'a> {
    netlink: &'a Netlink,
    pub name: String,
}

impl<'a> VethGuard<'a> {
    pub fn new(netlink: &'a Netlink, name: String) -> Self {
        VethGuard { netlink, name }
    }

    /// Deletes the pair now, reporting a failure (drop only tries).
    pub fn remove(mut self) -> Result<(), NetlinkError> {
        let name = std::mem::take(&mut self.name);
        node::delete_link(self.netlink, &name).map(|_| ())
    }
}

impl Drop for VethGuard<'_> {
    fn drop(&mut self) {
        if !self.name.is_empty() {
            let _ = node::delete_link(self.netlink, &self.name);
        }
    }
}
