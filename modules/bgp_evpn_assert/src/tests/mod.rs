//! The checks on constructed FRR JSON (the shapes of docs/frr-json.md), through a fake vtysh
//! that answers per command and records each run.

mod checks;
mod params;
mod parse;
mod recorded;

use crate::observe::{self, Vtysh, NEIGHBORS, NEXT_HOPS, SUMMARY, VNIS};
use crate::params::Request;
use crate::report::Report;
use deevnet_runtime::Failure;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Answers each command from a table; records the runs.
#[derive(Default)]
pub struct FakeVtysh {
    pub answers: HashMap<String, Value>,
    pub runs: Vec<Vec<String>>,
}

impl Vtysh for FakeVtysh {
    fn run(&mut self, commands: &[String]) -> Result<Vec<Value>, Failure> {
        self.runs.push(commands.to_vec());
        commands
            .iter()
            .map(|c| {
                self.answers
                    .get(c)
                    .cloned()
                    .ok_or_else(|| Failure::new(format!("the fake vtysh does not know `{c}`")))
            })
            .collect()
    }
}

impl FakeVtysh {
    pub fn answer(&mut self, command: &str, value: Value) -> &mut Self {
        self.answers.insert(command.to_string(), value);
        self
    }
}

/// The node's base AS (`router bgp 45689`, the EVPN controller's) and its local-as toward
/// the core.
pub const BASE_AS: u32 = 45689;
pub const CORE_LOCAL_AS: u32 = 65021;
pub const CORE_AS: u32 = 65100;
pub const CORE: &str = "2001:db8:60::1";
pub const TENANT_VRF: &str = "vrf_tdemo";

/// One neighbor as `show bgp vrf all neighbors json` prints it.
pub fn neighbor(state: &str, remote_as: u32, group: Option<&str>, negotiated: &[&str]) -> Value {
    let mut mp = Map::new();
    let mut afi = Map::new();
    for af in negotiated {
        mp.insert((*af).into(), json!({"advertisedAndReceived": true}));
        afi.insert((*af).into(), json!({"acceptedPrefixCounter": 3}));
    }
    let mut peer = json!({
        "remoteAs": remote_as,
        "localAs": BASE_AS,
        "nbrExternalLink": true,
        "bgpVersion": 4,
        "bgpState": state,
        "neighborCapabilities": {"4byteAs": "advertisedAndReceived", "multiprotocolExtensions": mp},
        "addressFamilyInfo": afi,
        "connectionsEstablished": 1,
        "connectionsDropped": 0
    });
    if let Some(group) = group {
        peer["peerGroup"] = json!(group);
    }
    if state != "Established" {
        peer["neighborCapabilities"]["multiprotocolExtensions"] = json!({});
    }
    peer
}

/// An all-exit node: two fabric neighbors (BGP unnumbered, peer group bgpv6) in the default
/// VRF, and the core in the tenant VRF, all Established with their families.
pub fn node() -> FakeVtysh {
    let mut core = neighbor(
        "Established",
        CORE_AS,
        None,
        &["ipv4Unicast", "ipv6Unicast"],
    );
    core["localAs"] = json!(CORE_LOCAL_AS);
    let fabric = neighbor(
        "Established",
        BASE_AS,
        Some("bgpv6"),
        &["ipv6Unicast", "l2VpnEvpn"],
    );
    let mut fake = FakeVtysh::default();
    fake.answer(
        NEIGHBORS,
        json!({
            "default": {"vrfId": 0, "vrfName": "default", "ens19": fabric, "ens20": fabric},
            TENANT_VRF: {"vrfId": 7, "vrfName": TENANT_VRF, CORE: core},
        }),
    )
    .answer(
        SUMMARY,
        json!({
            "default": {"ipv6Unicast": {"routerId": "10.20.51.21", "as": BASE_AS, "vrfId": 0, "vrfName": "default", "peers": {}}},
            TENANT_VRF: {"ipv4Unicast": {"routerId": "10.20.51.21", "as": BASE_AS, "vrfId": 7, "vrfName": TENANT_VRF, "peers": {}}},
        }),
    )
    .answer(
        VNIS,
        json!([
            {"vni": 10100, "type": "L2", "tenantVrf": TENANT_VRF, "vxlanInterface": "vxlan_vnet1",
             "numRemoteVteps": 2,
             "remoteVteps": [{"ip": "fd00:51::22", "flood": "HER"}, {"ip": "fd00:51::23", "flood": "HER"}]},
            {"vni": 4001, "type": "L3", "vrf": TENANT_VRF, "localVtepIp": "fd00:51::21", "l2Vnis": [10100]}
        ]),
    )
    .answer(
        NEXT_HOPS,
        json!({"4001": {"numNextHops": 2,
            "fd00:51::22": {"nexthopIp": "fd00:51::22", "routerMac": "bc:24:11:00:00:22"},
            "fd00:51::23": {"nexthopIp": "fd00:51::23", "routerMac": "bc:24:11:00:00:23"}}}),
    );
    core_routes(&mut fake, &["0.0.0.0/0", "203.0.113.0/24"], &["::/0"]);
    core_advertised(&mut fake, &["10.20.128.0/20"], &["2001:db8:128::/48"]);
    fake
}

