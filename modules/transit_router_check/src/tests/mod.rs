//! Unit tests on listings recorded with nft 1.0.6 and iproute2 6.1 (tests/data/README.md).

mod ahead;
mod checks;
mod ip_rules;
mod kernel;
mod nft;
mod params;
mod persisted;
mod unit;
mod vpc_lookups;
mod walk;

use crate::checks::{Observed, UnitFiles, VpcLookups};
use crate::kernel::{ReversePathSysctls, TransitInterface};
use crate::nft::Ruleset;
use crate::params::{Params, Request, DEFAULT_PRIVATE_RANGES};
use crate::persisted::Persisted;
use crate::report::Forwarding;
use crate::routes::Lookup;
use crate::{gate, routes};
use serde_json::json;

pub const ENFORCED: &str = include_str!("../../tests/data/nft-1.0.6/enforced.json");
pub const ENFORCED_TABLE: &str = include_str!("../../tests/data/nft-1.0.6/enforced-table.json");
pub const ACCEPT_AHEAD: &str = include_str!("../../tests/data/nft-1.0.6/accept-ahead.json");
pub const FOREIGN_AHEAD: &str = include_str!("../../tests/data/nft-1.0.6/foreign-ahead.json");
pub const DNS_SET: &str = include_str!("../../tests/data/nft-1.0.6/dns-set.json");
pub const DORMANT: &str = include_str!("../../tests/data/nft-1.0.6/dormant.json");
pub const DORMANT_TEXT: &str = include_str!("../../tests/data/nft-1.0.6/dormant.txt");
pub const FLUSHED: &str = include_str!("../../tests/data/nft-1.0.6/flushed.json");
pub const GATE_4: &str = include_str!("../../tests/data/ip-6.1/gate-rules-4.json");
pub const GATE_6: &str = include_str!("../../tests/data/ip-6.1/gate-rules-6.json");
pub const RULE_AHEAD_4: &str = include_str!("../../tests/data/ip-6.1/rule-ahead-4.json");
pub const ROUTES: &str = include_str!("../../tests/data/ip-6.1/routes.json");

/// The options of the recorded node, with `changes` laid over them.
pub fn params(changes: serde_json::Value) -> Params {
    let mut base = json!({
        "transit_interface": "tr-transit",
        "transit_network": "198.51.100.0/24",
        "uplink": "tr-up",
        "loadbalancer_ranges": ["10.96.100.0/28"],
        "dns_servers": "any",
        "ntp_servers": "any",
        "vpc_ranges": ["10.202.0.0/24", "192.0.2.0/24"],
        "private_ranges": DEFAULT_PRIVATE_RANGES,
        "table": "deevnet_transit",
        "forward_priority": -200,
        "gate_mark": 4_194_304,
        "gate_priority": 100,
        "ruleset_path": "/etc/nftables.d/deevnet-transit-router.nft",
        "unit_path": "/etc/systemd/system/deevnet-transit-router.service",
        "nftables_conf_path": "/etc/nftables.conf",
    });
    if let (Some(base), Some(changes)) = (base.as_object_mut(), changes.as_object()) {
        base.extend(changes.clone());
    }
    serde_json::from_value(base).expect("test params")
}

pub fn request() -> Request {
    Request::from_params(params(json!({}))).expect("the recorded node's options are valid")
}

pub fn ruleset(json: &str) -> Ruleset {
    Ruleset::parse(json).expect("recorded JSON parses")
}

pub const UNIT: &str = "[Unit]\nPartOf=nftables.service\nReloadPropagatedFrom=nftables.service\n\n[Install]\nWantedBy=sysinit.target\n";

/// The recorded node as enforced: the table, both gate rules, no route into a VPC,
/// forwarding on, the persisted file equal to the running table, the unit enabled.
pub fn enforced() -> Observed {
    Observed {
        ruleset: ruleset(ENFORCED),
        ipv4_rules: gate::parse(GATE_4).expect("recorded"),
        ipv6_rules: gate::parse(GATE_6).expect("recorded"),
        routes: Vec::new(),
        ipv6_local_routes: Vec::new(),
        forwarding: Forwarding {
            ip_forward: true,
            transit: true,
        },
        persisted: Persisted::Loaded(ruleset(ENFORCED_TABLE)),
        unit: UnitFiles {
            unit: Ok(Some(UNIT.into())),
            enabled_by: Some(
                "/etc/systemd/system/sysinit.target.wants/deevnet-transit-router.service".into(),
            ),
            nftables_conf: Ok(None),
            dropins: Vec::new(),
            shadowed_by: Vec::new(),
        },
        transit_names: vec!["tr-transit".into()],
        transit_interface: TransitInterface {
            master: None,
            xdp: false,
            tc: Ok(Vec::new()),
            others_in_network: Vec::new(),
            stacked: Vec::new(),
        },
        legacy_tables: Ok(Vec::new()),
        reverse_path: ReversePathSysctls::default(),
        vpc_lookups: Ok(VpcLookups {
            source: "198.51.100.2".into(),
            internet: Some((
                "1.1.1.1".into(),
                Lookup::Forwarded {
                    route: "default via 10.9.0.2 dev tr-up table main".into(),
                    dev: Some("tr-up".into()),
                },
            )),
            vpc: vec![
                (
                    "10.202.0.0".into(),
                    Lookup::NotForwarded("prohibited".into()),
                ),
                (
                    "192.0.2.0".into(),
                    Lookup::NotForwarded("prohibited".into()),
                ),
            ],
        }),
    }
}

pub fn recorded_routes() -> Vec<routes::IpRoute> {
    routes::parse(ROUTES).expect("recorded")
}
