//! The result: per target what the workload saw, per captured interface the probe packets that
//! crossed it, and the verdict in the incident's words. Pure: built from the probes' outcomes
//! and the captured frames.

use crate::frame::{classify, Direction, Frame, Markers, Packet};
use crate::params::{Expect, Proto, Size, Target};
use deevnet_runtime::advice;
use serde::Serialize;
use std::net::IpAddr;

/// Probe frames kept per interface: the probes send at most a few hundred, so reaching it means
/// someone else sent frames that look like the probe's, and the capture is marked overflowed.
pub const MAX_FRAMES: usize = 10_000;

/// What one target's probes saw, inside the workload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeOutcome {
    pub sent: u32,
    pub received: u32,
    /// Round-trip times of the answered probes, in milliseconds.
    pub rtts_ms: Vec<f64>,
    /// The last error seen: `no reply`, `refused`, `unreachable`, …
    pub error: Option<String>,
    /// An ICMP destination-unreachable about an echo: who sent it, and its code.
    pub unreachable: Option<(std::net::IpAddr, u8)>,
    /// A frag-needed about a full-size echo: who sent it, and the MTU it names.
    pub frag_needed: Option<(std::net::IpAddr, u16)>,
    /// The target's host refused (a TCP reset, an ICMP port unreachable): it answered.
    pub refused: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// No probe packet may leave by it.
    Forbidden,
    /// The probe's traffic should leave by it.
    Egress,
    /// Neither: another interface a packet could leave the node by (listed only when the
    /// probe's packets crossed it). Without `expect_egress_interface`, egress is proven only by
    /// probe packets seen leaving by an `egress` or `other` interface.
    Other,
}

/// The probe's frames captured on one interface.
#[derive(Debug, Clone)]
pub struct Capture {
    pub interface: String,
    pub role: Role,
    pub frames: Vec<Frame>,
    /// More probe frames crossed it than the capture keeps: some were not counted.
    pub overflowed: bool,
}

/// The verdict, as the result shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every target as expected, observed, and the capture complete.
    Passed,
    /// Something observed contradicts the expectation.
    Failed,
    /// Nothing contradicts it, but the capture lost frames: a leak cannot be ruled out.
    Inconclusive,
}

/// Whether the capture saw everything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaptureHealth {
    /// Frames the kernel dropped before the module read them (its queue was full).
    pub dropped: u64,
    /// Interfaces where more probe frames crossed than the capture keeps.
    pub overflowed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rtt {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetReport {
    pub address: String,
    pub proto: Proto,
    pub port: Option<u16>,
    pub expect: Expect,
    pub sent: u32,
    pub received: u32,
    pub rtt_ms: Option<Rtt>,
    pub error: Option<String>,
    /// The captured interfaces its packets left by.
    pub left_by: Vec<String>,
    pub passed: bool,
    /// A full-size probe's IP packet size: bytes, or `mtu`.
    pub size: Option<serde_json::Value>,
    /// How a target with `expect: blocked` was blocked: `icmp admin-prohibited`, `icmp
    /// host-unreachable`, ..., `no answer` (silent, and not seen leaving the node).
    pub blocked_by: Option<String>,
    /// The MTU a frag-needed about a full-size probe named.
    pub frag_needed_mtu: Option<u16>,
    /// Who answered a target that must be blocked.
    pub answered_by: Option<String>,
    /// Another node's workload of the same proof (`targets[].peer`).
    pub peer: bool,
    /// The interface its requests had to leave by (`targets[].via`).
    pub via: Option<String>,
}

/// One probe packet, shortly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sample {
    pub source: String,
    pub destination: String,
    pub protocol: Proto,
    pub direction: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterfaceReport {
    pub name: String,
    pub role: Role,
    /// Probe packets that left by it.
    pub packets: u32,
    /// Of those, the ones still carrying the workload's address.
    pub untranslated: u32,
    /// Every packet that left had its source translated (`None` when none left).
    pub translated: Option<bool>,
    /// Replies to the probe that arrived on it.
    pub replies: u32,
    /// The first few probe packets seen, either direction.
    pub sample: Vec<Sample>,
}

/// The module's result keys, declared once: the same keys on success and on failure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub verdict: Verdict,
    pub targets: Vec<TargetReport>,
    pub interfaces: Vec<InterfaceReport>,
    pub capture: CaptureHealth,
    /// What failed, one line each, in the incident's words.
    pub problems: Vec<String>,
}

