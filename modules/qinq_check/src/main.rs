//! `deevnet.net.qinq_check`: the bonded uplink of a Proxmox node keeps both VLAN tags, every
//! hop fits the zone's MTU, and every guest port of the zone bridge is at it.
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
use qinq_check::guest_ports::{Ruleset, GUARD_TABLE};
use qinq_check::node::{
    install_guard, observe, read_configured_slaves, read_ruleset, switch_txvlan_off, NFT,
};
use qinq_check::Observed;
use qinq_check::{
    evaluate, txvlan_to_switch_off, GuestPortsPolicy, Params, Report, Request, Stack, SPEC,
};
use std::path::Path;

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
        // The ruleset is read only when something needs it: the guard, or a guest port to audit.
        let has_guest_ports = stack
            .guest_bridge
            .as_ref()
            .is_some_and(|g| !g.ports.is_empty());
        let read_nftables = request.guest_vlan_guard
            || (request.guest_ports != GuestPortsPolicy::Ignore && has_guest_ports);
        let mut observed = observe(
            &netlink,
            &mut ethtool,
            &stack,
            configured.names,
            read_nftables,
        )?;
        let guard_diff = if request.guest_vlan_guard {
            put_guard_in_place(ctx, &mut observed)?
        } else {
            None
        };

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
            changed: !switched.is_empty() || observed.guard_changed,
            ..Outcome::default()
        };
        outcome.diff.extend(guard_diff);
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
        if request.guest_ports == GuestPortsPolicy::Warn {
            for finding in &report.guest_ports {
                ctx.warn(finding.line());
            }
        }
        finish(ctx, outcome, &report, &switched)
    })
}

/// `guest_vlan_guard`: the guard's nftables table put in place unless it already is (in check
/// mode, only predicted), then read back: a table nft took but the ruleset does not show fails
/// the run. Its diff, when it changes.
fn put_guard_in_place(ctx: &Context, observed: &mut Observed) -> Result<Option<FileDiff>, Failure> {
    if let Ruleset::NotRead(why) = &observed.ruleset {
        return Err(Failure::new(format!(
            "guest_vlan_guard: the nftables ruleset cannot be read ({why}), so the guard cannot be put in place or checked; install nftables, or set guest_vlan_guard=false. Nothing was changed"
        )));
    }
    if observed.ruleset.guard_installed() {
        return Ok(None);
    }
    let before = if observed.ruleset.has_guard_table() {
        format!("table bridge {GUARD_TABLE}: not the guard's rule alone\n")
    } else {
        format!("table bridge {GUARD_TABLE}: absent\n")
    };
    if ctx.check_mode {
        observed.ruleset = observed.ruleset.with_guard();
    } else {
        install_guard(Path::new(NFT))
            .map_err(|e| Failure::new(format!("guest_vlan_guard: {e}. Nothing was changed")))?;
        observed.ruleset = read_ruleset(Path::new(NFT));
        if !observed.ruleset.guard_installed() {
            return Err(Failure::new(format!(
                "guest_vlan_guard: nft took the guard's table, but the ruleset read back does not show it ({}); check `nft list table bridge {GUARD_TABLE}`",
                match &observed.ruleset {
                    Ruleset::NotRead(why) => why.clone(),
                    Ruleset::Read(_) => "another rule in it, or none".into(),
                }
            ))
            .with("changed", true));
        }
    }
    observed.guard_changed = true;
    Ok(Some(FileDiff {
        before_header: format!("nftables table bridge {GUARD_TABLE}"),
        after_header: format!("nftables table bridge {GUARD_TABLE}"),
        before,
        after: format!("{}\n", qinq_check::fix::GUEST_VLAN_RULE),
    }))
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
        let mut failure = Failure::new(report.failure_message())
            .with("changed", outcome.changed)
            .with_report(report);
        failure.diff = std::mem::take(&mut outcome.diff);
        return Err(failure);
    }
    outcome.set_report(report);
    let guard = if report.guest_vlan_guard.changed {
        format!("; the guest VLAN guard {would}put in place")
    } else {
        String::new()
    };
    outcome.msg = report.success_message(&format!("{fixed}{guard}"));
    Ok(outcome)
}
