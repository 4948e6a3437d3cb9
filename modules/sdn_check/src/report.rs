//! What the module reports ([`Report`]: every result key besides `changed` and `msg`, declared
//! once for success and failure, RETURN in collection/plugins/modules/sdn_check.py), built from
//! the files ([`evaluate`]), and the summary line. Pure.

use crate::derive::{check_node_known, derive};
use crate::files::Sources;
use crate::finding::Finding;
use crate::intent::{NodeIntent, Tenant, ZoneIntent};
use crate::pending::{not_reloaded, pending_changes, pending_findings, PendingChange};
use serde::Serialize;

/// `version`: the running configuration's and the one this node generated its network from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Versions {
    pub running: u64,
    /// `null` when interfaces_sdn does not exist.
    pub applied: Option<u64>,
}

/// The result's keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub node: String,
    pub version: Versions,
    pub pending: Vec<PendingChange>,
    pub zones: Vec<ZoneIntent>,
    pub tenants: Vec<Tenant>,
    /// Every finding, pending, not reloaded and kernel, in that order.
    pub drift: Vec<Finding>,
    /// Whether the kernel was compared.
    pub kernel: bool,
    /// What sdn_check did not know and skipped (also returned as warnings). Not `skipped`:
    /// Ansible takes a true `skipped` in a result as a skipped task.
    pub skipped_config: Vec<String>,
    /// Whether the running configuration exists (always true here: an absent one fails the
    /// run with `sdn_applied: false`, files::read_sources).
    pub sdn_applied: bool,
}

/// The report of the files alone (the kernel not compared yet) and the node's intent.
/// `interfaces_sdn` names the generated file in its finding; `host` is this host's short name.
pub fn evaluate(
    sources: &Sources,
    node: &str,
    host: &str,
    interfaces_sdn: &str,
) -> Result<(Report, NodeIntent), String> {
    check_node_known(&sources.running, node, host)?;
    let derived = derive(&sources.running, node, &sources.own)?;
    let pending = pending_changes(&sources.pending, &sources.running);
    let mut drift = pending_findings(&pending);
    drift.extend(not_reloaded(
        interfaces_sdn,
        sources.running.version,
        sources.applied,
        !derived.intent.zones.is_empty(),
    ));
    let mut skipped = sources.own.not_followed.clone();
    skipped.extend(derived.skipped);
    let report = Report {
        node: node.to_string(),
        version: Versions {
            running: sources.running.version,
            applied: sources.applied,
        },
        pending,
        zones: derived.intent.zones.clone(),
        tenants: derived.intent.tenants.clone(),
        drift,
        kernel: false,
        skipped_config: skipped,
        sdn_applied: true,
    };
    Ok((report, derived.intent))
}

impl Report {
    /// `msg` on success: the node, what applies to it, and the drift.
    pub fn summary(&self) -> String {
        let compared = if self.kernel {
            "files and kernel compared"
        } else {
            "kernel not compared (kernel: false)"
        };
        format!(
            "node {}: {} zone(s), {} tenant(s), SDN version {}; {} drift finding(s); {compared}",
            self.node,
            self.zones.len(),
            self.tenants.len(),
            self.version.running,
            self.drift.len()
        )
    }

    /// `msg` when drift fails the task: every finding on a line of its own.
    pub fn drift_message(&self) -> String {
        let mut lines = vec![format!(
            "node {}: {} SDN drift finding(s) (drift: warn reports them without failing):",
            self.node,
            self.drift.len()
        )];
        lines.extend(self.drift.iter().map(|f| {
            format!(
                "{}: declared {}, found {}; {}",
                f.object, f.declared, f.found, f.fix
            )
        }));
        lines.join("\n")
    }
}
