//! Invariants of `sdn_check`'s readers and derivation: Proxmox's `.running-config`, the `.cfg`
//! section-config files and `/etc/network/interfaces`, shared by the libFuzzer target
//! `sdn_files` and the stable smoke test (`modules/fuzz_invariants/tests/it/sdn_check.rs`).

use crate::input::{split_at_nul, Input};
use sdn_check::derive::{derive, named_nodes};
use sdn_check::files::Sources;
use sdn_check::interfaces::{applied_version, generated_devices, own_interfaces};
use sdn_check::kernel_drift::kernel_drift;
use sdn_check::observation::{declared_devices, KernelView};
use sdn_check::pending::pending_changes;
use sdn_check::report::evaluate;
use sdn_check::running_config::{self, ObjectKind};
use sdn_check::section_config;
use sdn_check::{Params, Request, SPEC};
use std::collections::BTreeMap;

/// Target `sdn_files`: `RUNNING_CONFIG \0 INTERFACES \0 CFG \0 DECISIONS`. Every reader takes
/// any text without panicking; on what parses, the derivation, the pending comparison and the
/// kernel comparison hold their rules for every node the configuration names and one more.
pub fn check_bytes(data: &[u8]) {
    let (running, rest) = split_at_nul(data);
    let (interfaces, rest) = split_at_nul(rest);
    let (cfg, program) = split_at_nul(rest);
    let running = String::from_utf8_lossy(running);
    let interfaces = String::from_utf8_lossy(interfaces);
    let cfg = String::from_utf8_lossy(cfg);
    let mut input = Input::new(program);

    let applied = applied_version(&interfaces, "interfaces_sdn").ok();
    let sections = section_config::parse(&cfg, "config_dir");
    let (Ok(config), Ok(own)) = (
        running_config::parse(&running, "running_config"),
        own_interfaces(&interfaces, "interfaces"),
    ) else {
        return;
    };

    // `.cfg` files holding exactly the running configuration have nothing pending: comparing a
    // section with its applied copy depends on the object alone.
    let itself: BTreeMap<ObjectKind, _> = ObjectKind::ALL
        .into_iter()
        .map(|kind| (kind, config.of(kind).clone()))
        .collect();
    let changes = pending_changes(&itself, &config);
    assert!(
        changes.is_empty(),
        "the running objects differ from themselves: {changes:?}\n{running}"
    );

    let mut pending = BTreeMap::new();
    if let Ok(objects) = sections {
        pending.insert(*input.pick(&ObjectKind::ALL), objects);
    }
    let sources = Sources {
        running: config,
        pending,
        applied,
        applied_devices: generated_devices(&interfaces),
        own,
    };
    let mut nodes: Vec<String> = named_nodes(&sources.running).into_iter().take(4).collect();
    nodes.push(input.text(12));
    for node in &nodes {
        derivation_invariants(&sources, node);
    }
}

/// For one node: the derivation is deterministic, the report is JSON and its messages render,
/// and a kernel without any of the declared devices is never a clean one.
fn derivation_invariants(sources: &Sources, node: &str) {
    let first = derive(&sources.running, node, &sources.own);
    assert_eq!(
        first,
        derive(&sources.running, node, &sources.own),
        "node {node:?}: the same files derive otherwise on a second run"
    );
    let Ok((report, intent)) = evaluate(sources, node, node, "") else {
        return;
    };
    serde_json::to_string(&report).expect("the report is JSON");
    let _ = (report.summary(), report.drift_message());

    let findings = kernel_drift(&intent, &KernelView::default());
    for finding in &findings {
        assert!(
            !finding.object.is_empty() && !finding.fix.is_empty(),
            "node {node:?}: a finding without its object or fix: {finding:?}"
        );
    }
    let compared = intent
        .zones
        .iter()
        .any(|zone| zone.generated && !zone.vnets.is_empty());
    assert!(
        !compared || !findings.is_empty(),
        "node {node:?}: none of {:?} exists, yet the kernel shows no drift",
        declared_devices(&intent)
    );
}

/// Arguments the runtime accepted against sdn_check's spec always become its `Params`; the
/// request built from them is either accepted or refused starting `OPTION: 'VALUE'` (target
/// `spec_args`).
pub fn typed_arguments(validated: Option<serde_json::Map<String, serde_json::Value>>) {
    let Some((params, value)) = crate::spec_args::typed::<Params>(validated) else {
        return;
    };
    if let Err(message) = Request::from_params(params) {
        assert!(
            SPEC.iter()
                .any(|option| message.starts_with(&format!("{}: '", option.name))),
            "a refusal that does not start by naming the option and its value: {message:?} for {value}"
        );
    }
}
