//! Unit tests of the parts that need no kernel: options, the checks against recorded node
//! facts, the classification of recorded frames, the result.

mod blocked;
mod frames;
mod lifecycle;
mod params;
mod peers;
mod probe;
mod probes;
mod tenant;
mod workload;

use crate::params::{Expect, Params, Proto, TargetParams};

pub fn target(address: &str) -> TargetParams {
    TargetParams {
        address: address.into(),
        proto: Proto::Icmp,
        port: None,
        expect: Expect::Reply,
        size: None,
        peer: false,
        via: None,
    }
}

pub fn params(targets: Vec<TargetParams>) -> Params {
    Params {
        vrf: "vrf_tdemo".into(),
        address: "10.20.129.250/24".into(),
        targets,
        probes: None,
        vnet: None,
        gateway: None,
        count: 3,
        timeout: 2,
        forbidden_interfaces: None,
        expect_egress_interface: Some("vmbr0.50".into()),
        start_at: None,
        check_mode_findings: deevnet_runtime::CheckModeFindings::Fail,
    }
}
