//! Each fuzzed module's argument spec, taken from the module's library where it is declared
//! next to its `Params`: the same static its binary validates with and prints for
//! `--argument-spec`, so there is no copy to go stale. Not every module is listed; another one: a
//! path dependency in `modules/fuzz_invariants/Cargo.toml` and one line here.

use deevnet_runtime::OptionSpec;

/// (module name, its spec), for the `spec_args` target.
pub static ALL: &[(&str, &[OptionSpec])] = &[
    ("frr_local_stanza", &frr_local_stanza::params::SPEC),
    ("sysctl_forwarding", &sysctl_forwarding::SPEC),
    ("sdn_check", &sdn_check::SPEC),
    ("transit_router_check", &transit_router_check::SPEC),
];
