//! `deevnet.net.bgp_evpn_assert`: asserts FRR's control plane through vtysh's JSON. It
//! changes nothing, so check mode runs it fully and `changed` is always false.
//!
//! The field report's faults live in FRR's state, not in the kernel's routes: a core that
//! announced the hypervisors' base AS (bad peer AS), IPv4 never activated on an IPv6-only
//! fabric, host routes and the default leaking to the core, a VNI missing on a node.
//!
//! Flow: validate the options (nothing is run on bad input) → check that vtysh is root's →
//! read FRR (one vtysh run, a second for the named peers' routes) → resolve the peers (an
//! unknown VRF or peer fails) → assert → re-read until settled → findings fail the task.

use bgp_evpn_assert::node::NodeVtysh;
use bgp_evpn_assert::params::{Params, Request, SPEC};
use bgp_evpn_assert::{settle, Report};
use deevnet_runtime::{FindingsPolicy, Module};

static MODULE: Module = Module {
    name: "bgp_evpn_assert",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx, params: Params| {
        let policy = FindingsPolicy {
            findings: params.findings,
            check_mode: params.check_mode_findings,
        };
        let request = Request::from_params(params)?;
        let mut vtysh =
            NodeVtysh::trusted(&request.vtysh, request.timeout, request.max_output_bytes)?;
        let settled = settle(&mut vtysh, &request)?;
        let report: Report = settled.report;
        let after = if settled.attempts > 1 {
            format!(
                " (after {} attempts in {:.1} s)",
                settled.attempts,
                settled.elapsed.as_secs_f64()
            )
        } else {
            String::new()
        };
        let lines = report.finding_lines();
        policy.conclude(
            ctx,
            lines.is_empty(),
            &lines,
            format!(
                "{} finding{} in FRR's control plane{after}:\n{}",
                lines.len(),
                if lines.len() == 1 { "" } else { "s" },
                lines.join("\n")
            ),
            format!("{}{after}", report.summary()),
            &report,
        )
    })
}
