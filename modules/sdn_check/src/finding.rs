//! One drift finding: the object, what Proxmox declares, what the node has, the fix in words.

use serde::Serialize;

/// The reload of a node's network, as every fix text gives it: what it would change first, then
/// the reload. The Cozystack guide warns against a bare `ifreload -a` on a host whose interfaces
/// file has stale entries, so no fix recommends one without the preview. ifupdown2's own tools:
/// `ifquery --check -a` lists where the running interfaces differ from the files, and
/// `ifreload -a --no-act` prints what a reload would run without running it.
macro_rules! reload_after_preview {
    () => {
        "first see what a reload would change: `ifquery --check -a` (where the interfaces differ from the files) \
         and `ifreload -a --no-act` (what it would run); then, if it touches nothing stale, `ifreload -a` on this node"
    };
}
pub(crate) use reload_after_preview;

/// The reload with its preview, for the fix texts (reload_after_preview!).
pub const RELOAD: &str = reload_after_preview!();

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
    /// The fix, in words an operator can act on, e.g. "re-create it: " followed by RELOAD.
    pub fix: String,
}
