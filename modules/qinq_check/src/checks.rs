//! The checks, run on what was read ([`evaluate`]), and the slaves whose txvlan to switch off.

use crate::fix;
use crate::guest_mtu::{self, GuestMtuReport};
use crate::guest_ports::{self, GuestPortFinding};
use crate::observation::Observed;
use crate::params::GuestPortsPolicy;
use crate::params::Request;
use crate::report::{Check, GuardReport, HopReport, LostTag, MtuReport, Report, SlaveReport};
use crate::stack::{ParentKind, Stack};
use crate::TAG_LEN;
use deevnet_runtime::netlink::{FdbEntry, FdbState, Link, OperState, PortVlans};
use std::collections::BTreeMap;

/// Runs every check on what was read.
pub fn evaluate(request: &Request, stack: &Stack, observed: &Observed) -> Report {
    let mut checks = Vec::new();
    let uplink_port = observed
        .port_vlans
        .iter()
        .find(|p| p.index == stack.uplink.index);
    check_stack(request, stack, uplink_port, &mut checks);
    let slaves = check_slaves(stack, observed, &mut checks);
    let mtu = check_mtu(request, stack, &mut checks);
    let guest_mtu = check_guest_mtu(request, stack, &mut checks);
    check_trunks(request, stack, observed, &mut checks);
    let fdb_vlan1 = check_fdb(request, stack, observed, uplink_port, &mut checks);
    check_ipv6(stack, observed, &mut checks);
    let guest_ports = check_guest_ports(request, stack, observed, &mut checks);
    Report {
        checks,
        slaves,
        mtu,
        fdb_vlan1,
        configured_slaves: observed.configured_slaves.clone(),
        guest_ports,
        guest_vlan_guard: GuardReport {
            requested: request.guest_vlan_guard,
            present: observed.ruleset.guard_installed(),
            not_in_force: observed.ruleset.guard_state().err(),
            changed: observed.guard_changed,
            commands: guest_ports::guard_commands(),
        },
        guest_mtu,
    }
}

/// The zone bridge's guest ports against the zone's MTU ([`guest_mtu::audit`]): a failed check
/// `guest_mtu:<port>` each port that differs, and one `guest_mtu` when the bridge has guest
/// ports but no MTU to compare them with.
fn check_guest_mtu(request: &Request, stack: &Stack, checks: &mut Vec<Check>) -> GuestMtuReport {
    let report = guest_mtu::audit(&stack.bridge, &stack.zone_guest_ports, request.zone_mtu);
    let Some(zone) = report.zone_mtu else {
        if report.checked > 0 {
            checks.push(
                Check::new(
                    "guest_mtu",
                    false,
                    format!(
                        "the zone's MTU, to compare {}'s guest ports with",
                        stack.bridge.name
                    ),
                    format!(
                        "no zone_mtu given and no MTU reported for {}",
                        stack.bridge.name
                    ),
                )
                .fix_with("give zone_mtu, the MTU the zone's guests use"),
            );
        }
        return report;
    };
    let from = match report.zone_mtu_from {
        "zone_mtu" => "zone_mtu".to_string(),
        _ => format!("{}'s MTU", stack.bridge.name),
    };
    for finding in &report.ports {
        checks.push(
            Check::new(
                format!("guest_mtu:{}", finding.port),
                false,
                format!(
                    "MTU of {} ({} {}, net{}) the zone's {zone} ({from})",
                    finding.port,
                    guest_mtu::guest_word(finding.kind),
                    finding.vmid,
                    finding.nic
                ),
                match finding.mtu {
                    Some(mtu) => mtu.to_string(),
                    None => "no MTU reported".to_string(),
                },
            )
            .fix_with(finding.fix.clone()),
        );
    }
    report
}

/// Guest ports that can tag onto the uplink: always in the report (unless `ignore`), a failed
/// check each with `fail` (with `warn`, the module warns instead).
fn check_guest_ports(
    request: &Request,
    stack: &Stack,
    observed: &Observed,
    checks: &mut Vec<Check>,
) -> Vec<GuestPortFinding> {
    if request.guest_ports == GuestPortsPolicy::Ignore {
        return Vec::new();
    }
    let findings = guest_ports::audit(
        stack.guest_bridge.as_ref(),
        stack.uplink_protocol(),
        &observed.port_vlans,
        &observed.ruleset,
    );
    if request.guest_ports == GuestPortsPolicy::Fail {
        for finding in &findings {
            checks.push(
                Check::new(
                    format!("guest_port:{}", finding.port),
                    false,
                    format!(
                        "VM {} ({} port on {}) cannot send 802.1Q/802.1ad frames onto the uplink",
                        finding.vmid, finding.kind, finding.bridge
                    ),
                    format!("{}; {}", finding.vlans, finding.nftables),
                )
                .fix_with(finding.fix.clone()),
            );
        }
    }
    findings
}

