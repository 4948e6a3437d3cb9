//! PLACEHOLDER of branch sdnintent, REPLACED AT MERGE by helper sdnkernel's `kernel_drift.rs`:
//! each difference between the intent and what the kernel has, as a finding. This branch's
//! [`KernelView`] holds nothing (its [`crate::node::observe`] refuses to run), so there is
//! nothing to compare.

use crate::finding::Finding;
use crate::intent::NodeIntent;
use crate::observation::KernelView;

/// The findings of the intent against the kernel (none here: the view is empty).
pub fn kernel_drift(_intent: &NodeIntent, _kernel: &KernelView) -> Vec<Finding> {
    Vec::new()
}
