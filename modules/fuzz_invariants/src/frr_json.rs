//! Invariants of `bgp_evpn_assert`'s readers of FRR's JSON (vtysh's stdout split into answers,
//! and the readers of each answer) and of the checks on what they read, shared by the
//! libFuzzer target `frr_json` and the stable smoke test
//! (`modules/fuzz_invariants/tests/it/bgp_evpn_assert.rs`).

use bgp_evpn_assert::frr::{
    parse_base_as, parse_neighbors, parse_next_hops, parse_vnis, route_prefixes, warning,
};
use bgp_evpn_assert::node::split_answers;
use bgp_evpn_assert::observe::{observe, Vtysh, NEIGHBORS, NEXT_HOPS, SUMMARY, VNIS};
use bgp_evpn_assert::{checks, Request};
use deevnet_runtime::Failure;
use serde_json::{json, Value};
use std::path::Path;

/// The peer and the VNI the request asserts (the lab node's core and L3 VNI, as in the seeds).
pub const PEER: &str = "2001:db8:60::1";
pub const PEER_VRF: &str = "vrf_tdemo";
pub const VNI: u32 = 4001;

/// The request every input is checked against: the core Established with its AS and sending
/// the IPv4 default, and the L3 VNI.
pub fn request() -> Request {
    let args = json!({
        "peers": [{"peer": PEER, "vrf": PEER_VRF, "remote_as": 65100, "receives_default": ["ipv4"]}],
        "vnis": [{"vni": VNI}],
    });
    let Value::Object(args) = args else {
        unreachable!("a JSON object")
    };
    let validated = deevnet_runtime::spec::validate(
        "deevnet.net.bgp_evpn_assert",
        &bgp_evpn_assert::SPEC,
        &args,
        false,
    )
    .unwrap_or_else(|e| panic!("the fuzz request is refused: {e}"));
    let params = serde_json::from_value(Value::Object(validated))
        .unwrap_or_else(|e| panic!("the fuzz request does not type: {e}"));
    Request::from_params(params).unwrap_or_else(|e| panic!("the fuzz request is refused: {e}"))
}

/// Answers the first run's four commands from the input's parts, every route command with the
/// fifth.
struct Answers(Vec<Value>);

impl Vtysh for Answers {
    fn run(&mut self, commands: &[String]) -> Result<Vec<Value>, Failure> {
        Ok(commands
            .iter()
            .map(|command| {
                let at = [NEIGHBORS, SUMMARY, VNIS, NEXT_HOPS]
                    .iter()
                    .position(|c| c == command)
                    .unwrap_or(4);
                self.0[at].clone()
            })
            .collect())
    }
}

/// Target `frr_json`: `NEIGHBORS \0 SUMMARY \0 VNIS \0 NEXT_HOPS \0 ROUTES`, vtysh's answers
/// (a part that is no JSON reads as `null`). Every reader takes any answer without panicking,
/// answers the same twice and never with an empty reason; and the checks pass only on what the
/// readers read: the peer there and Established, the VNI there, no answer a bare value.
pub fn check_bytes(data: &[u8]) {
    let vtysh = Path::new("/usr/bin/vtysh");
    let commands: Vec<String> = [NEIGHBORS, SUMMARY, VNIS, NEXT_HOPS]
        .map(String::from)
        .to_vec();
    let split = split_answers(vtysh, &commands, data);
    assert_eq!(
        split,
        split_answers(vtysh, &commands, data),
        "split_answers is not deterministic"
    );
    if let Err(why) = &split {
        assert!(!why.is_empty(), "an empty reason from split_answers");
    }

    let mut answers: Vec<Value> = data
        .split(|&b| b == 0)
        .take(5)
        .map(|part| serde_json::from_slice(part).unwrap_or(Value::Null))
        .collect();
    answers.resize(5, Value::Null);
    for answer in &answers {
        let neighbors = parse_neighbors(answer);
        assert_eq!(neighbors, parse_neighbors(answer));
        let base_as = parse_base_as(answer);
        assert_eq!(base_as, parse_base_as(answer));
        let vnis = parse_vnis(answer);
        assert_eq!(vnis, parse_vnis(answer));
        let next_hops = parse_next_hops(answer);
        assert_eq!(next_hops, parse_next_hops(answer));
        let routes = route_prefixes(answer, "receivedRoutes", "show bgp routes json");
        assert_eq!(
            routes,
            route_prefixes(answer, "receivedRoutes", "show bgp routes json")
        );
        assert_eq!(warning(answer), warning(answer));
        for why in [
            neighbors.err(),
            base_as.err(),
            vnis.err(),
            next_hops.err(),
            routes.err(),
        ]
        .into_iter()
        .flatten()
        {
            assert!(!why.is_empty(), "a reader's empty reason for {answer}");
        }
    }

    let request = request();
    let observation = match observe(&mut Answers(answers.clone()), &request) {
        Ok(observation) => observation,
        Err(failure) => {
            assert!(!failure.msg.is_empty(), "an empty failure");
            return;
        }
    };
    let report = checks::evaluate(&request, &observation);
    assert_eq!(
        report,
        checks::evaluate(&request, &observation),
        "evaluate is not deterministic"
    );
    if !report.findings.is_empty() {
        return;
    }
    // A pass stands on what was read: no answer a bare value (null, a string, a number).
    for (answer, name) in answers
        .iter()
        .zip([NEIGHBORS, SUMMARY, VNIS, NEXT_HOPS, "routes"])
    {
        assert!(
            answer.is_object() || answer.is_array(),
            "passed with `{name}` answered {answer}"
        );
    }
    let bgp = parse_neighbors(&answers[0]).unwrap_or_default();
    let established = bgp
        .get(PEER_VRF)
        .and_then(|vrf| vrf.neighbor(PEER))
        .is_some_and(|n| n.established());
    assert!(
        established,
        "passed without {PEER} Established in {PEER_VRF}: {}",
        answers[0]
    );
    let vnis = parse_vnis(&answers[2]).unwrap_or_default();
    assert!(
        vnis.iter().any(|v| v.vni == VNI),
        "passed without VNI {VNI}: {}",
        answers[2]
    );
}