fn routes_json(key: &str, prefixes: &[&str]) -> Value {
    let mut routes = Map::new();
    for prefix in prefixes {
        let (address, len) = prefix.split_once('/').unwrap();
        let route =
            json!({"prefix": address, "prefixLen": len.parse::<u8>().unwrap(), "valid": true});
        routes.insert(
            (*prefix).into(),
            if key == "routes" {
                json!([route])
            } else {
                route
            },
        );
    }
    json!({"bgpTableVersion": 9, "bgpLocalRouterId": "10.20.51.21", "defaultLocPrf": 100, "localAS": BASE_AS, key: routes})
}

/// What the core sent this node, per family.
pub fn core_routes(fake: &mut FakeVtysh, ipv4: &[&str], ipv6: &[&str]) {
    for (af, prefixes) in [("ipv4_unicast", ipv4), ("ipv6_unicast", ipv6)] {
        fake.answer(
            &observe::routes_command(TENANT_VRF, CORE, af, false),
            routes_json("routes", prefixes),
        );
    }
}

/// What this node advertised to the core, per family.
pub fn core_advertised(fake: &mut FakeVtysh, ipv4: &[&str], ipv6: &[&str]) {
    for (af, prefixes) in [("ipv4_unicast", ipv4), ("ipv6_unicast", ipv6)] {
        fake.answer(
            &observe::routes_command(TENANT_VRF, CORE, af, true),
            routes_json("advertisedRoutes", prefixes),
        );
    }
}

/// The module's request from its arguments, as the binary validates them.
pub fn request(args: Value) -> Result<Request, String> {
    let Value::Object(args) = args else {
        panic!("arguments are an object");
    };
    let validated =
        deevnet_runtime::spec::validate("deevnet.net.bgp_evpn_assert", &crate::SPEC, &args, false)
            .map_err(|e| e.0)?;
    let params: crate::Params =
        serde_json::from_value(Value::Object(validated)).map_err(|e| e.to_string())?;
    Request::from_params(params)
}

/// The request every check test starts from: the fabric group, the core with everything
/// asserted, both VNIs with their VTEPs.
pub fn full_request() -> Value {
    json!({
        "fabric_ipv6_only": true,
        "peers": [
            {"peer": "bgpv6", "address_families": ["ipv6_unicast", "l2vpn_evpn"]},
            {"peer": CORE, "vrf": TENANT_VRF, "remote_as": CORE_AS,
             "address_families": ["ipv4_unicast", "ipv6_unicast"],
             "receives_default": ["ipv4", "ipv6"], "advertises": "aggregates_only"}
        ],
        "vnis": [
            {"vni": 10100, "remote_vteps": ["fd00:51::22", "fd00:51::23"]},
            {"vni": 4001, "remote_vteps": ["fd00:51::23", "fd00:51::22"]}
        ]
    })
}

/// The report of one read of `fake` for `args`.
pub fn assert_on(fake: &mut FakeVtysh, args: Value) -> Result<Report, String> {
    let request = request(args)?;
    let observation = observe::observe(fake, &request).map_err(|f| f.msg)?;
    Ok(crate::checks::evaluate(&request, &observation))
}

/// The findings' lines.
pub fn lines(report: &Report) -> Vec<String> {
    report.finding_lines()
}
