//! Each module's argument spec as its binary prints it (`MODULE --argument-spec`), checked in
//! under `fuzz/specs/` for the fuzz targets. A module's smoke test fails when its copy differs
//! from the binary (`specs::assert_current`). A new module: its JSON file and one line here.

use crate::spec_args::spec_from_json;
use deevnet_runtime::OptionSpec;
use serde_json::Value;
use std::sync::OnceLock;

const CHECKED_IN: &[(&str, &str)] = &[
    (
        "frr_local_stanza",
        include_str!("../specs/frr_local_stanza.json"),
    ),
    (
        "sysctl_forwarding",
        include_str!("../specs/sysctl_forwarding.json"),
    ),
];

type Specs = Vec<(&'static str, &'static [OptionSpec])>;

/// Every checked-in module spec, rebuilt once per process.
pub fn all() -> &'static [(&'static str, &'static [OptionSpec])] {
    static SPECS: OnceLock<Specs> = OnceLock::new();
    SPECS.get_or_init(|| {
        CHECKED_IN
            .iter()
            .map(|(name, text)| {
                let printed: Value = serde_json::from_str(text).expect("a spec file is JSON");
                (*name, spec_from_json(&printed["argument_spec"]))
            })
            .collect()
    })
}

/// Fails when `fuzz/specs/NAME.json` is not what `binary --argument-spec` prints now.
pub fn assert_current(name: &str, binary: &str) {
    let output = std::process::Command::new(binary)
        .arg("--argument-spec")
        .output()
        .expect("the module binary runs");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("--argument-spec is JSON");
    let (_, text) = CHECKED_IN
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("fuzz/specs/{name}.json is not listed in fuzz/src/specs.rs"));
    let checked_in: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        checked_in, printed,
        "fuzz/specs/{name}.json is stale: write `{binary} --argument-spec` to it"
    );
}

/// The checked-in spec of module `name`, after checking it against `binary`.
pub fn current(name: &str, binary: &str) -> &'static [OptionSpec] {
    assert_current(name, binary);
    all()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, spec)| *spec)
        .expect("listed")
}
