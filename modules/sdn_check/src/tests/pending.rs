//! Changes made but not applied, and a node not reloaded (docs/proxmox-sdn.md §9).

use super::{sources, sources_with};
use crate::finding::Finding;
use crate::pending::reload_fix;
use crate::pending::{
    mark_awaiting_reload, not_reloaded, pending_changes, PendingChange, APPLY_FIX,
};
use crate::report::evaluate;
use std::collections::BTreeSet;

fn change(kind: &'static str, id: &str, change: &'static str) -> PendingChange {
    PendingChange {
        kind,
        id: id.into(),
        change,
    }
}

/// The `.cfg` files as applied: no pending change, though the JSON holds typed values
/// (`{"hv02": 1}`, numbers, 1 for true, lists) and the files words in another order.
#[test]
fn cfg_files_as_applied_are_not_pending() {
    for scenario in ["evpn", "ipv6", "fabric", "zones"] {
        let sources = sources(scenario);
        assert_eq!(
            pending_changes(&sources.pending, &sources.running),
            [],
            "{scenario}"
        );
    }
}

/// A zone added, one removed, one changed, a subnet added: each pending, each a finding with
/// the apply fix; the node's `#version:6` is older than the running 7: not reloaded.
#[test]
fn pending_changes_and_a_node_not_reloaded_are_drift() {
    let sources = sources_with("evpn", "pending", "interfaces");
    let (report, _) = evaluate(&sources, "hv02", "hv02", "/etc/network/interfaces.d/sdn").unwrap();
    assert_eq!(
        report.pending,
        [
            change("zone", "tdemo", "changed"),
            change("zone", "tedge", "removed"),
            change("zone", "tnew", "added"),
            change("subnet", "tdemo-10.20.130.0-24", "added"),
        ]
    );
    assert_eq!(report.version.running, 7);
    assert_eq!(report.version.applied, Some(6));
    assert_eq!(report.drift.len(), 5);
    assert_eq!(
        report.drift[0],
        Finding {
            object: "zone tdemo".into(),
            declared: "changed in zones.cfg".into(),
            found: "not in the running configuration (.running-config) yet".into(),
            fix: APPLY_FIX.into(),
            awaits_reload: false,
        }
    );
    assert_eq!(
        report.drift[4],
        Finding {
            object: "/etc/network/interfaces.d/sdn".into(),
            declared: "#version:7 (the running SDN configuration)".into(),
            found: "#version:6".into(),
            fix: reload_fix(),
            awaits_reload: true,
        }
    );
    assert_eq!(APPLY_FIX, "apply the SDN: `pvesh set /cluster/sdn`");
    assert_eq!(
        reload_fix(),
        format!(
            "reload this node's network (Proxmox: local sdn network configuration is too old, please reload): {}",
            crate::finding::reload_advice()
        )
    );
}

/// Missing interfaces.d/sdn: drift only when zones apply to the node.
#[test]
fn a_node_that_never_generated_its_sdn() {
    assert_eq!(not_reloaded("sdn", 7, Some(7), true), None);
    assert_eq!(not_reloaded("sdn", 7, Some(8), true), None);
    assert_eq!(not_reloaded("sdn", 7, None, false), None);
    let finding = not_reloaded("sdn", 7, None, true).unwrap();
    assert_eq!(finding.found, "no generated file");
    assert_eq!(finding.fix, reload_fix());
}

fn missing(device: &str) -> Finding {
    Finding {
        object: device.into(),
        declared: "a vrf device".into(),
        found: "no such device".into(),
        fix: "create it".into(),
        awaits_reload: false,
    }
}

/// Between the waves of an SDN apply: a device the running version adds (not in the node's
/// generated file) awaits the node's reload; one the node's own file declares and its kernel
/// lacks is drift it had before, whatever the versions.
#[test]
fn only_a_device_the_applied_version_lacks_awaits_the_reload() {
    let applied: BTreeSet<String> = ["vrf_tdemo".to_string()].into();
    let marked = |running, version| {
        let mut findings = vec![missing("vrf_tnew"), missing("vrf_tdemo")];
        mark_awaiting_reload(&mut findings, running, version, &applied);
        findings.iter().map(|f| f.awaits_reload).collect::<Vec<_>>()
    };
    assert_eq!(marked(8, Some(7)), [true, false]);
    // Reloaded: nothing awaits it.
    assert_eq!(marked(8, Some(8)), [false, false]);
    // No generated file yet: every device awaits the first reload.
    let mut findings = vec![missing("vrf_tnew")];
    mark_awaiting_reload(&mut findings, 8, None, &BTreeSet::new());
    assert!(findings[0].awaits_reload);
}