const SAMPLE_SIZE: usize = 3;

/// Builds the report; `outcomes` is in the order of `targets`, `dropped` the frames the
/// kernel dropped from the capture.
pub fn build(
    targets: &[Target],
    outcomes: &[ProbeOutcome],
    captures: &[Capture],
    dropped: u64,
    markers: &Markers,
) -> Report {
    build_on_node(targets, outcomes, captures, dropped, markers, &[])
}

/// [`build`], knowing the node's own addresses: a target among them that answers was answered
/// by the node itself, never a reject on the node's way out.
pub fn build_on_node(
    targets: &[Target],
    outcomes: &[ProbeOutcome],
    captures: &[Capture],
    dropped: u64,
    markers: &Markers,
    node_addresses: &[IpAddr],
) -> Report {
    let mut interfaces = Vec::with_capacity(captures.len());
    // Per target: the interfaces its requests left by, and replies seen arriving there.
    let mut left_by: Vec<Vec<(String, u32, u32)>> = vec![Vec::new(); targets.len()];
    for capture in captures {
        let (report, per_target) = interface_report(capture, targets, markers);
        for (target, (requests, replies)) in per_target.into_iter().enumerate() {
            if requests > 0 || replies > 0 {
                left_by[target].push((capture.interface.clone(), requests, replies));
            }
        }
        // Every other interface of the node is watched: listed only where the probe was seen.
        if capture.role != Role::Other || report.packets > 0 || report.replies > 0 {
            interfaces.push(report);
        }
    }

    let mut problems = Vec::new();
    let expected_egress = captures
        .iter()
        .find(|c| c.role == Role::Egress)
        .map(|c| c.interface.as_str());
    let target_reports = targets
        .iter()
        .zip(outcomes)
        .zip(&left_by)
        .map(|((target, outcome), seen)| {
            let judged = Judged {
                captures,
                expected_egress,
                node_addresses,
            };
            judged.target_report(target, outcome, seen, &mut problems)
        })
        .collect();
    for interface in interfaces
        .iter()
        .filter(|i| i.role == Role::Forbidden && i.packets > 0)
    {
        problems.push(leak(interface));
    }
    let capture = CaptureHealth {
        dropped,
        overflowed: captures
            .iter()
            .filter(|c| c.overflowed)
            .map(|c| c.interface.clone())
            .collect(),
    };
    let verdict = if !problems.is_empty() {
        Verdict::Failed
    } else if capture.dropped > 0 || !capture.overflowed.is_empty() {
        Verdict::Inconclusive
    } else {
        Verdict::Passed
    };
    if let Some(loss) = capture_loss(&capture) {
        problems.push(loss);
    }
    Report {
        verdict,
        targets: target_reports,
        interfaces,
        capture,
        problems,
    }
}

/// What one capture saw of the probe: its interface's report, and per target (in the order
/// of `targets`) the requests that left by it and the replies that arrived on it.
fn interface_report(
    capture: &Capture,
    targets: &[Target],
    markers: &Markers,
) -> (InterfaceReport, Vec<(u32, u32)>) {
    let mut report = InterfaceReport {
        name: capture.interface.clone(),
        role: capture.role,
        packets: 0,
        untranslated: 0,
        translated: None,
        replies: 0,
        sample: Vec::new(),
    };
    let mut per_target = vec![(0u32, 0u32); targets.len()];
    for frame in capture.frames.iter().filter(|frame| !frame.is_tagged()) {
        let Some(probe) =
            Packet::parse(&frame.bytes).and_then(|packet| classify(&packet, targets, markers))
        else {
            continue;
        };
        let outgoing = frame.is_outgoing();
        match (probe.direction, outgoing) {
            (Direction::Request, true) => {
                report.packets += 1;
                per_target[probe.target].0 += 1;
                if !probe.translated {
                    report.untranslated += 1;
                }
            }
            (Direction::Reply, false) => {
                report.replies += 1;
                per_target[probe.target].1 += 1;
            }
            // A request arriving (the workload's side of a bridge) or a reply leaving
            // toward the workload: the probe's path, not its egress.
            _ => {}
        }
        if report.sample.len() < SAMPLE_SIZE {
            report.sample.push(Sample {
                source: probe.packet.source.to_string(),
                destination: probe.packet.destination.to_string(),
                protocol: probe.packet.proto,
                direction: if outgoing { "out" } else { "in" },
            });
        }
    }
    if report.packets > 0 {
        report.translated = Some(report.untranslated == 0);
    }
    (report, per_target)
}

