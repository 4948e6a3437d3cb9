//! `deevnet.net.qinq_check`: the bonded uplink of a Proxmox node keeps both VLAN tags, and
//! every hop fits the zone's MTU.
//!
//! Tenant and transit VLANs travel as inner tags inside the outer VLAN of a bonded uplink:
//! `bond0` → `bond0.40` → `vmbr1` (VLAN-aware, `bridge-vids 199-299`). Three faults break it,
//! each silently: a NIC that overwrites the inner tag when it inserts the outer one in hardware
//! (txvlan on a bond slave, backups included), a hop whose MTU does not fit, and a bridge that
//! does not filter VLANs or lacks some of the zone's.
//!
//! Flow: validate the options → read the links → resolve the stack (bad input fails here,
//! before anything changes) → read the bond's configured slaves from the interfaces file →
//! read bridge VLANs, fdb, each slave's features → switch txvlan off where asked → check →
//! result.

use deevnet_runtime::netlink::ethtool::Ethtool;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::{Context, Failure, FileDiff, Module, Outcome};
use qinq_check::node::{observe, read_configured_slaves, switch_txvlan_off};
use qinq_check::{evaluate, txvlan_to_switch_off, Params, Report, Request, Stack, SPEC};

static MODULE: Module = Module {
    name: "qinq_check",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx, params: Params| {
        let request = Request::from_params(params)?;

        let netlink = Netlink::connect()?;
        let links = netlink.links()?;
        let stack = Stack::resolve(&request, &links)?;
        let configured = read_configured_slaves(&request)?;
        for left_out in configured.left_out {
            ctx.warn(left_out);
        }

        let mut ethtool = Ethtool::connect()?;
        let mut observed = observe(&netlink, &mut ethtool, &stack, configured.names)?;

        let to_switch = if request.fix_txvlan {
            txvlan_to_switch_off(&stack, &observed)
        } else {
            Vec::new()
        };
        let result = switch_txvlan_off(ctx, &mut ethtool, &stack, &mut observed, &to_switch);
        // What really went off (a driver may take the request and keep the feature on), also
        // when a later slave failed.
        let switched: Vec<String> = observed
            .slaves
            .iter()
            .filter(|(_, state)| state.changed)
            .map(|(name, _)| name.clone())
            .collect();
        let mut outcome = Outcome {
            changed: !switched.is_empty(),
            ..Outcome::default()
        };
        for name in &switched {
            outcome.diff.push(FileDiff {
                before_header: format!("{name} features"),
                after_header: format!("{name} features"),
                before: format!("{}: on\n", stack.txvlan_feature()),
                after: format!("{}: off\n", stack.txvlan_feature()),
            });
        }
        if let Err(failure) = result {
            return Err(failure.with("changed", outcome.changed));
        }

        let report = evaluate(&request, &stack, &observed);
        finish(ctx, outcome, &report, &switched)
    })
}

/// The result: every field of the report under its own name, on success and failure alike.
fn finish(
    ctx: &Context,
    mut outcome: Outcome,
    report: &Report,
    switched: &[String],
) -> Result<Outcome, Failure> {
    let failures = report.failures();
    let would = if ctx.check_mode { "would be " } else { "" };
    let fixed = if switched.is_empty() {
        String::new()
    } else {
        format!("; txvlan {would}switched off on {}", switched.join(", "))
    };
    if !failures.is_empty() {
        // One line per failed check; what this run switched off shows in those checks.
        let lines: Vec<String> = failures.iter().map(|c| c.line()).collect();
        let mut failure = Failure::new(lines.join("\n"))
            .with("changed", outcome.changed)
            .with_report(report);
        failure.diff = std::mem::take(&mut outcome.diff);
        return Err(failure);
    }
    outcome.set_report(report);
    outcome.msg = format!("all {} QinQ checks passed{fixed}", report.checks.len());
    Ok(outcome)
}
