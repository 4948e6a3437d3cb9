//! The stable smoke run of the fuzz target `frr_json` on bgp_evpn_assert's FRR JSON readers and
//! checks: the seed corpus (the crate's test answers, see fuzz/corpus/frr_json), the kept
//! regressions and a bounded number of generated inputs through the same invariant code as
//! `make fuzz`. `DEEVNET_FUZZ_CASES=N` runs N generated inputs.

use crate::fuzz_root;
use bgp_evpn_assert::observe::observe;
use deevnet_fuzz_invariants::{frr_json, input};

#[test]
fn fuzz_smoke_frr_json() {
    input::smoke(
        &fuzz_root(),
        "frr_json",
        input::case_count(3000),
        frr_json::check_bytes,
    );
}

/// The healthy seed passes the fuzz request, so the invariants on a pass run on real answers.
#[test]
fn the_healthy_seed_passes() {
    let data = std::fs::read(fuzz_root().join("corpus/frr_json/healthy")).expect("the seed");
    let answers: Vec<serde_json::Value> = data
        .split(|&b| b == 0)
        .map(|part| serde_json::from_slice(part).expect("a seed part is JSON"))
        .collect();
    assert_eq!(answers.len(), 5);
    let request = frr_json::request();
    struct Seed(Vec<serde_json::Value>);
    impl bgp_evpn_assert::observe::Vtysh for Seed {
        fn run(
            &mut self,
            commands: &[String],
        ) -> Result<Vec<serde_json::Value>, deevnet_runtime::Failure> {
            use bgp_evpn_assert::observe::{NEIGHBORS, NEXT_HOPS, SUMMARY, VNIS};
            Ok(commands
                .iter()
                .map(|c| {
                    let at = [NEIGHBORS, SUMMARY, VNIS, NEXT_HOPS]
                        .iter()
                        .position(|k| k == c)
                        .unwrap_or(4);
                    self.0[at].clone()
                })
                .collect())
        }
    }
    let observation = observe(&mut Seed(answers), &request).expect("the healthy seed is read");
    let report = bgp_evpn_assert::checks::evaluate(&request, &observation);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}
