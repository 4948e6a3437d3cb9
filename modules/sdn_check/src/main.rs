//! `deevnet.net.sdn_check`: a Proxmox node's SDN intent, read from the cluster's
//! configuration, and its drift.
//!
//! Proxmox already holds what the collection checks: tenants (EVPN zones), their VRFs, which
//! node is an exit node, VNets and gateways. This module reads it for one node, by the
//! generator's rules (docs/proxmox-sdn.md), and reports what differs: SDN changes made but not
//! applied, a node whose network was generated from an older version, and (with `kernel:
//! true`) what the kernel lacks. It never changes anything.
//!
//! Flow: validate the options → read the files by the file policy (a missing, malformed,
//! oversized or untrusted file fails here) → derive the node's intent, the pending changes and
//! the applied version → compare the kernel (unless `kernel: false`) → drift fails the task
//! unless `drift: warn` → result.

use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::{Failure, Module, Outcome};
use sdn_check::files::{host_name, read_sources};
use sdn_check::pending::mark_awaiting_reload;
use sdn_check::report::evaluate;
use sdn_check::{kernel_drift, node, DriftPolicy, Finding, NodeIntent, Params, Request, SPEC};

static MODULE: Module = Module {
    name: "sdn_check",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx, params: Params| {
        let request = Request::from_params(params)?;
        let host = host_name()?;
        let node = request.node.clone().unwrap_or_else(|| host.clone());

        let sources = read_sources(&request.files)?;
        let interfaces_sdn = request.files.interfaces_sdn.display().to_string();
        let (mut report, intent) = evaluate(&sources, &node, &host, &interfaces_sdn)?;
        for skipped in &report.skipped_config {
            ctx.warn(skipped.clone());
        }

        if request.kernel {
            let mut kernel = kernel_findings(&intent)?;
            mark_awaiting_reload(
                &mut kernel,
                sources.running.version,
                sources.applied,
                &sources.applied_devices,
            );
            report.drift.extend(kernel);
            report.kernel = true;
        }

        if !report.drift.is_empty() && request.drift == DriftPolicy::Fail {
            return Err(Failure::new(report.drift_message())
                .with("changed", false)
                .with_report(&report));
        }
        for finding in &report.drift {
            ctx.warn(format!(
                "SDN drift: {}: declared {}, found {}; {}",
                finding.object, finding.declared, finding.found, finding.fix
            ));
        }
        let mut outcome = Outcome {
            msg: report.summary(),
            ..Outcome::default()
        };
        outcome.set_report(&report);
        Ok(outcome)
    })
}

/// The kernel side, in one call: what the kernel has for the intent, and how it differs.
fn kernel_findings(intent: &NodeIntent) -> Result<Vec<Finding>, Failure> {
    let netlink = Netlink::connect()?;
    let kernel = node::observe(&netlink, intent)?;
    Ok(kernel_drift::kernel_drift(intent, &kernel))
}