/// What every target is judged against: the captures, the interface replies must leave by
/// when a target names no `via`, and the node's own addresses.
struct Judged<'a> {
    captures: &'a [Capture],
    expected_egress: Option<&'a str>,
    node_addresses: &'a [IpAddr],
}

impl Judged<'_> {
    /// One target's report, judged by what it expects; each problem found goes to `problems`.
    /// `seen`: the interfaces its packets were seen on, with requests and replies.
    fn target_report(
        &self,
        target: &Target,
        outcome: &ProbeOutcome,
        seen: &[(String, u32, u32)],
        problems: &mut Vec<String>,
    ) -> TargetReport {
        let mut passed = true;
        if target.expect == Expect::Reply {
            if let Some(problem) =
                judge_reply(target, outcome, seen, self.captures, self.expected_egress)
            {
                passed = false;
                problems.push(problem);
            }
        }
        let mut blocked_by = None;
        let mut answered_by = None;
        if target.expect == Expect::Blocked && outcome.sent > 0 {
            let judged = judge_blocked(target, outcome, seen, self.captures, self.node_addresses);
            if let Some(problem) = judged.problem {
                passed = false;
                problems.push(problem);
            }
            (blocked_by, answered_by) = (judged.blocked_by, judged.answered_by);
        }
        // A leak probe that sent nothing (its workload's veth gone, say) proves nothing.
        if target.expect != Expect::Reply && outcome.sent == 0 {
            passed = false;
            problems.push(nothing_sent(target, outcome));
        }
        let forbidden_hits = self
            .captures
            .iter()
            .filter(|c| c.role == Role::Forbidden)
            .any(|c| {
                seen.iter()
                    .any(|(name, requests, _)| *name == c.interface && *requests > 0)
            });
        if forbidden_hits {
            passed = false;
        }
        TargetReport {
            address: target.address.to_string(),
            proto: target.proto,
            port: target.port,
            expect: target.expect,
            sent: outcome.sent,
            received: outcome.received,
            rtt_ms: rtt(&outcome.rtts_ms),
            error: outcome.error.clone(),
            left_by: seen
                .iter()
                .filter(|(_, requests, _)| *requests > 0)
                .map(|(name, _, _)| name.clone())
                .collect(),
            passed,
            size: target.size.map(|size| match size {
                Size::Bytes(bytes) => serde_json::json!(bytes),
                Size::Mtu => serde_json::json!("mtu"),
            }),
            blocked_by,
            frag_needed_mtu: outcome.frag_needed.map(|(_, mtu)| mtu),
            answered_by,
            peer: target.peer,
            via: target.via.clone(),
        }
    }
}

/// The problem of a leak or block probe that sent nothing.
fn nothing_sent(target: &Target, outcome: &ProbeOutcome) -> String {
    format!(
        "{}: no probe was sent{}, so {}: a probe that sent nothing proves nothing",
        target.label(),
        outcome
            .error
            .as_deref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default(),
        if target.expect == Expect::None {
            "no leak could be seen"
        } else {
            "blocking was not observed"
        }
    )
}

