//! `deevnet.net.qinq_probe`: the active QinQ pair test, one side per run.
//!
//! A lost inner tag (a NIC whose VLAN offload overwrites it when it inserts the outer one) is
//! a fault of one host's NIC in one direction: only traffic proves it. The test runs on a pair
//! of hosts at once:
//!
//! - `mode: receive` opens a capture on every slave of this host's uplink (active and backup,
//!   or the single NIC), filtered in the kernel to the probe's ethertype, for at most
//!   `duration` seconds (less once every expected frame is in), then reads the zone bridge's
//!   fdb. Per sender and inner VLAN: both tags seen; only the outer one (the inner tag lost:
//!   the receiving slave and the sender's slave and driver named, with the fix); other tags;
//!   or nothing arrived; and whether the bridge learned the sender's MAC under the inner VLAN.
//!   Started first, with Ansible's `async`/`poll: 0`.
//! - `mode: send` plugs a probe port into the zone bridge as a guest's port (a marked veth
//!   whose other end lives in a namespace of this process: nothing left behind, also after
//!   kill -9) and sends `count` frames per inner VLAN with the inner tag, so each crosses the
//!   bridge, the uplink VLAN device and the NIC like a guest's frame. Sending raw frames with
//!   both tags onto a slave would skip the very offload that loses the tag.
//!
//! Both sides derive the sender's source MAC and the run's nonce from `run_id`, so a receiver
//! started first knows what to look for. Both are public; what proves a frame's sender is its
//! HMAC keyed with the run's `secret`, which both sides get and no frame carries (the threat
//! model is in the library's doc). It changes no configuration: `changed` is false, and check
//! mode runs the test fully.

use deevnet_probe_port::mark::Mark;
use deevnet_probe_port::veth;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::{Context, Failure, Module, Outcome};
use qinq_probe::frame::{format_mac, sender_mac, RunKey};
use qinq_probe::node::{self, Capture};
use qinq_probe::params::{Mode, Params, Request, SPEC};
use qinq_probe::report::{evaluate, Report};
use qinq_probe::tally::Tally;
use std::time::Instant;

static MODULE: Module = Module {
    name: "qinq_probe",
    spec: &SPEC,
    supports_check_mode: true,
};

fn main() {
    MODULE.run(|ctx: &mut Context, params: Params| {
        let request = Request::from_params(params)?;
        let key = RunKey::new(&request.run_id, &request.secret)?;
        let netlink = Netlink::connect()?;
        let links = netlink.links()?;
        let uplink = node::resolve(&request, &links)?;
        let slaves = node::slave_reports(&uplink)?;
        if !uplink.vlan_aware {
            ctx.warn(format!(
                "{} does not filter VLANs: frames cross it with their inner tag as they are, and its fdb cannot show the VLAN a MAC was learned in (deevnet.net.qinq_check fails such a zone bridge)",
                uplink.bridge.name
            ));
        }
        let mut report = Report {
            mode: request.mode.as_str(),
            run_id: request.run_id.clone(),
            slaves,
            source_mac: None,
            sent: Vec::new(),
            pairs: Vec::new(),
            dropped: 0,
            forged: Default::default(),
            untracked: 0,
        };
        match request.mode {
            Mode::Send => {
                let mark = Mark::of_this_process()?;
                let swept = veth::sweep_leftovers(&netlink, &links, &mark)?;
                if !swept.is_empty() {
                    ctx.warn(format!("removed what killed earlier runs left: {}", swept.join(", ")));
                }
                report.source_mac = Some(format_mac(&sender_mac(&request.run_id, &request.name)));
                report.sent = node::send(&netlink, &request, &uplink, &mark, &report.slaves, &key)?;
                let frames: u16 = report.sent.iter().map(|s| s.frames).sum();
                let mut outcome = Outcome {
                    msg: format!(
                        "sent {frames} frames as {} from {} on VLAN(s) {:?} of {}",
                        request.name,
                        report.source_mac.as_deref().unwrap_or_default(),
                        request.vlans,
                        uplink.bridge.name
                    ),
                    ..Outcome::default()
                };
                outcome.set_report(&report);
                Ok(outcome)
            }
            Mode::Receive => {
                let capture = Capture::open(&uplink)?;
                let deadline = Instant::now() + request.duration;
                let mut tally = Tally::new(&request, uplink.outer);
                report.dropped = capture.read(&key, &mut tally, deadline)?;
                let fdb = node::read_fdb(&netlink, &uplink)?;
                let receiver = if request.name.is_empty() { "this host" } else { &request.name };
                report.pairs = evaluate(&request, receiver, &tally, &fdb, uplink.vlan_aware);
                report.forged = tally.forged().clone();
                report.untracked = tally.untracked();
                if let Some(warning) = report.forged_warning() {
                    ctx.warn(warning);
                }
                finish_receive(report)
            }
        }
    })
}

/// The receiver's result: a failure naming every broken direction, or what passed.
fn finish_receive(report: Report) -> Result<Outcome, Failure> {
    if let Some(msg) = report.failure_message() {
        return Err(Failure::new(msg)
            .with("changed", false)
            .with_report(&report));
    }
    if report.pairs.is_empty() {
        return Err(Failure::new("senders: no sender given and no frame of this run arrived: nothing was proven; give the senders' names in senders")
            .with("changed", false)
            .with_report(&report));
    }
    let mut outcome = Outcome {
        msg: format!(
            "both tags arrived for all {} sender/VLAN pairs",
            report.pairs.len()
        ),
        ..Outcome::default()
    };
    outcome.set_report(&report);
    Ok(outcome)
}
