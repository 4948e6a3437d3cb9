//! For the tests of every module crate (feature `test-support`): a network namespace of the
//! test's own ([`TestNamespace`]), removed when dropped, so tests touch nothing on the machine
//! that runs them, and a module binary run inside it with its arguments on stdin
//! ([`TestNamespace::run_module`]); a module binary run on JSON arguments ([`module_run`]);
//! kill -9 during writes ([`kill9`]); links as the kernel reports them, for the pure checks
//! ([`links`], with the `netlink` feature).

pub mod kill9;
#[cfg(feature = "netlink")]
pub mod links;
pub mod module_run;

use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A network namespace named `<prefix>-<pid>-<n>`, with `lo` up.
#[derive(Debug)]
pub struct TestNamespace {
    name: String,
}

impl TestNamespace {
    pub fn new(prefix: &str) -> Self {
        assert!(
            nix::unistd::geteuid().is_root(),
            "these tests create network namespaces: run them as root (make test does)"
        );
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "{prefix}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let status = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .expect("running ip: install iproute2");
        assert!(status.success(), "ip netns add {name} failed");
        let namespace = TestNamespace { name };
        namespace.ip("link set lo up");
        namespace
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n NAME ARGS` (split at whitespace), which must succeed.
    pub fn ip(&self, args: &str) {
        let output = Command::new("ip")
            .args(["-n", &self.name])
            .args(args.split_whitespace())
            .output()
            .expect("running ip");
        assert!(
            output.status.success(),
            "ip {args}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `ip netns exec NAME PROGRAM`, to add arguments to and run.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name]).arg(program);
        command
    }

    /// Starts the module `binary` in the namespace as Ansible's binary-module path runs it: the
    /// argument `-`, the JSON `args` on its stdin; its stdout piped for
    /// [`module_run::module_result`].
    pub fn start_module(&self, binary: impl AsRef<std::ffi::OsStr>, args: &Value) -> Child {
        let mut command = self.command(binary);
        command.arg("-").stdout(Stdio::piped());
        module_run::spawn_with_input(&mut command, args.to_string().as_bytes())
    }

    /// [`TestNamespace::start_module`] run to its end: whether it exited 0, and its result.
    pub fn run_module(&self, binary: impl AsRef<std::ffi::OsStr>, args: &Value) -> (bool, Value) {
        module_run::module_result(self.start_module(binary, args))
    }

    /// Runs `body` on a thread that has entered the namespace (setns is per thread, and
    /// netlink sockets bind to the namespace current when they are made).
    pub fn enter<T: Send + 'static>(&self, body: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/run/netns/{}", self.name);
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("opening the namespace");
            nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
            body()
        })
        .join()
        .expect("the namespace thread panicked")
    }
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}