/// A target that must reply: its problem, or `None` when it passed. Answered every time, it
/// must also have been seen leaving by its `via`, else by `expected_egress`, else by some
/// interface that is not forbidden: replies alone prove nothing.
fn judge_reply(
    target: &Target,
    outcome: &ProbeOutcome,
    seen: &[(String, u32, u32)],
    captures: &[Capture],
    expected_egress: Option<&str>,
) -> Option<String> {
    let left_by = |interface: &str| {
        seen.iter()
            .any(|(name, requests, _)| name == interface && *requests > 0)
    };
    let replies = replies_head(target, outcome);
    let via_missing = target
        .via
        .as_deref()
        .filter(|via| !captures.iter().any(|c| c.interface == *via));
    if let Some(via) = via_missing {
        // Every interface of the node is captured: one that is not, the node does not have.
        Some(format!(
            "{}: via {via} does not exist on this node, so nothing of it can cross there: \
             re-create the VNet's port toward the other nodes: {}",
            target.label(),
            advice::reload_interfaces(advice::THIS_NODE)
        ))
    } else if target.size.is_some() && outcome.frag_needed.is_some() {
        // The path's MTU is smaller and says so: what a full-size probe asks of it.
        None
    } else if target.size.is_some() && outcome.sent > 0 && outcome.received == 0 {
        Some(format!(
            "{}: a DF probe of {} bytes got 0/{} replies and no fragmentation-needed came \
             back: silently dropped (a hop's MTU is smaller and its ICMP is lost or filtered)",
            target.label(),
            size_text(target.size),
            outcome.sent
        ))
    } else if outcome.received < outcome.sent || outcome.sent == 0 {
        Some(missing_replies(target, outcome, seen, captures))
    } else if let Some(via) = &target.via {
        // A neighbour on the node's side of `via` answering in the target's name: its replies
        // never crossed it, even when the request (flooded) did.
        let came_by = seen
            .iter()
            .any(|(name, _, replies)| name == via && *replies > 0);
        (!left_by(via) || !came_by).then(|| {
            format!(
                "{replies}, but no probe packet left by {via} (via): the replies did not come \
                 across {via}, they were answered on the node's side of it"
            )
        })
    } else if let Some(egress) = expected_egress {
        (!left_by(egress)).then(|| {
            format!(
                "{replies}, but no probe packet left by {egress} (expect_egress_interface): \
                 the traffic took another way"
            )
        })
    } else if !seen.iter().any(|(name, requests, _)| {
        *requests > 0
            && captures
                .iter()
                .any(|c| c.interface == *name && c.role != Role::Forbidden)
    }) {
        // Replies alone prove nothing: something on the VNet can answer in the target's name
        // while nothing leaves the node.
        Some(format!(
            "{replies}, but no probe packet left the node by an interface that is not \
             forbidden: the replies did not come from beyond the node"
        ))
    } else {
        None
    }
}

/// Why a capture that lost frames proves nothing, or `None` when it lost none.
fn capture_loss(capture: &CaptureHealth) -> Option<String> {
    let mut losses = Vec::new();
    if capture.dropped > 0 {
        losses.push(format!(
            "the kernel dropped {} captured frame{}",
            capture.dropped,
            if capture.dropped == 1 { "" } else { "s" }
        ));
    }
    if !capture.overflowed.is_empty() {
        losses.push(format!(
            "more than {} probe frames crossed {}",
            MAX_FRAMES,
            capture.overflowed.join(", ")
        ));
    }
    (!losses.is_empty()).then(|| {
        format!(
            "the capture is incomplete ({}): a probe packet may have left uncounted, so no \
             leak is ruled out; run again when the node is quieter",
            losses.join("; ")
        )
    })
}

/// `10.20.129.251 icmp: 2/3 replies`: how a target's message starts.
fn replies_head(target: &Target, outcome: &ProbeOutcome) -> String {
    format!(
        "{}: {}/{} replies",
        target.label(),
        outcome.received,
        outcome.sent
    )
}

fn missing_replies(
    target: &Target,
    outcome: &ProbeOutcome,
    seen: &[(String, u32, u32)],
    captures: &[Capture],
) -> String {
    let head = replies_head(target, outcome);
    let error = outcome
        .error
        .as_deref()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    let left: Vec<&(String, u32, u32)> = seen
        .iter()
        .filter(|(_, requests, _)| *requests > 0)
        .collect();
    if left.is_empty() {
        let mut names: Vec<&str> = captures
            .iter()
            .filter(|c| c.role != Role::Other)
            .map(|c| c.interface.as_str())
            .collect();
        if captures.iter().any(|c| c.role == Role::Other) {
            names.push("nor any other");
        }
        return format!(
            "{head}{error}, and no probe packet left by a captured interface ({}): the traffic \
             never left the node that way",
            if names.is_empty() {
                "none captured".to_string()
            } else {
                names.join(", ")
            }
        );
    }
    let names: Vec<&str> = left.iter().map(|(name, _, _)| name.as_str()).collect();
    let replies: u32 = left.iter().map(|(_, _, replies)| replies).sum();
    if replies > outcome.received {
        format!(
            "{head}{error} while traffic left by {} and {replies} repl{} came back to it: \
             replies are not forwarded back",
            names.join(", "),
            if replies == 1 { "y" } else { "ies" }
        )
    } else {
        format!(
            "{head}{error} while traffic left by {}: no reply came back",
            names.join(", ")
        )
    }
}

