//! The checks on the interfaces tenant traffic leaves by: replies come back by them, so they
//! must forward, and with `asymmetric_returns` their reverse-path filter must let returns in
//! that the VRF routes elsewhere; so must the VRF's L3VNI bridge (`l3vni_bridge`), where the
//! returns the core delivers to another node enter the VRF.

use crate::{CheckResult, VrfView};
use deevnet_runtime::netlink::{Family, Links};
use deevnet_runtime::sysctl::SysctlKey;
use serde_json::{json, Value};

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
    let passes = format!("{dev} accepts asymmetric returns");
    rp_filter_result(vrf, dev, all, own, &passes, |level, values| {
        format!(
            "{dev} drops asymmetric returns: effective rp_filter {level} (the larger of \
             {values}), expected 0: returns of tenant traffic that arrive by {dev} fail the \
             reverse-path check because the VRF's routes leave by interfaces outside it"
        )
    })
}

/// The VRF's L3VNI bridge: a return the core delivers to another node comes back over the
/// fabric and enters the VRF there. The bridge has no IPv4 address, and for such a device the
/// kernel's reverse-path check fails in loose mode too whenever the VRF's route back leaves by
/// another interface (its default, by the uplink).
pub fn check_l3vni_rp_filter(
    vrf: &str,
    bridge: &str,
    all: Option<&str>,
    own: Option<&str>,
) -> CheckResult {
    let passes = format!("its L3VNI bridge {bridge} accepts returns from other nodes");
    rp_filter_result(vrf, bridge, all, own, &passes, |level, values| {
        format!(
            "its L3VNI bridge {bridge} drops returns from other nodes: effective rp_filter \
             {level} (the larger of {values}), expected 0: a return the core delivers to \
             another node enters {vrf} by {bridge}, which has no IPv4 address, so the \
             reverse-path check fails even in loose mode (the VRF's routes leave by the uplink)"
        )
    })
}

/// The rp_filter check's result: `passes` says what 0 means for `dev`, `drops` what another
/// level does (given the level and the values read); the fix is the same for both.
fn rp_filter_result(
    vrf: &str,
    dev: &str,
    all: Option<&str>,
    own: Option<&str>,
    passes: &str,
    drops: impl Fn(u8, &str) -> String,
) -> CheckResult {
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
        Some(0) => format!("{vrf}: {passes} (rp_filter 0: {values})"),
        Some(level) => format!(
            "{vrf}: {}; set both to 0 (deevnet.net.sysctl_forwarding rp_filter: {{all: 0, \
             {dev}: 0}})",
            drops(level, &values)
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

/// The failed check when the named L3VNI bridge is not a port of the VRF (a wrong name, or the
/// zone not applied on the node); `None` when it is.
pub fn l3vni_bridge_misplaced(links: &Links, view: &VrfView, bridge: &str) -> Option<CheckResult> {
    let vrf = view.name;
    let vrf_index = view.device.map(|device| device.index);
    let (found, actual) = match links.by_name(bridge) {
        None => (format!("no interface named {bridge}"), Value::Null),
        Some(link) if link.controller.is_some() && link.controller == vrf_index => return None,
        Some(link) => {
            let controller = link.controller.map(|index| links.name_of(index));
            let place = match &controller {
                Some(name) => format!("a port of {name}"),
                None => "in no VRF".to_string(),
            };
            (
                format!("{bridge} is {place}"),
                json!({"controller": controller}),
            )
        }
    };
    Some(CheckResult {
        vrf: vrf.to_string(),
        check: format!("rp_filter {bridge}"),
        ok: false,
        expected: json!({"controller": vrf}),
        actual,
        msg: format!(
            "{vrf}: l3vni_bridge {bridge} is not the VRF's L3VNI bridge ({found}), so the \
             returns other nodes deliver cannot be checked; name the bridge of the zone's \
             L3VNI that is a port of {vrf} (Proxmox's vrfbr_<zone>), or apply the zone on this \
             node"
        ),
    })
}
