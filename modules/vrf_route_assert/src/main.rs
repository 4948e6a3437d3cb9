//! `deevnet.net.vrf_route_assert`: asserts, over rtnetlink, where tenant traffic in each VRF
//! really goes. It changes nothing, so check mode runs it fully and `changed` is always false.
//!
//! The mission's lesson: a rising SNAT counter was taken as proof of egress, and it was not.
//! The transit interface did not forward, and the VRF had neither a default nor the unreachable
//! catch-all, so its lookups fell through to the main table and left by the management bridge.

use deevnet_runtime::{CheckModeFindings, Context, Failure, Module, Outcome};
use vrf_route_assert::node::NodeKernel;
use vrf_route_assert::params::{Params, Request, UndeclaredVrfs, SPEC};
use vrf_route_assert::settle::{settle, Settled, SystemClock};
use vrf_route_assert::Report;

static MODULE: Module = Module {
    name: "vrf_route_assert",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let check_mode_findings = params.check_mode_findings;
        let request = Request::from_params(params)?;
        if request.vrfs.is_empty() && request.undeclared_vrfs == UndeclaredVrfs::Ignore {
            ctx.warn("vrfs is empty: no VRF was checked");
        }
        let mut kernel = NodeKernel::connect()?;
        let settled = settle(&mut kernel, &request, &mut SystemClock::start())?;
        for warning in settled.report.warnings() {
            ctx.warn(warning);
        }
        finish(ctx, settled, request.undeclared_vrfs, check_mode_findings)
    })
}

/// What passed: the declared VRFs' checks, and the undeclared VRFs when they were inspected.
fn summary(report: &Report, undeclared_vrfs: UndeclaredVrfs) -> String {
    let vrfs = report.vrfs.len();
    let mut parts = Vec::new();
    if !report.checks.is_empty() || undeclared_vrfs == UndeclaredVrfs::Ignore {
        parts.push(format!(
            "all {} checks passed in {vrfs} VRF{}",
            report.checks.len(),
            if vrfs == 1 { "" } else { "s" }
        ));
    }
    let leaks: Vec<String> = report
        .leaking_vrfs
        .iter()
        .map(|leak| format!("{} ({})", leak.name, leak.family))
        .collect();
    match undeclared_vrfs {
        UndeclaredVrfs::Ignore => {}
        _ if report.undeclared_unknown().is_some() => parts.push(
            "cannot tell whether an undeclared VRF falls through: this kernel has no VRF support, \
             see the warnings"
                .to_string(),
        ),
        _ if leaks.is_empty() => parts.push("no undeclared VRF falls through".to_string()),
        _ => parts.push(format!(
            "undeclared VRFs falling through, see the warnings: {}",
            leaks.join(", ")
        )),
    }
    parts.join("; ")
}

fn finish(
    ctx: &mut Context,
    settled: Settled,
    undeclared_vrfs: UndeclaredVrfs,
    check_mode_findings: CheckModeFindings,
) -> Result<Outcome, Failure> {
    let failures = settled.report.failures();
    if !failures.is_empty() {
        let failure = Failure::new(failures.join("\n"))
            .with("changed", false)
            .with_report(&settled);
        return check_mode_findings.finish(ctx, &failures, failure);
    }
    let mut msg = summary(&settled.report, undeclared_vrfs);
    if settled.attempts > 1 {
        msg.push_str(&format!(
            " after {} s ({} attempts)",
            settled.settled_after_seconds(),
            settled.attempts
        ));
    }
    let mut outcome = Outcome {
        changed: false,
        msg,
        ..Outcome::default()
    };
    outcome.set_report(&settled);
    Ok(outcome)
}
