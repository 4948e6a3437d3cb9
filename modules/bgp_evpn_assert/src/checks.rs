//! The assertions: the request against what FRR reported ([`Observation`]), one [`Finding`]
//! per difference, each with its fix in words. Pure; every wording is here.

use crate::frr::{BgpVrf, Neighbor};
use crate::observe::Observation;
use crate::params::{
    AddressFamily, Advertises, DefaultFamily, PeerExpectation, Request, VniExpectation, DEFAULT_VRF,
};
use crate::report::{DefaultReceived, Finding, PeerReport, Report, VniReport};
use deevnet_runtime::advice;
use ipnet::IpNet;
use std::net::IpAddr;

/// FRR's code/subcode for an OPEN refused for its AS (RFC 4271 6.2: OPEN Message Error, Bad
/// Peer AS).
const BAD_PEER_AS: &str = "0202";

pub fn evaluate(request: &Request, observation: &Observation) -> Report {
    let mut report = Report::default();
    for (expected, members) in request.peers.iter().zip(&observation.members) {
        let Some(vrf) = observation.bgp.get(&expected.vrf) else {
            continue;
        };
        for name in members {
            let Some(neighbor) = vrf.neighbor(name) else {
                continue;
            };
            let (peer, findings) = check_peer(request, expected, vrf, neighbor, observation);
            report.peers.push(peer);
            report.findings.extend(findings);
        }
    }
    for expected in &request.vnis {
        let (vni, findings) = check_vni(expected, observation);
        report.vnis.push(vni);
        report.findings.extend(findings);
    }
    report
}

/// `peer swp1 in VRF default` (`, member of peer group bgpv6`).
fn object(expected: &PeerExpectation, neighbor: &Neighbor) -> String {
    let mut object = format!("peer {} in VRF {}", neighbor.name, expected.vrf);
    if neighbor.name != expected.peer {
        object.push_str(&format!(", member of peer group {}", expected.peer));
    }
    object
}

/// `router bgp 65000` or `router bgp 65000 vrf vrf_tdemo`.
fn router_bgp(vrf_name: &str, vrf: &BgpVrf) -> String {
    let asn = vrf
        .base_as
        .map_or_else(|| "<AS>".to_string(), |asn| asn.to_string());
    if vrf_name == DEFAULT_VRF {
        format!("router bgp {asn}")
    } else {
        format!("router bgp {asn} vrf {vrf_name}")
    }
}

