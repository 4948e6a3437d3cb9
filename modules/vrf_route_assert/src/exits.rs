//! The checks on the interfaces tenant traffic leaves by: replies come back by them, so they
//! must forward, and with `asymmetric_returns` their reverse-path filter must let returns in
//! that the VRF routes elsewhere.

use crate::CheckResult;
use deevnet_runtime::netlink::Family;
use deevnet_runtime::sysctl::SysctlKey;
use serde_json::json;

pub fn check_forwarding(
    vrf: &str,
    family: Family,
    dev: &str,
    value: Option<String>,
) -> CheckResult {
    let key = match family {
        Family::V4 => SysctlKey::ipv4_conf(dev, "forwarding"),
        Family::V6 => SysctlKey::ipv6_conf(dev, "forwarding"),
    };
    let ok = value.as_deref() == Some("1");
    let msg = match value.as_deref() {
        Some("1") => format!("{vrf}: {dev} forwards {} ({key} = 1)", family.name()),
        Some(other) => format!(
            "{vrf}: {dev} has {} forwarding off ({key} = {other}), expected 1: tenant traffic \
             leaves by it and replies coming back by it are not forwarded",
            family.name()
        ),
        None => format!("{vrf}: {dev} has no {key} (the interface vanished?), expected 1",),
    };
    CheckResult {
        vrf: vrf.to_string(),
        check: format!("forwarding {dev}"),
        ok,
        expected: json!("1"),
        actual: json!(value),
        msg,
    }
}

/// The kernel applies the larger of `all` and the interface's rp_filter; any non-zero value
/// (strict 1, loose 2) drops a return whose source the VRF would not route back by `dev`,
/// which is every return once the VRF's routes leave by interfaces outside it.
pub fn check_rp_filter(vrf: &str, dev: &str, all: Option<&str>, own: Option<&str>) -> CheckResult {
    let all_key = SysctlKey::ipv4_conf("all", "rp_filter");
    let own_key = SysctlKey::ipv4_conf(dev, "rp_filter");
    let level = |value: Option<&str>| value.and_then(|v| v.trim().parse::<u8>().ok());
    let effective = match (level(all), level(own)) {
        (Some(all), Some(own)) => Some(all.max(own)),
        _ => None,
    };
    let shown = |value: Option<&str>| value.unwrap_or("missing").to_string();
    let values = format!("{all_key} = {}, {own_key} = {}", shown(all), shown(own));
    let msg = match effective {
        Some(0) => format!("{vrf}: {dev} accepts asymmetric returns (rp_filter 0: {values})"),
        Some(level) => format!(
            "{vrf}: {dev} drops asymmetric returns: effective rp_filter {level} (the larger of \
             {values}), expected 0: returns of tenant traffic that arrive by {dev} fail the \
             reverse-path check because the VRF's routes leave by interfaces outside it; set \
             both to 0 (deevnet.net.sysctl_forwarding rp_filter: {{all: 0, {dev}: 0}})"
        ),
        None => format!(
            "{vrf}: {dev} has no readable rp_filter ({values}; the interface vanished?), \
             expected 0"
        ),
    };
    CheckResult {
        vrf: vrf.to_string(),
        check: format!("rp_filter {dev}"),
        ok: effective == Some(0),
        expected: json!(0),
        actual: json!({"all": all, "interface": own, "effective": effective}),
        msg,
    }
}