fn check_stack(
    request: &Request,
    stack: &Stack,
    uplink_port: Option<&PortVlans>,
    checks: &mut Vec<Check>,
) {
    let uplink = &stack.uplink;
    let protocol = uplink
        .vlan
        .and_then(|v| v.protocol)
        .map(|p| p.name())
        .unwrap_or("unknown-protocol");
    let up = uplink.admin_up && matches!(uplink.oper_state, OperState::Up | OperState::Unknown);
    checks.push(
        Check::new(
            "uplink_device",
            up,
            format!(
                "{} up, a VLAN device with id {} on {}",
                uplink.name, request.uplink_vlan, stack.parent.name
            ),
            format!(
                "{} {protocol} id {} on {}, {}{}",
                uplink.name,
                request.uplink_vlan,
                stack.parent.name,
                if uplink.admin_up {
                    "admin up"
                } else {
                    "admin down"
                },
                format_args!(", oper {}", uplink.oper_state.name())
            ),
        )
        .fix_with(fix::bring_up(&stack.parent.name, &uplink.name)),
    );

    let controller = uplink.controller;
    checks.push(
        Check::new(
            "uplink_bridge_port",
            controller == Some(stack.bridge.index),
            format!("{} a port of {}", uplink.name, stack.bridge.name),
            match controller {
                Some(index) if index == stack.bridge.index => {
                    format!("a port of {}", stack.bridge.name)
                }
                Some(index) => format!("a port of ifindex {index}, not of {}", stack.bridge.name),
                None => "a port of no bridge".into(),
            },
        )
        .fix_with(fix::bridge_port(&uplink.name, &stack.bridge.name)),
    );

    let filtering = stack.bridge.bridge.and_then(|b| b.vlan_filtering);
    checks.push(
        Check::new(
            "vlan_filtering",
            filtering == Some(true),
            format!("{} VLAN-aware (vlan_filtering 1)", stack.bridge.name),
            match filtering {
                Some(true) => "vlan_filtering 1".to_string(),
                Some(false) => "vlan_filtering 0: the bridge ignores the inner tags".to_string(),
                None => "no VLAN filtering reported: this kernel's bridge has no VLAN filtering"
                    .to_string(),
            },
        )
        .fix_with(fix::vlan_filtering(&stack.bridge.name)),
    );

    checks.push(port_vlans_check(
        "uplink_vlans",
        request,
        uplink,
        uplink_port,
    ));
}

fn port_vlans_check(
    name: &str,
    request: &Request,
    port: &Link,
    vlans: Option<&PortVlans>,
) -> Check {
    let empty = PortVlans::default();
    let vlans = vlans.unwrap_or(&empty);
    let missing = request.vlans.missing_on(vlans);
    let untagged = request.vlans.untagged_on(vlans);
    let carried: Vec<String> = vlans
        .vlans
        .iter()
        .map(|v| {
            let range = if v.start == v.end {
                v.start.to_string()
            } else {
                format!("{}-{}", v.start, v.end)
            };
            match (v.pvid, v.untagged) {
                (true, true) => format!("{range} (PVID, untagged)"),
                (true, false) => format!("{range} (PVID)"),
                (false, true) => format!("{range} (untagged)"),
                (false, false) => range,
            }
        })
        .collect();
    let mut actual = if carried.is_empty() {
        "no VLAN".to_string()
    } else {
        carried.join(", ")
    };
    if !missing.is_empty() {
        actual.push_str(&format!("; missing {missing}"));
    }
    if !untagged.is_empty() {
        actual.push_str(&format!("; sent untagged {untagged}"));
    }
    let mut fixes = Vec::new();
    if !missing.is_empty() {
        fixes.push(fix::vlans_missing(&port.name, &missing.to_string()));
    }
    if !untagged.is_empty() {
        fixes.push(fix::vlans_untagged(&port.name, &untagged.to_string()));
    }
    Check::new(
        name,
        missing.is_empty() && untagged.is_empty(),
        format!("{} carries {} tagged", port.name, request.vlans),
        actual,
    )
    .fix_with(fixes.join("; "))
}