fn check_peer(
    request: &Request,
    expected: &PeerExpectation,
    vrf: &BgpVrf,
    neighbor: &Neighbor,
    observation: &Observation,
) -> (PeerReport, Vec<Finding>) {
    let object = object(expected, neighbor);
    let mut findings = Vec::new();
    let received = |family: DefaultFamily| {
        observation.received.get(&(
            expected.vrf.clone(),
            neighbor.name.clone(),
            family.unicast().as_str(),
        ))
    };
    let advertised: Vec<&IpNet> = DefaultFamily::BOTH
        .into_iter()
        .filter_map(|family| {
            observation.advertised.get(&(
                expected.vrf.clone(),
                neighbor.name.clone(),
                family.unicast().as_str(),
            ))
        })
        .flatten()
        .collect();
    let mut default_received = DefaultReceived::default();
    for family in &expected.receives_default {
        let got = received(*family).is_some_and(|routes| routes.iter().any(|p| is_default(&p)));
        match family {
            DefaultFamily::Ipv4 => default_received.ipv4 = Some(got),
            DefaultFamily::Ipv6 => default_received.ipv6 = Some(got),
        }
    }
    let aggregates_only = expected.advertises == Advertises::AggregatesOnly;
    let host_routes: Vec<String> = advertised
        .iter()
        .filter(|p| is_host_route(p))
        .map(|p| p.to_string())
        .collect();
    let defaults_advertised: Vec<String> = advertised
        .iter()
        .filter(|p| is_default(p))
        .map(|p| p.to_string())
        .collect();
    let report = PeerReport {
        peer: neighbor.name.clone(),
        vrf: expected.vrf.clone(),
        peer_group: neighbor.peer_group.clone(),
        state: neighbor.state.clone(),
        remote_as: neighbor.remote_as,
        local_as: neighbor.local_as,
        address_families: neighbor
            .negotiated
            .iter()
            .map(|af| af.as_str().to_string())
            .collect(),
        last_reset: neighbor.last_reset.clone(),
        last_notification: neighbor.last_notification.clone(),
        prefixes_received: neighbor
            .prefixes_received
            .iter()
            .map(|(af, n)| (af.to_string(), *n))
            .collect(),
        default_received,
        advertised_host_routes: aggregates_only.then(|| host_routes.clone()),
        advertised_default: aggregates_only.then_some(!defaults_advertised.is_empty()),
    };

    if !neighbor.established() {
        findings.push(Finding {
            object,
            expected: "the session Established".into(),
            found: down_found(neighbor),
            fix: down_fix(expected, vrf, neighbor),
        });
        // Families, routes and AS are the session's: with it down they would only repeat it.
        return (report, findings);
    }
    findings.extend(remote_as_finding(expected, vrf, neighbor, &object));
    for af in &expected.address_families {
        if !neighbor.negotiated.contains(af) {
            findings.push(family_finding(
                request, expected, vrf, neighbor, &object, *af,
            ));
        }
    }
    for family in &expected.receives_default {
        if received(*family).is_some_and(|routes| routes.iter().any(|p| is_default(&p))) {
            continue;
        }
        findings.push(default_finding(expected, neighbor, &object, *family));
    }
    if aggregates_only && !(host_routes.is_empty() && defaults_advertised.is_empty()) {
        let mut leaked = host_routes;
        leaked.extend(defaults_advertised);
        findings.push(leak_finding(expected, vrf, object, &leaked));
    }
    (report, findings)
}

/// With `remote_as` expected: a peer that announces another AS.
fn remote_as_finding(
    expected: &PeerExpectation,
    vrf: &BgpVrf,
    neighbor: &Neighbor,
    object: &str,
) -> Option<Finding> {
    let want = expected.remote_as?;
    if neighbor.remote_as == Some(want) {
        return None;
    }
    Some(Finding {
        object: object.to_string(),
        expected: format!("remote AS {want}"),
        found: format!(
            "remote AS {}",
            neighbor
                .remote_as
                .map_or_else(|| "unknown".to_string(), |a| a.to_string())
        ),
        fix: format!(
            "the peer announces another AS than the plan's: set the plan's remote_as to the peer's AS, or give the peer AS {want} (and `neighbor {} remote-as {want}` under `{}`)",
            expected.peer,
            router_bgp(&expected.vrf, vrf)
        ),
    })
}

/// With `advertises: aggregates_only`: the host routes and defaults advertised to the peer.
fn leak_finding(
    expected: &PeerExpectation,
    vrf: &BgpVrf,
    object: String,
    leaked: &[String],
) -> Finding {
    Finding {
        object,
        expected: "only aggregates advertised (no /32, no /128, no default)".into(),
        found: format!("advertised: {}", leaked.join(", ")),
        fix: format!(
            "filter what goes to it: an outbound prefix-list and route-map that permit only the tenant subnets' aggregates, applied with `neighbor {} route-map <NAME> out` under both `address-family ipv4 unicast` and `address-family ipv6 unicast` of `{}`",
            expected.peer,
            router_bgp(&expected.vrf, vrf)
        ),
    }
}

