//! Invariants of `qinq_check`'s nftables audit over the runtime's reader (`parse_listings`, the
//! guard's state and the guest-port audit's rule reading), shared by the libFuzzer target `nft_ruleset` and the
//! stable smoke test (`modules/fuzz_invariants/tests/it/qinq_check.rs`).

use crate::input::{split_at_nul, Input};
use deevnet_runtime::nft::{self, flags};
use qinq_check::guest_ports::{Ruleset, GUARD_TABLE};
use serde_json::Value;

/// nft's two listings, read as qinq_check reads them.
fn from_listings(json: &str, text: &str) -> Result<Ruleset, String> {
    nft::Ruleset::parse_listings(json, text).map(Ruleset::Read)
}

/// The flags the text listing gives the guard's table, and whether it lists it.
fn guard_flags_in_text(text: &str) -> Option<Vec<String>> {
    flags::in_text(text)
        .into_iter()
        .find(|(owner, _)| owner.family == "bridge" && owner.table == GUARD_TABLE)
        .map(|(_, flags)| flags)
}

/// Ports and bridges the audit is asked about: each guest kind, a plain port, odd names.
const PORTS: [&str; 6] = [
    "tap100i0",
    "veth101i1",
    "fwpr102p0",
    "fwln103i0",
    "eno1",
    "*",
];
const BRIDGES: [&str; 3] = ["vmbr0", "br0", ""];

/// Target `nft_ruleset`: `JSON \0 TEXT \0 DECISIONS` (`nft -j list ruleset`, `nft -t list
/// ruleset`). The reader takes any text without panicking and answers the same twice; a ruleset
/// whose every table is dormant keeps no port off and has no guard; the guard with a piece of
/// its table taken out, or set dormant, is not installed; check mode's prediction always is.
pub fn check_bytes(data: &[u8]) {
    let (json, rest) = split_at_nul(data);
    let (text, decisions) = split_at_nul(rest);
    let json = String::from_utf8_lossy(json);
    let text = String::from_utf8_lossy(text);
    let mut input = Input::new(decisions);
    let port = *input.pick(&PORTS);
    let bridge = *input.pick(&BRIDGES);

    let read = from_listings(&json, &text);
    let again = from_listings(&json, &text);
    assert_eq!(
        format!("{read:?}"),
        format!("{again:?}"),
        "the reader is not deterministic\n{json}\n{text}"
    );
    let Ok(ruleset) = read else {
        return;
    };
    let state = ruleset.guard_state();
    assert_eq!(
        state,
        ruleset.guard_state(),
        "guard_state is not deterministic"
    );
    if let Err(why) = &state {
        assert!(!why.is_empty(), "an empty reason for a guard not in force");
    }
    let kept_off = ruleset.drops_vlan_frames_from(port, bridge);
    if let Err(why) = &kept_off {
        assert!(!why.is_empty(), "an empty reason for {port} on {bridge}");
    }
    // Installed means the text lists the guard's table, and not as dormant.
    if state.is_ok() {
        let flags = guard_flags_in_text(&text);
        assert!(
            flags.is_some(),
            "the guard is installed but the text does not list its table\n{text}"
        );
        assert!(
            !flags.unwrap_or_default().iter().any(|f| f == "dormant"),
            "a dormant guard is installed\n{json}\n{text}"
        );
    }

    // Every table dormant: nothing is in force.
    let all_dormant = every_table_dormant(&text);
    if let Ok(dormant) = from_listings(&json, &all_dormant) {
        assert!(
            !dormant.guard_installed(),
            "a dormant guard is installed\n{json}\n{all_dormant}"
        );
        assert!(
            dormant.drops_vlan_frames_from(port, bridge).is_err(),
            "a dormant ruleset keeps {port} on {bridge} off\n{json}\n{all_dormant}"
        );
    }

    // A piece of the guard's table taken out (a partial listing) is not the guard.
    if let Ruleset::Read(read) = &ruleset {
        let items = &read.objects;
        if !items.is_empty() {
            let gone = input.below(items.len());
            let mut partial = items.clone();
            let removed = partial.remove(gone);
            // Only a piece of which the listing holds no other copy, or one of the rules of the
            // guard in place (it has as many rules as the guard makes, so one fewer is not it).
            let kind = guard_piece_kind(&removed);
            let sole = !partial.iter().any(|item| guard_piece_kind(item) == kind);
            if kind.is_some() && (sole || (kind == Some("rule") && state.is_ok())) {
                let listing = serde_json::json!({ "nftables": partial }).to_string();
                let partial = from_listings(&listing, &text).expect("a listing of objects parses");
                assert!(
                    !partial.guard_installed(),
                    "the guard without {} is installed\n{json}\n{text}",
                    removed
                );
            }
        }
    }

    // Check mode's prediction is the guard, whatever was there.
    assert!(
        ruleset.with_guard().guard_installed(),
        "the predicted guard is not installed\n{json}\n{text}"
    );
}

/// `text` with `flags dormant` under every table header.
fn every_table_dormant(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("table ") {
            out.push_str("\tflags dormant\n");
        }
    }
    out
}

/// Whether `item` is the guard's table, a chain or a rule of it, and which.
fn guard_piece_kind(item: &Value) -> Option<&'static str> {
    ["table", "chain", "rule"].into_iter().find(|kind| {
        item.get(kind).is_some_and(|o| {
            o.get("family").and_then(Value::as_str) == Some("bridge")
                && o.get(if *kind == "table" { "name" } else { "table" })
                    .and_then(Value::as_str)
                    == Some(GUARD_TABLE)
        })
    })
}
