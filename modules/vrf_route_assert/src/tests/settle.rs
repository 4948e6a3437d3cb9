//! `settle_timeout`: the checks repeated on a clock that moves only when slept on, until the
//! routes arrive, the time is up, or a missing VRF ends the wait.

use super::*;
use crate::settle::{settle, Clock};
use deevnet_runtime::Failure;
use std::time::Duration;

/// A clock that only moves when slept on.
#[derive(Default)]
struct FakeClock {
    now: Duration,
    sleeps: Vec<Duration>,
}

impl Clock for FakeClock {
    fn elapsed(&self) -> Duration {
        self.now
    }
    fn sleep(&mut self, duration: Duration) {
        self.sleeps.push(duration);
        self.now += duration;
    }
}

/// hv02 whose leaked default and forwarding arrive with the given attempt.
struct ArrivingKernel {
    kernel: RecordedKernel,
    attempt: u32,
    fixed_at: u32,
}

impl Kernel for ArrivingKernel {
    fn links(&mut self) -> Result<Links, Failure> {
        // One links dump per attempt.
        self.attempt += 1;
        if self.attempt == self.fixed_at {
            self.kernel = RecordedKernel::fixed();
        }
        self.kernel.links()
    }
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure> {
        self.kernel.routes(family, table)
    }
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure> {
        self.kernel.route_get(query)
    }
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure> {
        self.kernel.forwarding(family, dev)
    }
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        self.kernel.rp_filter(dev)
    }
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure> {
        self.kernel.ipv6_force_forwarding(dev)
    }
    fn vrf_support(&mut self) -> VrfSupport {
        self.kernel.vrf_support()
    }
    fn nft_ruleset(&mut self) -> Result<Ruleset, String> {
        self.kernel.nft_ruleset()
    }
}

#[test]
fn settle_retries_until_the_routes_arrive_or_the_timeout_passes() {
    let plan = Request {
        settle_timeout: Duration::from_secs(3),
        ..Request::of(mission_checks())
    };
    let mut kernel = ArrivingKernel {
        kernel: RecordedKernel::faulty(),
        attempt: 0,
        fixed_at: 4,
    };
    let mut clock = FakeClock::default();
    let settled = settle(&mut kernel, &plan, &mut clock).unwrap();
    assert!(settled.report.failures().is_empty());
    assert_eq!(settled.attempts, 4);
    assert_eq!(settled.settled_after, Duration::from_millis(1500));

    // Never fixed: attempts every 500 ms, the last sleep cut to the time left, then the
    // findings of the last attempt stand.
    let plan = Request {
        settle_timeout: Duration::from_millis(1200),
        ..plan
    };
    let mut kernel = ArrivingKernel {
        kernel: RecordedKernel::faulty(),
        attempt: 0,
        fixed_at: 0,
    };
    let mut clock = FakeClock::default();
    let settled = settle(&mut kernel, &plan, &mut clock).unwrap();
    assert_eq!(settled.report.failures().len(), 3);
    assert_eq!(settled.attempts, 4);
    assert_eq!(
        clock.sleeps,
        [500, 500, 200].map(Duration::from_millis).to_vec()
    );
    assert_eq!(settled.settled_after, Duration::from_millis(1200));

    // Zero: one attempt, no sleep.
    let mut clock = FakeClock::default();
    let settled = settle(
        &mut RecordedKernel::faulty(),
        &Request::of(mission_checks()),
        &mut clock,
    )
    .unwrap();
    assert_eq!((settled.attempts, clock.sleeps.len()), (1, 0));
}

#[test]
fn a_missing_vrf_ends_the_wait_at_once() {
    let plan = Request {
        settle_timeout: Duration::from_secs(30),
        ..Request::of(vec![VrfCheck::new("vrf_tgone")])
    };
    let mut clock = FakeClock::default();
    let settled = settle(&mut RecordedKernel::faulty(), &plan, &mut clock).unwrap();
    assert_eq!(
        settled.report.failures(),
        ["vrf_tgone: the tenant has no VRF on this node (no interface named vrf_tgone)"]
    );
    assert_eq!((settled.attempts, clock.sleeps.len()), (1, 0));
}
