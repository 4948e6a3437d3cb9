use crate::unit::{glob_matches, includes, reloads_with_nftables, wanted_by};
use std::path::Path;

#[test]
fn the_install_targets_and_the_reload_propagation_are_read() {
    let unit = super::UNIT;
    assert_eq!(wanted_by(unit), ["sysinit.target"]);
    assert!(reloads_with_nftables(unit));
    assert!(!reloads_with_nftables("[Unit]\nPartOf=nftables.service\n"));
}

#[test]
fn nftables_conf_includes_the_file_by_path_or_glob() {
    let path = Path::new("/etc/nftables.d/deevnet-transit-router.nft");
    assert_eq!(
        includes("include \"/etc/nftables.d/*.nft\"\n", path).as_deref(),
        Some("/etc/nftables.d/*.nft")
    );
    assert!(includes(
        "include \"/etc/nftables.d/deevnet-transit-router.nft\"",
        path
    )
    .is_some());
    assert!(includes("include \"/etc/nftables.d/*.conf\"", path).is_none());
    assert!(includes("flush ruleset\n", path).is_none());
    assert!(
        !glob_matches("/etc/*.nft", "/etc/nftables.d/x.nft"),
        "* stops at /"
    );
    assert!(
        !glob_matches("/etc/nftables.d/*", "/etc/nftables.d/.hidden.nft"),
        "dot-files are skipped"
    );
}
