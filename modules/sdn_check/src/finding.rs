//! One drift finding: the object, what Proxmox declares, what the node has, the fix in words.

use deevnet_runtime::advice;
use serde::Serialize;

/// The reload of this node's network, as every fix that reloads gives it: the collection's one
/// advice (the preview, no reload over stale entries, the guarded change), from the runtime.
pub fn reload_advice() -> String {
    advice::reload_interfaces(advice::THIS_NODE)
}

/// One difference between what Proxmox's SDN declares and what the node has (a pending change,
/// a node that has not reloaded, a kernel device that disagrees).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The object the finding is about: a device (`vrfvx_tdemo`), a file, a zone.
    pub object: String,
    /// What Proxmox declares for it.
    pub declared: String,
    /// What the node has instead.
    pub found: String,
    /// The fix, in words an operator can act on, e.g. "re-create it: " followed by
    /// [`reload_advice`].
    pub fix: String,
    /// Whether only this node's reload is missing: the node applied an older SDN version and
    /// the finding is that (the node not reloaded) or a device the running version declares and
    /// the node's generated file does not (the running version adds it). A device the node's
    /// own generated file declares too, and the kernel lacks or holds otherwise, is not: that
    /// drift was there before any new version.
    pub awaits_reload: bool,
}
