//! `deevnet.net.transit_router_check`: whether the transit router decides what the transit
//! network may reach, and stays closed when its rules are gone. Read-only: check mode is the
//! same run.
//!
//! Flow: validate the options → the named interfaces must exist → read the ruleset, the
//! policy-routing rules, the routes, the forwarding switches, the persisted ruleset (loaded in
//! a scratch network namespace) and the unit with its drop-ins, the interfaces and tc, the kernel's answer for VPC addresses,
//! the legacy tables and the reverse-path sysctls → the checks → the result, failing when any
//! check fails.

use deevnet_runtime::Module;
use transit_router_check::{node, Params, Request, SPEC};

static MODULE: Module = Module {
    name: "transit_router_check",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|_ctx, params: Params| {
        let request = Request::from_params(params)?;
        let observed = node::observe(&request)?;
        let report = transit_router_check::evaluate(&request, &observed);
        report.conclude()
    })
}
