//! The result: per target what the workload saw, per captured interface the probe packets that
//! crossed it, and the verdict in the incident's words. Pure: built from the probes' outcomes
//! and the captured frames.

use crate::frame::{classify, Direction, Frame, Markers, Packet};
use crate::params::{Expect, Proto, Target};
use serde::Serialize;

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
    let mut interfaces = Vec::with_capacity(captures.len());
    // Per target: the interfaces its requests left by, and replies seen arriving there.
    let mut left_by: Vec<Vec<(String, u32, u32)>> = vec![Vec::new(); targets.len()];
    for capture in captures {
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
    let mut target_reports = Vec::with_capacity(targets.len());
    for (index, (target, outcome)) in targets.iter().zip(outcomes).enumerate() {
        let seen = &left_by[index];
        let mut passed = true;
        if target.expect == Expect::Reply {
            if outcome.received < outcome.sent || outcome.sent == 0 {
                passed = false;
                problems.push(missing_replies(target, outcome, seen, captures));
            } else if let Some(egress) = expected_egress {
                if !seen
                    .iter()
                    .any(|(name, requests, _)| name == egress && *requests > 0)
                {
                    passed = false;
                    problems.push(format!(
                        "{}: {}/{} replies, but no probe packet left by {egress} \
                         (expect_egress_interface): the traffic took another way",
                        target.label(),
                        outcome.received,
                        outcome.sent
                    ));
                }
            } else if !seen.iter().any(|(name, requests, _)| {
                *requests > 0
                    && captures
                        .iter()
                        .any(|c| c.interface == *name && c.role != Role::Forbidden)
            }) {
                // Replies alone prove nothing: something on the VNet can answer in the
                // target's name while nothing leaves the node.
                passed = false;
                problems.push(format!(
                    "{}: {}/{} replies, but no probe packet left the node by an interface that \
                     is not forbidden: the replies did not come from beyond the node",
                    target.label(),
                    outcome.received,
                    outcome.sent
                ));
            }
        }
        // A leak probe that sent nothing (its workload's veth gone, say) proves nothing.
        if target.expect == Expect::None && outcome.sent == 0 {
            passed = false;
            problems.push(format!(
                "{}: no probe was sent{}, so no leak could be seen: a probe that sent nothing \
                 proves nothing",
                target.label(),
                outcome
                    .error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ));
        }
        let forbidden_hits = captures
            .iter()
            .filter(|c| c.role == Role::Forbidden)
            .any(|c| {
                seen.iter()
                    .any(|(name, requests, _)| *name == c.interface && *requests > 0)
            });
        if forbidden_hits {
            passed = false;
        }
        target_reports.push(TargetReport {
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
        });
    }
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

fn missing_replies(
    target: &Target,
    outcome: &ProbeOutcome,
    seen: &[(String, u32, u32)],
    captures: &[Capture],
) -> String {
    let head = format!(
        "{}: {}/{} replies",
        target.label(),
        outcome.received,
        outcome.sent
    );
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
