//! Where a VRF's lookups are made ([`VrfView`]): its device and table, or the default VRF's
//! main table; and the `vrf` check that finds it.

use crate::params::VrfCheck;
use crate::report::{CheckResult, Report};
use crate::vrf_support::VrfSupport;
use deevnet_runtime::netlink::{Link, Links};
use serde_json::{json, Value};

/// Where a VRF's lookups are made: its device and table, or the default VRF's main table.
pub struct VrfView<'a> {
    pub name: &'a str,
    pub table: u32,
    /// The device lookups are pinned to; `None` for the default VRF.
    pub device: Option<&'a Link>,
}

impl VrfView<'_> {
    /// The table whose answers are the VRF's own (anything else is fall-through); `None` for
    /// the default VRF, whose lookups go wherever the node's rules send them.
    pub fn own_table(&self) -> Option<u32> {
        self.device.map(|_| self.table)
    }
}

/// The `vrf` check, and where the VRF's lookups are made when it exists.
pub(crate) fn vrf_view<'a>(
    links: &'a Links,
    support: &VrfSupport,
    check: &'a VrfCheck,
    report: &mut Report,
) -> Option<VrfView<'a>> {
    if check.is_default_vrf() {
        report.checks.push(CheckResult {
            vrf: check.name.clone(),
            check: "vrf".into(),
            ok: true,
            expected: json!({"kind": "vrf"}),
            actual: json!({"kind": "default", "table": 254}),
            msg: format!(
                "{}: the default VRF (table main, lookups without a VRF)",
                check.name
            ),
        });
        return Some(VrfView {
            name: &check.name,
            table: 254,
            device: None,
        });
    }
    let (found, actual, mut msg) = find_vrf(links, &check.name);
    if let (None, Some(why)) = (found, support.absent()) {
        msg.push_str(&format!("; this kernel cannot have VRFs: {why}"));
    }
    report.checks.push(CheckResult {
        vrf: check.name.clone(),
        check: "vrf".into(),
        ok: found.is_some(),
        expected: json!({"kind": "vrf"}),
        actual,
        msg,
    });
    let (device, table) = found?;
    Some(VrfView {
        name: &check.name,
        table,
        device: Some(device),
    })
}

/// The VRF device and its table when `name` is one; what was found (the result's `actual`)
/// and the check's line either way.
fn find_vrf<'a>(links: &'a Links, name: &str) -> (Option<(&'a Link, u32)>, Value, String) {
    let no_vrf = format!("{name}: the tenant has no VRF on this node");
    let Some(link) = links.by_name(name) else {
        return (
            None,
            Value::Null,
            format!("{no_vrf} (no interface named {name})"),
        );
    };
    let actual = json!({"kind": link.kind, "table": link.vrf_table, "ifindex": link.index});
    match (link.is_vrf(), link.vrf_table) {
        (true, Some(table)) => (
            Some((link, table)),
            actual,
            format!("{name}: VRF with table {table}, ifindex {}", link.index),
        ),
        (true, None) => (
            None,
            actual,
            format!("{name}: the kernel reports no routing table for this VRF"),
        ),
        (false, _) => {
            let kind = link
                .kind
                .as_deref()
                .unwrap_or("physical or loopback interface");
            (
                None,
                actual,
                format!("{no_vrf} ({name} is a {kind}, not a VRF)"),
            )
        }
    }
}
