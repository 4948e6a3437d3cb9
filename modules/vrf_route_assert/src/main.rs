//! `deevnet.net.vrf_route_assert`: asserts, over rtnetlink, where tenant traffic in each VRF
//! really goes. It changes nothing, so check mode runs it fully and `changed` is always false.
//!
//! The mission's lesson: a rising SNAT counter was taken as proof of egress, and it was not.
//! The transit interface did not forward, and the VRF had neither a default nor the unreachable
//! catch-all, so its lookups fell through to the main table and left by the management bridge.

use deevnet_runtime::{Context, Failure, Module, Outcome};
use vrf_route_assert::kernel::NodeKernel;
use vrf_route_assert::plan::{plan, Params, SPEC};
use vrf_route_assert::{assert_vrfs, Report};

static MODULE: Module = Module {
    name: "vrf_route_assert",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let checks = plan(params).map_err(Failure::new)?;
        if checks.is_empty() {
            ctx.warn("vrfs is empty: no VRF was checked");
        }
        let mut kernel = NodeKernel::connect()?;
        let report = assert_vrfs(&mut kernel, &checks)?;
        finish(report)
    })
}

fn finish(report: Report) -> Result<Outcome, Failure> {
    let failures = report.failures();
    if !failures.is_empty() {
        return Err(Failure::new(failures.join("\n"))
            .with("changed", false)
            .with("vrfs", &report.vrfs)
            .with("checks", &report.checks));
    }
    let mut outcome = Outcome {
        changed: false,
        msg: format!(
            "all {} checks passed in {} VRF{}",
            report.checks.len(),
            report.vrfs.len(),
            if report.vrfs.len() == 1 { "" } else { "s" }
        ),
        ..Outcome::default()
    };
    outcome.set("vrfs", &report.vrfs);
    outcome.set("checks", &report.checks);
    Ok(outcome)
}
