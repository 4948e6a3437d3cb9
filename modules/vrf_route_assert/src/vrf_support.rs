//! Whether this kernel can have VRFs at all. On one that cannot, a missing tenant VRF is the
//! kernel's doing (not the SDN's), and "no undeclared VRF falls through" would be said of
//! nothing: the module says it cannot tell, and why.
//!
//! The evidence is what the node shows of its vrf driver ([`DriverEvidence`], read in
//! [`crate::node`]); [`judge`] is pure.

/// What the kernel can do about VRFs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VrfSupport {
    /// The vrf driver is loaded or built in (or a VRF exists).
    Present,
    /// No VRF can exist yet, but the kernel may load the vrf driver with the first VRF (or
    /// whether it can was not readable).
    NotLoaded,
    /// This kernel cannot create a VRF; the reason, in words.
    Absent(String),
}

/// What the node shows of its vrf driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverEvidence {
    /// `/sys/module/vrf` exists: the driver is loaded, or built in.
    pub driver_present: bool,
    /// `/proc/modules` exists: the kernel loads modules (CONFIG_MODULES).
    pub loads_modules: bool,
    /// Whether `/lib/modules/<release>/modules.dep` or `modules.builtin` names vrf.ko;
    /// `None` when neither could be read.
    pub module_installed: Option<bool>,
    /// The kernel's release (`/proc/sys/kernel/osrelease`).
    pub release: String,
}

/// The kernel's VRF support from the evidence.
pub fn judge(evidence: &DriverEvidence) -> VrfSupport {
    let release = &evidence.release;
    if evidence.driver_present {
        return VrfSupport::Present;
    }
    if !evidence.loads_modules {
        return VrfSupport::Absent(format!(
            "kernel {release} has no vrf driver built in (no /sys/module/vrf) and loads no modules \
             (no /proc/modules): it was built without CONFIG_NET_VRF"
        ));
    }
    match evidence.module_installed {
        Some(false) => VrfSupport::Absent(format!(
            "the vrf driver is not loaded (no /sys/module/vrf) and kernel {release}'s modules \
             (/lib/modules/{release}) hold no vrf.ko: install the kernel's extra modules, or boot \
             a kernel with CONFIG_NET_VRF"
        )),
        _ => VrfSupport::NotLoaded,
    }
}

impl VrfSupport {
    /// The kernel's lack of VRF support, when it lacks it.
    pub fn absent(&self) -> Option<&str> {
        match self {
            VrfSupport::Absent(why) => Some(why),
            _ => None,
        }
    }
}
