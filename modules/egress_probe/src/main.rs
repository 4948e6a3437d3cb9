//! `deevnet.net.egress_probe`: plugs synthetic workloads into tenants' VNets for a few
//! seconds and proves egress (and isolation) from them, observed and not inferred: replies
//! seen inside each workload, and one capture on the node's other interfaces showing where
//! each workload's packets left.
//!
//! It changes no configuration and leaves nothing behind (the workloads' namespaces and veths
//! go with the run), so check mode runs it fully and `changed` is always false.

use deevnet_probe_port::mark::Mark;
use deevnet_probe_port::veth;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::{Context, Failure, Findings, FindingsPolicy, Module, Outcome};
use egress_probe::params::{Params, Run, SPEC};
use egress_probe::report::{self, Placement, ProbeResult, Report, RunReport, Start, Verdict};
use egress_probe::session::{Layout, Probed};
use egress_probe::tenant::{self, Plan};
use egress_probe::{node, session};

static MODULE: Module = Module {
    name: "egress_probe",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let check_mode_findings = params.check_mode_findings;
        let run = Run::from_params(params)?;
        // Messages of the `probes` form name the entry and its tenant; the single form's
        // stay as they were.
        let label = |i: usize| -> String {
            if run.listed {
                format!("probes[{i}] ({}): ", run.probes[i].0)
            } else {
                String::new()
            }
        };
        let netlink = Netlink::connect()?;
        let node = node::read_facts(&netlink)?;
        let plans: Vec<Plan> = run
            .probes
            .iter()
            .enumerate()
            .map(|(i, (_, request))| {
                tenant::resolve(request, &node)
                    .map_err(|e| Failure::new(format!("{}{e}", label(i))))
            })
            .collect::<Result<_, _>>()?;
        // Held to the end: before the in-use checks, so two runs never both find an address
        // free.
        let _address_locks = plans
            .iter()
            .enumerate()
            .map(|(i, plan)| {
                session::lock_address(plan)
                    .map_err(|e| Failure::new(format!("{}{}", label(i), e.msg)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mark = Mark::of_this_process()?;
        // Before the in-use checks: a killed run's workload still answers ARP for its address
        // until its veth is gone (the kernel tears a dead namespace down asynchronously).
        let swept = veth::sweep_leftovers(&netlink, &node.links, &mark)?;
        if !swept.is_empty() {
            ctx.warn(format!(
                "removed what killed earlier runs left: {}",
                swept.join(", ")
            ));
        }
        let gateways_answered = session::check_all_on_vnet(&plans, &node, label)?;
        let layout = Layout {
            listed: run.listed,
            start_at: run.start_at,
        };
        let (probed, start) = session::probe(
            &netlink,
            &plans,
            &gateways_answered,
            &node,
            &mark,
            layout,
            label,
        )?;
        let names: Vec<String> = run.probes.iter().map(|(name, _)| name.clone()).collect();
        let policy = FindingsPolicy {
            // egress_probe has no `findings` option: a probe that failed fails the task.
            findings: Findings::Fail,
            check_mode: check_mode_findings,
        };
        finish(ctx, &plans, &names, run.listed, start, probed, policy)
    })
}

/// The single form's result keys beyond `changed` and `msg`: the same on success and on
/// failure.
#[derive(serde::Serialize)]
struct Returned<'a> {
    workload: serde_json::Value,
    #[serde(flatten)]
    report: &'a Report,
    probes: Vec<ProbeResult>,
    #[serde(flatten)]
    start: Start,
}

/// The `probes` form's result keys beyond `changed` and `msg`.
#[derive(serde::Serialize)]
struct ReturnedRun<'a> {
    #[serde(flatten)]
    run: &'a RunReport,
    #[serde(flatten)]
    start: Start,
}

fn finish(
    ctx: &mut Context,
    plans: &[Plan],
    names: &[String],
    listed: bool,
    start: Start,
    probed: Vec<Probed>,
    policy: FindingsPolicy,
) -> Result<Outcome, Failure> {
    let results: Vec<ProbeResult> = plans
        .iter()
        .zip(names)
        .zip(&probed)
        .map(|((plan, name), probed)| {
            let placement = Placement {
                name: name.clone(),
                vrf: plan.vlan.is_none().then(|| plan.vrf.name().to_string()),
                bridge: plan.vlan.map(|_| plan.vnet.name.clone()),
                vlan: plan.vlan,
                vnet: plan.vnet.name.clone(),
                address: plan.address.to_string(),
                gateway: plan.gateway.to_string(),
                interface: probed.interface.clone(),
            };
            report::probe_result(placement, &probed.report)
        })
        .collect();
    if listed {
        let reports: Vec<Report> = probed.into_iter().map(|p| p.report).collect();
        let run = report::run_report(results, &reports);
        let passed_msg = format!(
            "{} probe{} as expected: {}",
            run.probes.len(),
            if run.probes.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
        return policy.conclude(
            ctx,
            run.verdict == Verdict::Passed,
            &run.problems,
            run.msg(),
            passed_msg,
            &ReturnedRun { run: &run, start },
        );
    }
    let (plan, probed) = (&plans[0], &probed[0]);
    let report = &probed.report;
    let workload = serde_json::json!({
        "address": plan.address.to_string(),
        "vrf": plan.vrf.name(),
        "vnet": plan.vnet.name,
        "gateway": plan.gateway.to_string(),
        "interface": probed.interface,
    });
    let returned = Returned {
        workload,
        report,
        probes: results,
        start,
    };
    let passed_msg = format!(
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
    );
    policy.conclude(
        ctx,
        report.verdict == Verdict::Passed,
        &report.problems,
        report.problems.join("; "),
        passed_msg,
        &returned,
    )
}
