//! The workload's network namespace: unnamed, so it lives only as long as this process holds it
//! (an open file, the probe's sockets), and the kernel removes it, with every veth end inside,
//! whenever the process ends, by error, timeout, panic, SIGTERM or kill -9.

use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::Failure;
use std::fs::File;
use std::os::fd::AsRawFd;

/// The workload's network namespace, open for as long as this value lives.
pub struct Namespace {
    file: File,
}

impl Namespace {
    /// A new namespace. An IPv4 workload has IPv6 off (it sends IPv4 probes and nothing else:
    /// no router solicitation, no duplicate address detection on the tenant's VNet). An IPv6
    /// one (`ipv6`) has it on, but learns nothing from routers (no RA, no autoconf, no router
    /// solicitation), has no link-local address, and runs one DAD solicitation for its
    /// address, then advertises it: what it sends is that, its neighbor discovery and the
    /// probes.
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
                    // An unsolicited neighbour advertisement once DAD passed: the node drops
                    // the previous run's MAC for the address at once.
                    ("ndisc_notify", "1"),
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
