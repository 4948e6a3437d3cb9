//! PLACEHOLDER of branch sdnintent, REPLACED AT MERGE by helper sdnkernel's `node.rs`: what the
//! kernel has, over netlink and /proc/sys. This branch does not observe the kernel, so it
//! refuses `kernel: true` instead of reporting a comparison it did not make.

use crate::intent::NodeIntent;
use crate::observation::KernelView;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::Failure;

/// Refuses: the kernel comparison is not part of this build.
pub fn observe(_netlink: &Netlink, _intent: &NodeIntent) -> Result<KernelView, Failure> {
    Err(Failure::new(
        "kernel: true: this build of sdn_check does not compare the kernel yet; give kernel: false for the intent and the file drift only",
    ))
}
