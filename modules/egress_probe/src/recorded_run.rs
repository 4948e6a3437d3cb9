//! The addresses, targets and markers of the recorded run (tests/recorded/namespace_run.txt: a
//! real run in namespaces), which the frame tests and the fuzz invariants
//! (`deevnet_fuzz_invariants`, through the feature `test-support`) both classify against.

use crate::frame::Markers;
use crate::params::{Expect, Proto, Target};
use std::net::Ipv4Addr;

/// The workload's own address (what SNAT would replace).
pub const WORKLOAD: Ipv4Addr = Ipv4Addr::new(10, 20, 129, 250);
pub const INTERNET: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 8);
/// The management side, which must never be reached.
pub const MGMT: Ipv4Addr = Ipv4Addr::new(10, 20, 99, 5);
pub const ICMP_ID: u16 = 0x48bc;

/// The run's targets: the internet by ICMP, TCP 443 and UDP 53 (reply expected), and the
/// management side by ICMP (no reply expected).
pub fn targets() -> Vec<Target> {
    let t = |address: Ipv4Addr, proto, port, expect| Target {
        address: address.into(),
        proto,
        port,
        expect,
        size: None,
        peer: false,
        via: None,
    };
    vec![
        t(INTERNET, Proto::Icmp, None, Expect::Reply),
        t(INTERNET, Proto::Tcp, Some(443), Expect::Reply),
        t(INTERNET, Proto::Udp, Some(53), Expect::Reply),
        t(MGMT, Proto::Icmp, None, Expect::None),
    ]
}

/// The run's markers: the workload, the ICMP id and the local ports of its TCP and UDP probes.
pub fn markers() -> Markers {
    Markers {
        workload: WORKLOAD.into(),
        icmp_id: ICMP_ID,
        local_ports: vec![(Proto::Tcp, 45433), (Proto::Udp, 55881)],
    }
}
