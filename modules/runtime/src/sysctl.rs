//! Sysctl keys and their runtime values under `/proc/sys`.
//!
//! A key has two spellings: the path under `/proc/sys` (`net/ipv4/conf/vmbr0.50/forwarding`)
//! and the dotted form of sysctl.d files, where the dots inside a component become slashes
//! (`net.ipv4.conf.vmbr0/50.forwarding`). Writing `net.ipv4.conf.vmbr0.50.forwarding` instead
//! names a key that does not exist: the trap that breaks `ansible.posix.sysctl` on VLAN devices.

use anyhow::{anyhow, Result};
use std::fmt;
use std::path::PathBuf;

/// A sysctl key, held as its components.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SysctlKey {
    components: Vec<String>,
}

impl SysctlKey {
    pub fn new<S: AsRef<str>>(components: &[S]) -> Self {
        SysctlKey {
            components: components.iter().map(|c| c.as_ref().to_string()).collect(),
        }
    }

    /// `net.ipv4.conf.<ifname>.<leaf>` for an interface, `all` or `default`.
    pub fn ipv4_conf(ifname: &str, leaf: &str) -> Self {
        Self::new(&["net", "ipv4", "conf", ifname, leaf])
    }

    /// `net.ipv6.conf.<ifname>.<leaf>`.
    pub fn ipv6_conf(ifname: &str, leaf: &str) -> Self {
        Self::new(&["net", "ipv6", "conf", ifname, leaf])
    }

    /// Parses a key as systemd-sysctl does: if the first separator is a slash, slashes separate
    /// and dots are literal; if it is a dot, dots separate and slashes stand for literal dots.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        let slash_first = match (text.find('/'), text.find('.')) {
            (Some(s), Some(d)) => s < d,
            (Some(_), None) => true,
            _ => false,
        };
        let components = if slash_first {
            text.split('/').map(str::to_string).collect()
        } else {
            text.split('.').map(|c| c.replace('/', ".")).collect()
        };
        SysctlKey { components }
    }

    pub fn components(&self) -> &[String] {
        &self.components
    }

    /// The path under `/proc/sys`.
    pub fn proc_path(&self) -> PathBuf {
        let mut path = PathBuf::from("/proc/sys");
        for component in &self.components {
            path.push(component);
        }
        path
    }

    /// Reads the runtime value, trimmed; `None` when the key does not exist.
    pub fn read(&self) -> Result<Option<String>> {
        match std::fs::read_to_string(self.proc_path()) {
            Ok(value) => Ok(Some(value.trim().to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(anyhow!("cannot read {}: {e}", self.proc_path().display())),
        }
    }

    /// Fails unless the runtime value could be written now; checked before any change, so a
    /// read-only `/proc/sys` (a container) leaves the node untouched.
    pub fn check_writable(&self) -> Result<()> {
        let path = self.proc_path();
        nix::unistd::access(&path, nix::unistd::AccessFlags::W_OK).map_err(|errno| {
            let hint = match errno {
                nix::errno::Errno::EROFS => {
                    "/proc/sys is read-only here (a container?): run on the node itself, or set apply=false to persist without applying"
                }
                nix::errno::Errno::EACCES | nix::errno::Errno::EPERM => {
                    "permission denied: run the task with become: true"
                }
                _ => "check that the key exists on this kernel",
            };
            anyhow!("cannot write {} ({self}): {}; {hint}", path.display(), errno.desc())
        })
    }

    pub fn write(&self, value: &str) -> Result<()> {
        std::fs::write(self.proc_path(), value).map_err(|e| match e.kind() {
            // Checked at the start of the run: the interface went away since.
            std::io::ErrorKind::NotFound => anyhow!(
                "cannot set {self} = {value}: {} does not exist any more (did the interface disappear during the run?); run again once it exists",
                self.proc_path().display()
            ),
            _ => anyhow!(
                "cannot set {self} = {value} in {}: {e}",
                self.proc_path().display()
            ),
        })
    }
}

/// The dotted spelling of sysctl.d files.
impl fmt::Display for SysctlKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dotted: Vec<String> = self
            .components
            .iter()
            .map(|c| c.replace('.', "/"))
            .collect();
        f.write_str(&dotted.join("."))
    }
}