fn leak(interface: &InterfaceReport) -> String {
    let how = match interface.untranslated {
        0 => "translated".to_string(),
        n if n == interface.packets => "untranslated".to_string(),
        n => format!("({n} untranslated)"),
    };
    format!(
        "{} tenant packet{} left by {} {how}",
        interface.packets,
        if interface.packets == 1 { "" } else { "s" },
        interface.name
    )
}

fn size_text(size: Option<Size>) -> String {
    match size {
        Some(Size::Bytes(bytes)) => bytes.to_string(),
        Some(Size::Mtu) => "the VNet's MTU".to_string(),
        None => "small".to_string(),
    }
}

/// How a blocked target's probes ended: its problem, if any, and who blocked or answered it.
struct BlockedJudgement {
    problem: Option<String>,
    blocked_by: Option<String>,
    answered_by: Option<String>,
}

/// A blocked target's verdict from what came back inside the workload and what the capture
/// saw of it on the node (`seen`: per interface, its requests leaving and its replies arriving).
/// Toward the expected egress (the perimeter) a blocked probe may go: it is dropped or refused
/// beyond the node. Anywhere else it was not blocked; and answers seen arriving at the node
/// are reachability, even when the node drops them before the workload.
fn judge_blocked(
    target: &Target,
    outcome: &ProbeOutcome,
    seen: &[(String, u32, u32)],
    captures: &[Capture],
    node_addresses: &[IpAddr],
) -> BlockedJudgement {
    let role_of = |name: &str| {
        captures
            .iter()
            .find(|c| c.interface == name)
            .map(|c| c.role)
    };
    let (to_egress, requests_left): (Vec<&str>, Vec<&str>) = seen
        .iter()
        .filter(|(_, requests, _)| *requests > 0)
        .map(|(name, _, _)| name.as_str())
        .partition(|name| role_of(name) == Some(Role::Egress));
    let replies_arrived: Vec<String> = seen
        .iter()
        .filter(|(_, _, replies)| *replies > 0)
        .map(|(name, _, replies)| format!("{name} ({replies})"))
        .collect();
    let host_answered = outcome.refused
        || outcome
            .unreachable
            .is_some_and(|(from, code)| from == target.address && (code == 2 || code == 3));
    let answered = |how: String| BlockedJudgement {
        problem: Some(format!(
            "{}: {how} though it must be blocked: the isolation is missing",
            target.label()
        )),
        blocked_by: None,
        answered_by: Some(target.address.to_string()),
    };
    let blocked = |by: String| BlockedJudgement {
        problem: None,
        blocked_by: Some(by),
        answered_by: None,
    };
    let answered_in_words = || {
        format!(
            "answered by {} ({}/{} probes{})",
            target.address,
            outcome.received,
            outcome.sent,
            if outcome.refused {
                ", refused by the host"
            } else {
                ""
            }
        )
    };
    if outcome.received > 0 || host_answered {
        // A refusal in the target's name (a firewall's REJECT: a TCP reset, a port
        // unreachable) with nothing of the probe seen leaving the node, nor anything coming
        // back to it, was made by the node on the way out: blocked there. The node's own
        // addresses answer from inside the node: that is an answer.
        let made_by_the_node = outcome.received == 0
            && !captures.is_empty()
            && seen.is_empty()
            && !node_addresses.contains(&target.address);
        return if made_by_the_node {
            blocked("rejected by the node".to_string())
        } else {
            answered(answered_in_words())
        };
    }
    if !replies_arrived.is_empty() {
        return answered(format!(
            "answers arrived at the node by {} and were dropped there, before the workload",
            replies_arrived.join(", ")
        ));
    }
    if !requests_left.is_empty() {
        return BlockedJudgement {
            problem: Some(format!(
                "{}: no answer, but its probes left the node by {}: not blocked at the node",
                target.label(),
                requests_left.join(", ")
            )),
            blocked_by: None,
            answered_by: None,
        };
    }
    blocked(match outcome.unreachable {
        Some((_, code)) => unreachable_name(code),
        None if outcome.error.as_deref() == Some("unreachable") => "icmp unreachable".to_string(),
        None if !to_egress.is_empty() => "dropped beyond the node".to_string(),
        None => "no answer".to_string(),
    })
}

/// An ICMP destination-unreachable code in words, as `blocked_by` says it.
pub fn unreachable_name(code: u8) -> String {
    match code {
        0 => "icmp net-unreachable".into(),
        1 => "icmp host-unreachable".into(),
        2 => "icmp protocol-unreachable".into(),
        3 => "icmp port-unreachable".into(),
        9 => "icmp net-prohibited".into(),
        10 => "icmp host-prohibited".into(),
        13 => "icmp admin-prohibited".into(),
        code => format!("icmp unreachable code {code}"),
    }
}

