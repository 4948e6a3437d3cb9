//! The logic of `bgp_evpn_assert`: FRR's control plane, read through vtysh's JSON, asserted.
//!
//! [`params`] (the options), [`observe`] (which commands, in as few vtysh runs as possible,
//! and the peers a request names), [`frr`] (FRR's JSON shapes, docs/frr-json.md), [`checks`]
//! (each assertion and its wording), [`report`] (the result keys), all pure; [`node`] runs the
//! node's vtysh. [`settle`] re-reads until every check passes or `settle_timeout` has passed.
//!
//! Invariants: the module changes nothing; vtysh is run without a shell, only when root's, and
//! stopped at `timeout` or past `max_output_bytes` ([`deevnet_runtime::bounded_command`]).
//! Neighbours: [`deevnet_runtime`].

pub mod checks;
pub mod frr;
pub mod node;
pub mod observe;
pub mod params;
pub mod report;

pub use params::{Params, Request, SPEC};
pub use report::{Finding, Report};

use deevnet_runtime::Failure;
use observe::Vtysh;
use std::time::{Duration, Instant};

/// The pause between two attempts (shorter when less time is left).
pub const RETRY_INTERVAL: Duration = Duration::from_millis(500);

/// The last attempt's report and how many attempts it took.
pub struct Settled {
    pub report: Report,
    pub attempts: u32,
    pub elapsed: Duration,
}

/// Reads FRR and checks, again and again until nothing is found or `settle_timeout` has
/// passed (after an FRR apply, sessions take seconds to come up). Bad input (an unknown VRF or
/// peer, a vtysh that fails) ends it at once.
pub fn settle(vtysh: &mut impl Vtysh, request: &Request) -> Result<Settled, Failure> {
    let started = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let observation = observe::observe(vtysh, request)?;
        let report = checks::evaluate(request, &observation);
        let elapsed = started.elapsed();
        if report.findings.is_empty() || elapsed >= request.settle_timeout {
            return Ok(Settled {
                report,
                attempts,
                elapsed,
            });
        }
        std::thread::sleep(RETRY_INTERVAL.min(request.settle_timeout - elapsed));
    }
}

// A test reads as one story from setup to verdict: the length limit is production code's.
#[cfg(test)]
#[allow(clippy::too_many_lines)]
mod tests;