/// What FRR reports about a session that is not up: its state and its last reason.
fn down_found(neighbor: &Neighbor) -> String {
    let mut found = format!("state {}", neighbor.state);
    if let Some(notification) = &neighbor.last_notification {
        found.push_str(&format!("; last notification: {notification}"));
    }
    if let Some(code) = &neighbor.last_error_code {
        found.push_str(&format!(" (code/subcode {code})"));
    }
    if let Some(reset) = &neighbor.last_reset {
        found.push_str(&format!("; last reset: {reset}"));
    }
    found
}

fn is_bad_peer_as(neighbor: &Neighbor) -> bool {
    neighbor.last_error_code.as_deref() == Some(BAD_PEER_AS)
        || neighbor
            .last_notification
            .as_deref()
            .is_some_and(|n| n.contains("Bad Peer AS"))
}

/// FRR's reason for a session down, in words, and what to do.
fn down_fix(expected: &PeerExpectation, vrf: &BgpVrf, neighbor: &Neighbor) -> String {
    let peer = &expected.peer;
    let notification = neighbor.last_notification.as_deref().unwrap_or_default();
    let reset = neighbor.last_reset.as_deref().unwrap_or_default();
    if is_bad_peer_as(neighbor) {
        return bad_peer_as(expected, vrf, neighbor);
    }
    if reset.contains("Waiting for peer OPEN")
        && neighbor.opens_received.unwrap_or(0) > 0
        && neighbor.notifications_sent.unwrap_or(0) > 0
    {
        // FRR overwrote the notification it sent with this reset: what it refused is gone.
        let refused = format!(
            "FRR: Waiting for peer OPEN after {} OPENs received and {} notifications sent; the peer's `show bgp neighbors` names the notification, bad peer AS when it is its AS",
            neighbor.opens_received.unwrap_or(0),
            neighbor.notifications_sent.unwrap_or(0)
        );
        return refused_peer_as(expected, vrf, neighbor, &refused);
    }
    if notification.contains("Hold Timer Expired") {
        return format!("the session timed out (hold timer expired): {peer} stopped answering; check the link to it and that its BGP runs");
    }
    if notification.contains("Administrative Shutdown") || reset.contains("Admin. shutdown") {
        return format!("the session was shut down by an operator (`neighbor ... shutdown`) on one side; remove the shutdown where it was set, here under `{}`, or on {peer}", router_bgp(&expected.vrf, vrf));
    }
    if notification.contains("Unsupported Capability") {
        return format!("{peer} refused a capability this node requires (FRR: {notification}); make both sides agree on the capabilities (e.g. extended next hop for BGP unnumbered)");
    }
    if notification.contains("Role Mismatch") {
        return format!("the BGP roles do not fit (FRR: {notification}); set `neighbor {peer} local-role` to match the peer's role");
    }
    if !notification.is_empty() {
        return format!("FRR's last notification says why: {notification}; fix that on the side that sent it, then the session comes back by itself");
    }
    match neighbor.state.as_str() {
        "Idle" => format!("FRR does not try to connect (Idle): the neighbor is shut down, its interface is down or it has no address to reach {peer}; check `neighbor {peer}` under `{}` and the link", router_bgp(&expected.vrf, vrf)),
        "Active" | "Connect" => format!("no BGP connection: {peer} does not answer on TCP port 179 ({}); check the link and addresses, and that {peer} has this node configured as its neighbor", neighbor.state),
        "OpenSent" | "OpenConfirm" => format!("the OPEN exchange did not finish ({}): {peer} connects but does not agree; look at its log for the notification it sends", neighbor.state),
        _ => format!("FRR reports the session {}; check `show bgp vrf {} neighbors {peer}` on this node and the peer's log", neighbor.state, expected.vrf),
    }
}