fn rtt(samples: &[f64]) -> Option<Rtt> {
    if samples.is_empty() {
        return None;
    }
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let avg = samples.iter().sum::<f64>() / samples.len() as f64;
    Some(Rtt {
        min: round(min),
        avg: round(avg),
        max: round(max),
    })
}

/// When the run's probing started: `start_at` as given, and by how much the workloads, once
/// ready, were late for it (0 when they waited for it); both `None` without `start_at`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Start {
    pub start_at: Option<f64>,
    pub start_late_secs: Option<f64>,
}

/// One probe's result in the run's `probes` list: the tenant, its workload, its targets'
/// verdicts and how blocked ones were blocked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeResult {
    #[serde(flatten)]
    pub placement: Placement,
    /// The probe's own: its targets and its captures.
    pub verdict: Verdict,
    /// The probe's findings in words, the tenant named first.
    pub msg: String,
    pub targets: Vec<ProbeTarget>,
    /// The captured interfaces, as the single form's `interfaces`.
    pub interfaces: Vec<InterfaceReport>,
}

/// One target of a probe, as `probes[].targets` shows it: the single form's keys, its
/// verdict, and its answers counted as `replies` (the same number as `received`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeTarget {
    #[serde(flatten)]
    pub report: TargetReport,
    pub verdict: Verdict,
    pub replies: u32,
}

/// Where a probe's workload sat: the tenant's name, its VRF (or, later, bridge and VLAN),
/// VNet, address, gateway and the node end of its veth (gone when the task returns).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub name: String,
    pub vrf: Option<String>,
    pub bridge: Option<String>,
    pub vlan: Option<u16>,
    pub vnet: String,
    pub address: String,
    pub gateway: String,
    pub interface: String,
}

/// The probe's entry of `probes` from its report.
pub fn probe_result(placement: Placement, report: &Report) -> ProbeResult {
    let name = &placement.name;
    let msg = match report.verdict {
        Verdict::Passed => format!(
            "{name}: {} target{} as expected from {} on {}",
            report.targets.len(),
            if report.targets.len() == 1 { "" } else { "s" },
            placement.address,
            placement.vnet
        ),
        _ => format!("{name}: {}", report.problems.join("; ")),
    };
    ProbeResult {
        msg,
        verdict: report.verdict,
        targets: report
            .targets
            .iter()
            .map(|t| ProbeTarget {
                verdict: if t.passed {
                    Verdict::Passed
                } else {
                    Verdict::Failed
                },
                replies: t.received,
                report: t.clone(),
            })
            .collect(),
        interfaces: report.interfaces.clone(),
        placement,
    }
}

/// The run's result over its probes: the worst verdict, one message line per probe that did
/// not pass (the tenant first), every problem named by its tenant, the capture's health.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub verdict: Verdict,
    pub probes: Vec<ProbeResult>,
    pub capture: CaptureHealth,
    pub problems: Vec<String>,
}

pub fn run_report(probes: Vec<ProbeResult>, reports: &[Report]) -> RunReport {
    let verdict = probes
        .iter()
        .map(|p| p.verdict)
        .max_by_key(|v| match v {
            Verdict::Passed => 0,
            Verdict::Inconclusive => 1,
            Verdict::Failed => 2,
        })
        .unwrap_or(Verdict::Passed);
    let mut overflowed: Vec<String> = Vec::new();
    for report in reports {
        for name in &report.capture.overflowed {
            if !overflowed.contains(name) {
                overflowed.push(name.clone());
            }
        }
    }
    let capture = CaptureHealth {
        dropped: reports.iter().map(|r| r.capture.dropped).max().unwrap_or(0),
        overflowed,
    };
    let problems = probes
        .iter()
        .zip(reports)
        .flat_map(|(p, report)| {
            report
                .problems
                .iter()
                .map(move |line| format!("{}: {line}", p.placement.name))
        })
        .collect();
    RunReport {
        verdict,
        probes,
        capture,
        problems,
    }
}

impl RunReport {
    /// One line per probe that did not pass, its tenant first.
    pub fn msg(&self) -> String {
        self.probes
            .iter()
            .filter(|p| p.verdict != Verdict::Passed)
            .map(|p| p.msg.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}
