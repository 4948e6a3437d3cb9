//! Invariants of `sysctl_forwarding`'s sysctl.d reader and writer, shared by the libFuzzer
//! target `sysctl_d` and the stable smoke test
//! (`modules/fuzz_invariants/tests/it/sysctl_forwarding.rs`).

use crate::input::{split_at_nul, Input};
use std::collections::BTreeMap;
use sysctl_forwarding::managed_file::{check_interface_name, desired_settings, render};
use sysctl_forwarding::sysctl_d::{glob_matches, parse, Target};
use sysctl_forwarding::Params;

/// Target `sysctl_d`: `FILE \0 DECISIONS`. The file is parsed as systemd-sysctl reads it; the
/// decisions pick the module's own options, whose rendered file must read back exactly.
pub fn check_bytes(data: &[u8]) {
    let (file, program) = split_at_nul(data);
    let text = String::from_utf8_lossy(file);
    parse_invariants(&text);
    let mut input = Input::new(program);
    let ipv6 = input.flag();
    let mut rp_filter = BTreeMap::new();
    for _ in 0..input.below(5) {
        let name = match input.byte() % 4 {
            0 => input.text(20),
            1 => "all".to_string(),
            2 => "default".to_string(),
            _ => input
                .pick(&[
                    "vmbr0.50",
                    "bond0.40.201",
                    "vrf_tdemo",
                    "a-b_c",
                    "eth*",
                    "a=b",
                ])
                .to_string(),
        };
        rp_filter.insert(name, input.byte() % 3);
    }
    render_invariants(ipv6, &rp_filter);
    let subject = input.text(40);
    for assignment in parse(&text) {
        if let Target::Glob(pattern) = assignment.target {
            // A glob is matched against every key under /proc/sys: it must never panic, and a
            // pattern always matches its own text when it has no class or `?`.
            let _ = glob_matches(&pattern, &subject);
            if !pattern.contains(['[', '?', '\\']) {
                assert!(
                    glob_matches(&pattern, &pattern),
                    "{pattern:?} does not match itself"
                );
            }
        }
    }
}

/// Any text: no panic, every assignment at a line the file has, in order.
pub fn parse_invariants(text: &str) {
    let lines = text.lines().count();
    let mut last = 0;
    for assignment in parse(text) {
        assert!(
            assignment.line >= 1 && assignment.line <= lines && assignment.line > last,
            "assignment {assignment:?} outside the file's {lines} lines or out of order: {text:?}"
        );
        last = assignment.line;
    }
}

/// The file the module writes for valid options reads back as exactly its settings, and the
/// same options always give the same bytes (so a second run changes nothing).
pub fn render_invariants(ipv6: bool, rp_filter: &BTreeMap<String, u8>) {
    // The module refuses invalid interface names before it renders anything.
    if rp_filter
        .keys()
        .any(|name| check_interface_name("rp_filter", name).is_err())
    {
        return;
    }
    // The same fuzzed names as forwarding interfaces (their own keys): one more reading back.
    let interfaces: Vec<String> = rp_filter
        .keys()
        .filter(|name| !matches!(name.as_str(), "all" | "default"))
        .cloned()
        .collect();
    // And every name (`all` and `default` too) as a src_valid_mark key.
    let marks: Vec<String> = rp_filter.keys().cloned().collect();
    let settings = desired_settings(ipv6, &interfaces, rp_filter, &marks);
    let text = render(&settings);
    assert_eq!(
        text,
        render(&desired_settings(ipv6, &interfaces, rp_filter, &marks))
    );
    parse_invariants(&text);
    let read: Vec<(Target, Option<String>)> = parse(&text)
        .into_iter()
        .map(|a| (a.target, a.value))
        .collect();
    let written: Vec<(Target, Option<String>)> = settings
        .iter()
        .map(|s| (Target::Key(s.key.clone()), Some(s.value.clone())))
        .collect();
    assert_eq!(
        read, written,
        "the rendered file reads back otherwise:\n{text}"
    );
}

/// Arguments the runtime accepted against the module's spec always become the module's typed
/// `Params` (target `spec_args`).
pub fn typed_arguments(validated: Option<serde_json::Map<String, serde_json::Value>>) {
    let _: Option<(Params, _)> = crate::spec_args::typed(validated);
}
