//! Netlink failures as messages a person can act on.

use std::fmt;

/// A failed netlink request: what was being done, the kernel's errno when it gave one, and a
/// hint for the errnos whose fix is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetlinkError {
    operation: String,
    errno: Option<i32>,
    detail: String,
}

impl NetlinkError {
    /// An error from rtnetlink while doing `operation` ("dumping the routes of table 1001").
    pub fn from_rtnetlink(operation: impl Into<String>, error: rtnetlink::Error) -> Self {
        match error {
            rtnetlink::Error::NetlinkError(message) => match message.code {
                Some(code) => Self::from_errno(operation, code.get().abs()),
                // An ACK where data was expected: only reachable through a kernel or crate bug.
                None => Self::other(operation, "the kernel acknowledged without answering"),
            },
            other => Self::other(operation, other.to_string()),
        }
    }

    /// An errno (positive, as in `errno.h`) while doing `operation`.
    pub fn from_errno(operation: impl Into<String>, errno: i32) -> Self {
        NetlinkError {
            operation: operation.into(),
            errno: Some(errno),
            detail: std::io::Error::from_raw_os_error(errno).to_string(),
        }
    }

    /// An I/O error (opening the socket, building the runtime) while doing `operation`.
    pub fn from_io(operation: impl Into<String>, error: std::io::Error) -> Self {
        match error.raw_os_error() {
            Some(errno) => Self::from_errno(operation, errno),
            None => Self::other(operation, error.to_string()),
        }
    }

    /// A failure without an errno (an empty or malformed answer).
    pub fn other(operation: impl Into<String>, detail: impl Into<String>) -> Self {
        NetlinkError {
            operation: operation.into(),
            errno: None,
            detail: detail.into(),
        }
    }

    /// The kernel's errno, for callers that treat some of them as answers (ENOENT for a table
    /// that does not exist, EHOSTUNREACH for an unreachable route).
    pub fn errno(&self) -> Option<i32> {
        self.errno
    }

    fn hint(&self) -> Option<&'static str> {
        Some(match self.errno? {
            libc::EPERM | libc::EACCES => "permission denied: run the task as root (become: true)",
            libc::ENODEV => {
                "the interface does not exist (any more?): check its name with `ip link`"
            }
            libc::EPROTONOSUPPORT | libc::EAFNOSUPPORT => {
                "this kernel has no rtnetlink support for that address family"
            }
            libc::EOPNOTSUPP => {
                "the kernel does not support this operation: a kernel module or option is missing"
            }
            libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM => {
                "the node is out of sockets or memory: retry, and check the node's load"
            }
            _ => return None,
        })
    }
}

impl fmt::Display for NetlinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.operation, self.detail)?;
        if let Some(hint) = self.hint() {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NetlinkError {}

/// A netlink failure fails the module run with the same message (this module exists only with
/// the `netlink` feature, so the conversion does too).
impl From<NetlinkError> for crate::Failure {
    fn from(error: NetlinkError) -> Self {
        crate::Failure::new(error.to_string())
    }
}