fn check_slaves(stack: &Stack, observed: &Observed, checks: &mut Vec<Check>) -> Vec<SlaveReport> {
    let feature = stack.txvlan_feature();
    // A single NIC is its own (only) NIC: there is no bond to enslave it to.
    if stack.parent_kind == ParentKind::Bond {
        checks.push(
            Check::new(
                "bond_slaves",
                !stack.slaves.is_empty(),
                format!("{} has at least one slave", stack.parent.name),
                if stack.slaves.is_empty() {
                    "no slave".to_string()
                } else {
                    let names: Vec<&str> =
                        stack.slaves.iter().map(|(l, _)| l.name.as_str()).collect();
                    format!(
                        "{} ({})",
                        names.join(", "),
                        stack.bond_mode.as_deref().unwrap_or("mode unknown")
                    )
                },
            )
            .fix_with(fix::enslave(&stack.parent.name)),
        );
    }
    let mut reports = Vec::new();
    for (slave, role) in &stack.slaves {
        let state = observed.slaves.get(&slave.name);
        let role_name = role.map(|r| r.name());
        let driver = state.and_then(|s| s.driver.clone());
        let who = format!(
            "{} ({}, driver {})",
            slave.name,
            match stack.parent_kind {
                ParentKind::Nic => "uplink NIC",
                ParentKind::Bond => role_name.unwrap_or("role unknown"),
            },
            driver.as_deref().unwrap_or("unknown")
        );
        let (ok, actual, fix) = match state {
            None => (false, format!("{who}: not read"), String::new()),
            Some(s) if !s.feature.active => (
                true,
                format!(
                    "{who}: off{}",
                    if s.changed {
                        " (switched off by this run)"
                    } else {
                        ""
                    }
                ),
                String::new(),
            ),
            Some(s) if s.feature.changeable => (
                false,
                format!("{who}: on"),
                fix::txvlan_off(&slave.name, feature),
            ),
            Some(_) => (
                false,
                format!("{who}: on [fixed]"),
                fix::txvlan_fixed(&slave.name),
            ),
        };
        checks.push(
            Check::new(
                format!("txvlan:{}", slave.name),
                ok,
                format!("{feature} off"),
                actual,
            )
            .fix_with(fix),
        );
        reports.push(SlaveReport {
            name: slave.name.clone(),
            driver,
            role: role_name,
            feature,
            enabled: state.is_some_and(|s| s.feature.active),
            fixed: state.is_some_and(|s| !s.feature.changeable),
            changed: state.is_some_and(|s| s.changed),
        });
    }
    reports
}

fn check_mtu(request: &Request, stack: &Stack, checks: &mut Vec<Check>) -> MtuReport {
    let uplink_allows = stack.uplink.mtu.map(|m| m.saturating_sub(TAG_LEN));
    if let Some(zone_mtu) = request.zone_mtu {
        checks.push(
            Check::new(
                "zone_mtu",
                uplink_allows.is_some_and(|a| a >= zone_mtu),
                format!(
                    "{} allows a zone MTU of at least {zone_mtu}",
                    stack.uplink.name
                ),
                match (stack.uplink.mtu, uplink_allows) {
                    (Some(mtu), Some(allows)) => format!("MTU {mtu}, which allows {allows}"),
                    _ => "no MTU reported".to_string(),
                },
            )
            .fix_with(fix::zone_mtu(
                &stack.uplink.name,
                &stack.parent_phrase(),
                zone_mtu + TAG_LEN,
                uplink_allows.unwrap_or(0),
            )),
        );
    }
    let zone_mtu = request.zone_mtu.or(uplink_allows).unwrap_or(0);
    let mut hops = BTreeMap::new();
    for hop in stack.hops(zone_mtu) {
        let ok = hop.link.mtu.is_some_and(|m| m >= hop.required);
        checks.push(
            Check::new(
                format!("mtu:{}", hop.link.name),
                ok,
                format!(
                    "MTU of {} ({}) at least {} ({})",
                    hop.link.name,
                    hop.role,
                    hop.required,
                    hop.role.why()
                ),
                match hop.link.mtu {
                    Some(mtu) => format!("{mtu}"),
                    None => "no MTU reported".to_string(),
                },
            )
            .fix_with(fix::hop_mtu(&hop.link.name, hop.required)),
        );
        hops.insert(
            hop.link.name.clone(),
            HopReport {
                role: hop.role,
                mtu: hop.link.mtu,
                required: hop.required,
            },
        );
    }
    MtuReport {
        zone_mtu: request.zone_mtu,
        uplink_allows,
        hops,
    }
}

fn check_trunks(request: &Request, stack: &Stack, observed: &Observed, checks: &mut Vec<Check>) {
    for trunk in &stack.trunks {
        checks.push(
            Check::new(
                format!("trunk_bridge_port:{}", trunk.name),
                trunk.controller == Some(stack.bridge.index),
                format!("{} a port of {}", trunk.name, stack.bridge.name),
                match trunk.controller {
                    Some(i) if i == stack.bridge.index => {
                        format!("a port of {}", stack.bridge.name)
                    }
                    Some(i) => format!("a port of ifindex {i}"),
                    None => "a port of no bridge".to_string(),
                },
            )
            .fix_with(fix::bridge_port(&trunk.name, &stack.bridge.name)),
        );
        let vlans = observed.port_vlans.iter().find(|p| p.index == trunk.index);
        checks.push(port_vlans_check(
            &format!("trunk_vlans:{}", trunk.name),
            request,
            trunk,
            vlans,
        ));
    }
}

