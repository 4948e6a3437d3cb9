//! Whether a kernel without a VRF can have one (the driver, built in or as a module), and
//! a kernel without VRF support named in the findings, never taken for "nothing leaks".

use super::*;
use crate::params::UndeclaredVrfs;
use crate::vrf_support::{judge, DriverEvidence};

fn evidence() -> DriverEvidence {
    DriverEvidence {
        driver_present: false,
        loads_modules: true,
        module_installed: Some(true),
        release: "6.8.12-4-pve".into(),
    }
}

#[test]
fn a_loaded_or_built_in_driver_is_support() {
    let loaded = DriverEvidence {
        driver_present: true,
        loads_modules: false,
        ..evidence()
    };
    assert_eq!(judge(&loaded), VrfSupport::Present);
}

#[test]
fn an_installed_module_not_loaded_yet_is_no_verdict_of_absence() {
    assert_eq!(judge(&evidence()), VrfSupport::NotLoaded);
    let unreadable = DriverEvidence {
        module_installed: None,
        ..evidence()
    };
    assert_eq!(judge(&unreadable), VrfSupport::NotLoaded);
}

#[test]
fn a_kernel_without_the_driver_and_without_modules_has_no_support() {
    let monolithic = DriverEvidence {
        loads_modules: false,
        module_installed: None,
        ..evidence()
    };
    assert_eq!(
        judge(&monolithic).absent(),
        Some(
            "kernel 6.8.12-4-pve has no vrf driver built in (no /sys/module/vrf) and loads no \
             modules (no /proc/modules): it was built without CONFIG_NET_VRF"
        )
    );
    let without_module = DriverEvidence {
        module_installed: Some(false),
        ..evidence()
    };
    assert!(judge(&without_module)
        .absent()
        .unwrap()
        .contains("(/lib/modules/6.8.12-4-pve) hold no vrf.ko"));
}

/// hv02 on a kernel built without VRF support: no VRF device, and the kernel says why.
fn without_vrf_support() -> RecordedKernel {
    let mut kernel = RecordedKernel::faulty();
    kernel.links.retain(|link| !link.is_vrf());
    kernel.vrf_support = VrfSupport::Absent("built without CONFIG_NET_VRF".into());
    kernel
}

#[test]
fn without_vrf_support_no_undeclared_vrf_is_not_claimed() {
    let cannot_tell = "undeclared VRFs: cannot tell whether one falls through: this kernel has no VRF \
                       support (built without CONFIG_NET_VRF), so there is no VRF to inspect and nothing \
                       about tenant traffic was proven; run the assertion on the node's own kernel, or set \
                       undeclared_vrfs=ignore";
    let mut plan = Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(Vec::new())
    };
    let report = assert_vrfs(&mut without_vrf_support(), &plan).unwrap();
    assert_eq!(report.failures(), [cannot_tell]);
    assert!(!report.may_settle());
    plan.undeclared_vrfs = UndeclaredVrfs::Warn;
    let report = assert_vrfs(&mut without_vrf_support(), &plan).unwrap();
    assert!(report.failures().is_empty());
    assert_eq!(report.warnings(), [cannot_tell]);
    plan.undeclared_vrfs = UndeclaredVrfs::Ignore;
    let report = assert_vrfs(&mut without_vrf_support(), &plan).unwrap();
    assert!(report.failures().is_empty() && report.warnings().is_empty());
    // A declared VRF's absence names the kernel's lack.
    let report = assert_vrfs(
        &mut without_vrf_support(),
        &Request::of(vec![VrfCheck::new("vrf_tdemo")]),
    )
    .unwrap();
    assert_eq!(
        report.failures(),
        ["vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo); this kernel \
          cannot have VRFs: built without CONFIG_NET_VRF"]
    );
}

#[test]
fn with_a_vrf_present_the_kernel_is_not_asked_about_support() {
    let mut kernel = RecordedKernel::faulty();
    kernel.vrf_support = VrfSupport::Absent("not to be read".into());
    let plan = Request {
        undeclared_vrfs: UndeclaredVrfs::Fail,
        ..Request::of(mission_checks())
    };
    let report = assert_vrfs(&mut kernel, &plan).unwrap();
    assert_eq!(report.undeclared_unknown(), None);
}
