//! The stable smoke run of the fuzz target `sdn_files` on sdn_check's readers and derivation:
//! the seed corpus (the crate's own test configurations, see fuzz/corpus/sdn_files), the kept
//! regressions and a bounded number of generated inputs through the same invariant code as
//! `make fuzz` (`deevnet_fuzz_invariants`). `DEEVNET_FUZZ_CASES=N` runs N generated inputs.

use crate::fuzz_root;
use deevnet_fuzz_invariants::{input, sdn, spec_args};

#[test]
fn fuzz_smoke_sdn_files() {
    input::smoke(
        &fuzz_root(),
        "sdn_files",
        input::case_count(3000),
        sdn::check_bytes,
    );
}

#[test]
fn fuzz_smoke_spec_args_with_the_real_spec() {
    input::smoke(&fuzz_root(), "spec_args", input::case_count(3000), |data| {
        sdn::typed_arguments(spec_args::check_args(
            "deevnet.net.sdn_check",
            &sdn_check::SPEC,
            data.get(1..).unwrap_or_default(),
        ));
    });
}

/// A request past the argument spec that the module refuses names the option it refuses.
#[test]
fn a_refused_request_names_its_option() {
    let args = serde_json::json!({
        "node": "hv 01", "running_config": "relative/path", "config_dir": "/etc/pve/sdn",
        "interfaces_sdn": "/etc/network/interfaces.d/sdn", "interfaces": "/etc/network/interfaces",
        "kernel": true, "drift": "fail"
    });
    let serde_json::Value::Object(map) = args else {
        unreachable!("a JSON object")
    };
    let params: sdn_check::Params =
        serde_json::from_value(serde_json::Value::Object(map.clone())).expect("valid types");
    let refusal = sdn_check::Request::from_params(params).expect_err("'hv 01' is no node name");
    assert!(refusal.contains("node"), "{refusal}");
    sdn::typed_arguments(Some(map));
}

/// Every seed reaches the derivation: its files parse and some node of it derives zones, so
/// the invariants past the readers run on real configurations, not only on rejected text.
#[test]
fn every_seed_reaches_the_derivation() {
    let folder = fuzz_root().join("corpus/sdn_files");
    let mut seeds = 0;
    for entry in std::fs::read_dir(&folder).expect("the sdn_files corpus") {
        let path = entry.expect("a corpus entry").path();
        let data = std::fs::read(&path).expect("a corpus file is readable");
        let mut parts = data.split(|&b| b == 0);
        let running = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
        let interfaces = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
        let config = sdn_check::running_config::parse(&running, "running_config")
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let own = sdn_check::interfaces::own_interfaces(&interfaces, "interfaces")
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let derived_zones = sdn_check::derive::named_nodes(&config)
            .iter()
            .filter_map(|node| sdn_check::derive::derive(&config, node, &own).ok())
            .map(|derived| derived.intent.zones.len())
            .max()
            .unwrap_or(0);
        assert!(
            derived_zones > 0,
            "{}: no node of it derives a zone",
            path.display()
        );
        seeds += 1;
    }
    assert!(seeds >= 4, "only {seeds} seeds in {}", folder.display());
}