/// The "bad peer AS" notification. Sent by this node: it refused the AS the peer announced
/// (FRR keeps no record of which; with `remote-as external` it is an AS of this node's own).
/// Received: the peer refused the AS this node announced to it.
fn bad_peer_as(expected: &PeerExpectation, vrf: &BgpVrf, neighbor: &Neighbor) -> String {
    let peer = &expected.peer;
    let received = neighbor
        .last_reset
        .as_deref()
        .is_some_and(|r| r.contains("received"));
    if received {
        let local = neighbor
            .local_as
            .or(vrf.base_as)
            .map_or_else(|| "<AS>".to_string(), |a| a.to_string());
        return format!(
            "{peer} refuses AS {local}, the AS this node announces to it (bad peer AS, notification received): {peer} expects another AS for this node, or AS {local} is {peer}'s own: give this node an AS of its own toward {peer} (`neighbor {peer} local-as`), or fix `remote-as` for this node on {peer}"
        );
    }
    refused_peer_as(expected, vrf, neighbor, "bad peer AS")
}

/// This node refused the peer's OPEN for its AS (or most likely did): the words for it.
fn refused_peer_as(
    expected: &PeerExpectation,
    vrf: &BgpVrf,
    neighbor: &Neighbor,
    what: &str,
) -> String {
    let peer = &expected.peer;
    let Some(base) = vrf.base_as else {
        return format!(
            "{peer} announces an AS this node refuses ({what}): give {peer} an AS of its own, other than this node's, and match `neighbor {peer} remote-as`"
        );
    };
    if expected.remote_as == Some(base) {
        return format!(
            "{peer} announces AS {base}, this node's base AS: give {peer} an AS of its own"
        );
    }
    let local = neighbor
        .local_as
        .filter(|&local| local != base)
        .map_or_else(String::new, |local| format!(" (or {local}, its local-as)"));
    let plan = expected
        .remote_as
        .map_or_else(String::new, |asn| format!(" (the plan expects AS {asn})"));
    format!(
        "{peer} announces an AS this node refuses ({what}), most likely AS {base}, this node's base AS{local}, which `remote-as external` refuses: give {peer} an AS of its own; or an AS other than `neighbor {peer} remote-as` under `{}` names{plan}: make the two agree",
        router_bgp(&expected.vrf, vrf)
    )
}

fn family_finding(
    request: &Request,
    expected: &PeerExpectation,
    vrf: &BgpVrf,
    neighbor: &Neighbor,
    object: &str,
    af: AddressFamily,
) -> Finding {
    let stanza = format!(
        "add `neighbor {} activate` under `address-family {}` of `{}`",
        expected.peer,
        af.frr_config(),
        router_bgp(&expected.vrf, vrf)
    );
    let activated_here = neighbor.activated.contains(&af);
    let (found, fix) = if activated_here {
        (
            format!(
                "{} activated on this node but not negotiated: the peer does not activate it",
                af.as_str()
            ),
            format!(
                "activate {} for this node on the peer's side (`neighbor <this node> activate` under its `address-family {}`)",
                af.frr_config(),
                af.frr_config()
            ),
        )
    } else if af == AddressFamily::Ipv4Unicast && request.fabric_ipv6_only {
        (
            format!(
                "IPv4 unicast not activated{}: the activation fault of an IPv6-only fabric (IPv6 defaults arrive, IPv4 ones do not: FRR activates IPv4 only by default on IPv4 sessions)",
                offered(neighbor, af)
            ),
            stanza,
        )
    } else {
        (
            format!(
                "{} not activated on this node{}",
                af.as_str(),
                offered(neighbor, af)
            ),
            stanza,
        )
    };
    Finding {
        object: object.to_string(),
        expected: format!("address family {} negotiated", af.as_str()),
        found,
        fix,
    }
}

/// `(the peer offers it)` when the peer sent the family in its OPEN and this node did not.
fn offered(neighbor: &Neighbor, af: AddressFamily) -> &'static str {
    if neighbor.received_only.contains(&af) {
        " (the peer offers it)"
    } else {
        ""
    }
}

