//! Arguments against every module's declared spec and a spec with every kind of option
//! (deevnet_fuzz_invariants::spec_args). The first byte picks the spec.
#![no_main]
use deevnet_fuzz_invariants::spec_args::{check_args, REPRESENTATIVE};
use deevnet_fuzz_invariants::{frr, sdn, specs, sysctl_d};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let modules = specs::ALL;
    match usize::from(which) % (modules.len() + 1) {
        0 => {
            check_args("deevnet.net.probe", &REPRESENTATIVE, rest);
        }
        n => {
            let (name, spec) = modules[n - 1];
            let fqcn = format!("deevnet.net.{name}");
            let out = check_args(&fqcn, spec, rest);
            match name {
                "frr_local_stanza" => frr::typed_arguments(out),
                "sysctl_forwarding" => sysctl_d::typed_arguments(out),
                "sdn_check" => sdn::typed_arguments(out),
                _ => {}
            }
        }
    }
});
