//! `deevnet.net.egress_probe`: plugs a synthetic workload into a tenant's VNet for a few
//! seconds and proves egress from it, observed and not inferred: replies seen inside the
//! workload, and captures on the node's other interfaces showing where its packets left.
//!
//! It changes no configuration and leaves nothing behind (the workload's namespace and veth go
//! with the run), so check mode runs it fully and `changed` is always false.

use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::{CheckModeFindings, Context, Failure, Module, Outcome};
use egress_probe::params::{Params, Request, SPEC};
use egress_probe::report::{Report, Verdict};
use egress_probe::tenant::{self, Plan};
use egress_probe::workload::{self, Mark};
use egress_probe::{node, session};

static MODULE: Module = Module {
    name: "egress_probe",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let check_mode_findings = params.check_mode_findings;
        let request = Request::from_params(params)?;
        let netlink = Netlink::connect()?;
        let node = node::read_facts(&netlink)?;
        let plan = tenant::resolve(&request, &node)?;
        // Held to the end: before the in-use check, so two runs never both find the address
        // free.
        let _address_lock = session::lock_address(&plan)?;
        let mark = Mark::of_this_process()?;
        // Before the in-use check: a killed run's workload still answers ARP for its address
        // until its veth is gone (the kernel tears a dead namespace down asynchronously).
        let swept = workload::sweep_leftovers(&netlink, &node.links, &mark)?;
        if !swept.is_empty() {
            ctx.warn(format!(
                "removed what killed earlier runs left: {}",
                swept.join(", ")
            ));
        }
        session::check_on_vnet(&plan, &node)?;
        let (report, interface) = session::probe(&netlink, &plan, &node, &mark)?;
        finish(ctx, &plan, &interface, report, check_mode_findings)
    })
}

/// The result keys beyond `changed` and `msg`: the same on success and on failure.
#[derive(serde::Serialize)]
struct Returned<'a> {
    workload: serde_json::Value,
    #[serde(flatten)]
    report: &'a Report,
}

fn finish(
    ctx: &mut Context,
    plan: &Plan,
    interface: &str,
    report: Report,
    check_mode_findings: CheckModeFindings,
) -> Result<Outcome, Failure> {
    let workload = serde_json::json!({
        "address": plan.address.to_string(),
        "vrf": plan.vrf.name(),
        "vnet": plan.vnet.name,
        "gateway": plan.gateway.to_string(),
        "interface": interface,
    });
    let returned = Returned {
        workload,
        report: &report,
    };
    if report.verdict != Verdict::Passed {
        let failure = Failure::new(report.problems.join("; "))
            .with("changed", false)
            .with_report(&returned);
        return check_mode_findings.finish(ctx, &report.problems, failure);
    }
    let mut outcome = Outcome {
        changed: false,
        msg: format!(
            "egress proven from {} on {}: {} target{} as expected, no probe packet on {}",
            plan.address.addr(),
            plan.vnet.name,
            report.targets.len(),
            if report.targets.len() == 1 { "" } else { "s" },
            if plan.forbidden.is_empty() {
                "a forbidden interface (none captured)".to_string()
            } else {
                plan.forbidden
                    .iter()
                    .map(|i| i.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        ..Outcome::default()
    };
    outcome.set_report(&returned);
    Ok(outcome)
}
