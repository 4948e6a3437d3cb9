//! `settle_timeout`: after an FRR apply, routes reach the kernel asynchronously, so the checks
//! are re-run, with short sleeps, until all pass or the timeout has passed. Each attempt
//! re-reads the kernel. A finding no route can cure (a missing VRF) ends the wait at once.

use crate::params::Request;
use crate::{assert_vrfs, Kernel, Report};
use deevnet_runtime::Failure;
use serde::{Serialize, Serializer};
use std::time::{Duration, Instant};

/// The pause between two attempts (shorter when less time is left).
pub const RETRY_INTERVAL: Duration = Duration::from_millis(500);

pub trait Clock {
    /// Time since the first attempt began.
    fn elapsed(&self) -> Duration;
    fn sleep(&mut self, duration: Duration);
}

pub struct SystemClock(Instant);

impl SystemClock {
    pub fn start() -> Self {
        SystemClock(Instant::now())
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
    fn sleep(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// The last attempt's report, how many attempts were made and when the last one ended: the
/// module's result keys (RETURN), declared once for success and failure.
#[derive(Serialize)]
pub struct Settled {
    #[serde(flatten)]
    pub report: Report,
    pub attempts: u32,
    /// Reported in seconds, to the millisecond.
    #[serde(serialize_with = "seconds_to_the_millisecond")]
    pub settled_after: Duration,
}

impl Settled {
    /// `settled_after` as reported: seconds, to the millisecond.
    pub fn settled_after_seconds(&self) -> f64 {
        (self.settled_after.as_secs_f64() * 1000.0).round() / 1000.0
    }
}

fn seconds_to_the_millisecond<S: Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64((duration.as_secs_f64() * 1000.0).round() / 1000.0)
}

pub fn settle(
    kernel: &mut impl Kernel,
    request: &Request,
    clock: &mut impl Clock,
) -> Result<Settled, Failure> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let report = assert_vrfs(kernel, request)?;
        let elapsed = clock.elapsed();
        if report.failures().is_empty() || !report.may_settle() || elapsed >= request.settle_timeout
        {
            return Ok(Settled {
                report,
                attempts,
                settled_after: elapsed,
            });
        }
        clock.sleep(RETRY_INTERVAL.min(request.settle_timeout - elapsed));
    }
}