fn check_fdb(
    request: &Request,
    stack: &Stack,
    observed: &Observed,
    uplink_port: Option<&PortVlans>,
    checks: &mut Vec<Check>,
) -> Vec<LostTag> {
    // Frames that lost their inner tag are classified into the uplink's PVID (VLAN 1 unless
    // changed), or carry no VLAN at all on a bridge that does not filter.
    let pvid = uplink_port.and_then(|p| p.pvid());
    let lost_tag_vlan = |vlan: Option<u16>| match vlan {
        None => true,
        Some(vid) => !request.vlans.contains(vid) && (vid == 1 || Some(vid) == pvid),
    };
    let learned_on_uplink =
        |entry: &&FdbEntry| entry.port == stack.uplink.index && entry.state == FdbState::Learned;
    let mut lost: Vec<LostTag> = observed
        .fdb
        .iter()
        .filter(learned_on_uplink)
        .filter(|e| lost_tag_vlan(e.vlan))
        .map(|e| LostTag {
            mac: e.mac.clone(),
            vlan: e.vlan,
        })
        .collect();
    lost.sort_by(|a, b| (a.vlan, &a.mac).cmp(&(b.vlan, &b.mac)));
    lost.dedup();
    let listed: Vec<String> = lost
        .iter()
        .map(|l| match l.vlan {
            Some(vid) => format!("{} in VLAN {vid}", l.mac),
            None => format!("{} without VLAN", l.mac),
        })
        .collect();
    checks.push(
        Check::new(
            "fdb_vlan1",
            lost.is_empty(),
            format!(
                "no MAC learned through {} in VLAN {} or untagged",
                stack.uplink.name,
                pvid.filter(|&p| p != 1)
                    .map(|p| format!("1/{p}"))
                    .unwrap_or_else(|| "1".into())
            ),
            if listed.is_empty() {
                "none".to_string()
            } else {
                listed.join(", ")
            },
        )
        .fix_with(fix::FAR_SIDE_TAG_LOST),
    );

    for peer in &request.peers {
        let seen: Vec<&FdbEntry> = observed
            .fdb
            .iter()
            .filter(|e| e.mac == peer.mac && e.state != FdbState::Local)
            .collect();
        let on_uplink: Vec<&FdbEntry> = seen
            .iter()
            .copied()
            .filter(|e| e.port == stack.uplink.index)
            .collect();
        let ok = on_uplink.iter().any(|e| e.vlan == Some(peer.vlan));
        let actual = if seen.is_empty() {
            "not in the forwarding database (no traffic from it lately?)".to_string()
        } else {
            let places: Vec<String> = seen
                .iter()
                .map(|e| {
                    let vlan = e
                        .vlan
                        .map(|v| format!("VLAN {v}"))
                        .unwrap_or_else(|| "no VLAN".into());
                    let port = if e.port == stack.uplink.index {
                        stack.uplink.name.clone()
                    } else {
                        format!("ifindex {}", e.port)
                    };
                    format!("{vlan} on {port}")
                })
                .collect();
            places.join(", ")
        };
        checks.push(
            Check::new(
                format!("peer:{}", peer.mac),
                ok,
                format!(
                    "learned through {} in VLAN {}",
                    stack.uplink.name, peer.vlan
                ),
                actual,
            )
            .fix_with(if on_uplink.iter().any(|e| lost_tag_vlan(e.vlan)) {
                fix::FAR_SIDE_TAG_LOST
            } else {
                fix::PEER_SILENT
            }),
        );
    }
    lost
}

fn check_ipv6(stack: &Stack, observed: &Observed, checks: &mut Vec<Check>) {
    let value = observed.bridge_disable_ipv6.as_deref();
    checks.push(
        Check::new(
            "bridge_ipv6",
            value.is_none_or(|v| v == "1"),
            format!(
                "IPv6 disabled on {} (no link-local address on the tenant transport)",
                stack.bridge.name
            ),
            match value {
                None => "IPv6 is not available on this kernel".to_string(),
                Some(v) => format!("net.ipv6.conf.{}.disable_ipv6 = {v}", stack.bridge.name),
            },
        )
        .fix_with(fix::bridge_ipv6(&stack.bridge.name)),
    );
}

/// The slaves whose feature should be switched off: on, and switchable.
pub fn txvlan_to_switch_off(stack: &Stack, observed: &Observed) -> Vec<String> {
    stack
        .slaves
        .iter()
        .filter_map(|(slave, _)| {
            let state = observed.slaves.get(&slave.name)?;
            (state.feature.active && state.feature.changeable).then(|| slave.name.clone())
        })
        .collect()
}
