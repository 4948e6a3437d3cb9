//! A new `frr.conf.local` is created `0640`, owner root, group `frr` where that group exists
//! (as Debian's FRR package keeps `/etc/frr`): the file may hold BGP passwords.
//!
//! The runtime's atomic replace gives a new file its default mode, and changing it after the
//! rename would leave a moment where the content is world-readable. So an empty file with the
//! right mode and group is created first, and the replace then keeps those attributes. An
//! empty `frr.conf.local` means the same to Proxmox as a missing one (no local config, spec
//! B.1), so a merge that runs in between sees nothing wrong.

use anyhow::{Context as _, Result};
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub const NEW_FILE_MODE: u32 = 0o640;
pub const NEW_FILE_GROUP: &str = "frr";

/// Creates `path` empty with [`NEW_FILE_MODE`] and group [`NEW_FILE_GROUP`] when it exists.
pub fn create_placeholder(path: &Path) -> Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(NEW_FILE_MODE)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    // `mode` is filtered by the umask; set it exactly.
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(NEW_FILE_MODE))
        .with_context(|| format!("setting the mode of {}", path.display()))?;
    if let Ok(Some(group)) = nix::unistd::Group::from_name(NEW_FILE_GROUP) {
        // Root is the owner by creating it; only root may hand the group over.
        let _ = std::os::unix::fs::fchown(&file, None, Some(group.gid.as_raw()));
    }
    Ok(())
}
