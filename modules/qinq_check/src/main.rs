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
//! before anything changes) → read bridge VLANs, fdb, each slave's features → switch txvlan off
//! where asked → check → result.

use deevnet_runtime::netlink::ethtool::Ethtool;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::{Context, Failure, FileDiff, Module, Outcome};
use qinq_check::SPEC;
use qinq_check::{
    evaluate, txvlan_to_switch_off, Observed, Params, Report, Request, SlaveState, Stack,
};
use std::collections::BTreeMap;

static MODULE: Module = Module {
    name: "qinq_check",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx, params: Params| {
        let request = Request::validate(&params.request).map_err(Failure::new)?;

        let netlink = Netlink::connect()?;
        let links = netlink.links()?;
        let stack = Stack::resolve(&request, &links).map_err(Failure::new)?;

        let mut ethtool = Ethtool::connect()?;
        let mut observed = observe(&netlink, &mut ethtool, &stack)?;

        let to_switch = if params.fix_txvlan {
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

/// Reads what the checks need beyond the links.
fn observe(netlink: &Netlink, ethtool: &mut Ethtool, stack: &Stack) -> Result<Observed, Failure> {
    let feature = stack.txvlan_feature();
    let mut slaves = BTreeMap::new();
    for (slave, _) in &stack.slaves {
        slaves.insert(
            slave.name.clone(),
            SlaveState {
                driver: ethtool.driver(&slave.name)?,
                feature: ethtool.features(&slave.name)?.get(feature),
                changed: false,
            },
        );
    }
    let disable_ipv6 = SysctlKey::ipv6_conf(&stack.bridge.name, "disable_ipv6");
    Ok(Observed {
        port_vlans: netlink.bridge_vlans()?,
        fdb: netlink.fdb(stack.bridge.index)?,
        slaves,
        bridge_disable_ipv6: disable_ipv6.read()?,
    })
}

/// Switches the feature off on each named slave (in check mode, only records that it would)
/// and reads it back: a driver may accept the request and keep the feature on.
fn switch_txvlan_off(
    ctx: &Context,
    ethtool: &mut Ethtool,
    stack: &Stack,
    observed: &mut Observed,
    names: &[String],
) -> Result<(), Failure> {
    let feature = stack.txvlan_feature();
    for name in names {
        if !ctx.check_mode {
            ethtool.set_feature(name, feature, false)?;
        }
        let after = if ctx.check_mode {
            let mut predicted = observed.slaves.get(name).map(|s| s.feature);
            if let Some(feature) = predicted.as_mut() {
                feature.active = false;
            }
            predicted
        } else {
            Some(ethtool.features(name)?.get(feature))
        };
        if let (Some(state), Some(after)) = (observed.slaves.get_mut(name), after) {
            state.changed = !after.active;
            state.feature = after;
        }
    }
    Ok(())
}

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
        let mut failure = Failure::new(lines.join("\n")).with("changed", outcome.changed);
        failure.diff = std::mem::take(&mut outcome.diff);
        for (key, value) in report_values(report) {
            failure = failure.with(&key, value);
        }
        return Err(failure);
    }
    for (key, value) in report_values(report) {
        outcome.set(&key, value);
    }
    outcome.msg = format!("all {} QinQ checks passed{fixed}", report.checks.len());
    Ok(outcome)
}

/// The result's values besides `changed` and `msg`: every field of the report, under its own
/// name (so the report's type is the one list of them; tests/recorded.rs holds it to RETURN).
fn report_values(report: &Report) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(report) {
        Ok(serde_json::Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    }
}
