//! `deevnet.net.vrf_route_assert`: asserts, over rtnetlink, where tenant traffic in each VRF
//! really goes. It changes nothing, so check mode runs it fully and `changed` is always false.
//!
//! The mission's lesson: a rising SNAT counter was taken as proof of egress, and it was not.
//! The transit interface did not forward, and the VRF had neither a default nor the unreachable
//! catch-all, so its lookups fell through to the main table and left by the management bridge.

use deevnet_runtime::{Context, Failure, Module, Outcome};
use vrf_route_assert::kernel::NodeKernel;
use vrf_route_assert::plan::{plan, Params, UndeclaredVrfs, SPEC};
use vrf_route_assert::settle::{settle, Settled, SystemClock};
use vrf_route_assert::Report;

static MODULE: Module = Module {
    name: "vrf_route_assert",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let plan = plan(params).map_err(Failure::new)?;
        if plan.vrfs.is_empty() && plan.undeclared_vrfs == UndeclaredVrfs::Ignore {
            ctx.warn("vrfs is empty: no VRF was checked");
        }
        let mut kernel = NodeKernel::connect()?;
        let settled = settle(&mut kernel, &plan, &mut SystemClock::start())?;
        for warning in settled.report.warnings() {
            ctx.warn(warning);
        }
        finish(settled, plan.undeclared_vrfs)
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
        _ if leaks.is_empty() => parts.push("no undeclared VRF falls through".to_string()),
        _ => parts.push(format!(
            "undeclared VRFs falling through, see the warnings: {}",
            leaks.join(", ")
        )),
    }
    parts.join("; ")
}

fn finish(settled: Settled, undeclared_vrfs: UndeclaredVrfs) -> Result<Outcome, Failure> {
    let Settled {
        report,
        attempts,
        settled_after,
    } = settled;
    // Seconds, to the millisecond.
    let settled_after = (settled_after.as_secs_f64() * 1000.0).round() / 1000.0;
    let failures = report.failures();
    if !failures.is_empty() {
        return Err(Failure::new(failures.join("\n"))
            .with("changed", false)
            .with("vrfs", &report.vrfs)
            .with("checks", &report.checks)
            .with("leaking_vrfs", &report.leaking_vrfs)
            .with("settled_after", settled_after)
            .with("attempts", attempts));
    }
    let mut msg = summary(&report, undeclared_vrfs);
    if attempts > 1 {
        msg.push_str(&format!(" after {settled_after} s ({attempts} attempts)"));
    }
    let mut outcome = Outcome {
        changed: false,
        msg,
        ..Outcome::default()
    };
    outcome.set("vrfs", &report.vrfs);
    outcome.set("checks", &report.checks);
    outcome.set("leaking_vrfs", &report.leaking_vrfs);
    outcome.set("settled_after", settled_after);
    outcome.set("attempts", attempts);
    Ok(outcome)
}