fn default_finding(
    expected: &PeerExpectation,
    neighbor: &Neighbor,
    object: &str,
    family: DefaultFamily,
) -> Finding {
    let af = family.unicast();
    let (found, fix) = if !neighbor.negotiated.contains(&af) {
        (
            format!(
                "no {} route at all: {} is not negotiated",
                family.as_str(),
                af.as_str()
            ),
            format!(
                "negotiate {} with {} first (see its finding)",
                af.as_str(),
                expected.peer
            ),
        )
    } else {
        let count = neighbor
            .prefixes_received
            .get(af.as_str())
            .copied()
            .unwrap_or(0);
        (
            format!(
                "no {} among the {count} {} prefixes accepted from it",
                family.default_prefix(),
                family.as_str()
            ),
            format!(
                "have {} send a default (`default-originate` toward this node), and check this node's inbound route-map or prefix-list for {} under `address-family {}`",
                expected.peer,
                expected.peer,
                af.frr_config()
            ),
        )
    };
    Finding {
        object: object.to_string(),
        expected: format!("the default {} received", family.default_prefix()),
        found,
        fix,
    }
}

fn is_default(prefix: &&IpNet) -> bool {
    prefix.prefix_len() == 0
}

fn is_host_route(prefix: &&IpNet) -> bool {
    prefix.prefix_len() == prefix.max_prefix_len()
}

fn check_vni(expected: &VniExpectation, observation: &Observation) -> (VniReport, Vec<Finding>) {
    let object = format!("VNI {}", expected.vni);
    let Some(vni) = observation.vnis.iter().find(|v| v.vni == expected.vni) else {
        let known: Vec<String> = observation.vnis.iter().map(|v| v.vni.to_string()).collect();
        let report = VniReport {
            vni: expected.vni,
            kind: None,
            vrf: None,
            remote_vteps: Vec::new(),
        };
        let finding = Finding {
            object,
            expected: "present in FRR's EVPN".into(),
            found: format!(
                "absent (FRR's VNIs: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ),
            fix: format!(
                "the node lacks the VXLAN device of VNI {}, or it is down or not in its bridge, or `advertise-all-vni` is missing under `address-family l2vpn evpn`: check `ip -d link show type vxlan`, then reload the node's network: {}",
                expected.vni,
                advice::reload_interfaces(advice::THIS_NODE)
            ),
        };
        return (report, vec![finding]);
    };
    let found: Vec<IpAddr> = if vni.kind == "L3" {
        observation
            .next_hops
            .get(&vni.vni)
            .cloned()
            .unwrap_or_default()
    } else {
        vni.remote_vteps.clone()
    };
    let report = VniReport {
        vni: vni.vni,
        kind: Some(vni.kind.clone()),
        vrf: vni.vrf.clone(),
        remote_vteps: found.iter().map(IpAddr::to_string).collect(),
    };
    let mut findings = Vec::new();
    if let Some(want) = &expected.remote_vteps {
        if &found != want {
            let missing: Vec<String> = want
                .iter()
                .filter(|a| !found.contains(a))
                .map(IpAddr::to_string)
                .collect();
            let extra: Vec<String> = found
                .iter()
                .filter(|a| !want.contains(a))
                .map(IpAddr::to_string)
                .collect();
            let mut fix = Vec::new();
            if !missing.is_empty() {
                fix.push(format!("{} missing: check that those nodes have VNI {} and their EVPN session with this node", missing.join(", "), vni.vni));
            }
            if !extra.is_empty() {
                fix.push(format!("{} not expected: a node that should not have VNI {}, or a VTEP whose VXLAN device still has an old source address (compare `ip -d link show` on it)", extra.join(", "), vni.vni));
            }
            findings.push(Finding {
                object,
                expected: format!("remote VTEPs {}", list(want)),
                found: format!("remote VTEPs {}", list(&found)),
                fix: fix.join("; "),
            });
        }
    }
    (report, findings)
}

fn list(addresses: &[IpAddr]) -> String {
    if addresses.is_empty() {
        "none".into()
    } else {
        addresses
            .iter()
            .map(IpAddr::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}
