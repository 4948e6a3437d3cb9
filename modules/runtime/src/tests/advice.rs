//! The reload advice: the collection file's words, its node filled in, nothing else.

use crate::advice::{reload_interfaces, NODE, THIS_NODE};

#[test]
fn the_advice_is_the_collection_file_with_the_node_filled_in() {
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../collection/plugins/plugin_utils/reload_advice.txt"
    ))
    .unwrap();
    assert_eq!(file.matches(NODE).count(), 1, "{file}");
    assert_eq!(
        reload_interfaces("hv02"),
        file.trim_end().replace(NODE, "hv02")
    );
    let advice = reload_interfaces(THIS_NODE);
    assert!(
        advice.starts_with("first see what a reload of this node's network would change: "),
        "{advice}"
    );
    assert!(!advice.contains(NODE) && !advice.contains('\n'), "{advice}");
}

/// The preview, the refusal and the guarded change, in that order; the only reload it names
/// is the preview.
#[test]
fn the_advice_previews_refuses_stale_entries_and_ends_with_the_guarded_change() {
    let advice = reload_interfaces(THIS_NODE);
    let at = |part: &str| {
        advice
            .find(part)
            .unwrap_or_else(|| panic!("{part} missing: {advice}"))
    };
    let preview = at("`ifquery --check -a`").max(at("`ifreload -a --no-act`"));
    let refusal = at("stale entries");
    let guarded = at("`deevnet.net.fabric_change`");
    assert!(preview < refusal && refusal < guarded, "{advice}");
    assert_eq!(
        advice.matches("ifreload -a").count(),
        advice.matches("ifreload -a --no-act").count(),
        "{advice}"
    );
}
