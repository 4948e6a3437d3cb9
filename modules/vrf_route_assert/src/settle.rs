//! `settle_timeout`: after an FRR apply, routes reach the kernel asynchronously, so the checks
//! are re-run, with short sleeps, until all pass or the timeout has passed. Each attempt
//! re-reads the kernel.

use crate::plan::Plan;
use crate::{assert_vrfs, Kernel, Report};
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

/// The last attempt's report, how many attempts were made and when the last one ended.
pub struct Settled {
    pub report: Report,
    pub attempts: u32,
    pub settled_after: Duration,
}

pub fn settle(
    kernel: &mut impl Kernel,
    plan: &Plan,
    clock: &mut impl Clock,
) -> anyhow::Result<Settled> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let report = assert_vrfs(kernel, plan)?;
        let elapsed = clock.elapsed();
        if report.failures().is_empty() || elapsed >= plan.settle_timeout {
            return Ok(Settled {
                report,
                attempts,
                settled_after: elapsed,
            });
        }
        clock.sleep(RETRY_INTERVAL.min(plan.settle_timeout - elapsed));
    }
}
