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

use crate::unit::{dropin_folders, dropin_names, effective_dropins, merge, DropIn};
use std::path::PathBuf;

fn dropin(path: &str, text: &str) -> DropIn {
    DropIn {
        path: path.into(),
        text: Ok(text.into()),
    }
}

/// TR9: a drop-in that empties `ReloadPropagatedFrom=` and replaces `ExecStart=` is judged on the
/// merged unit: the reload is gone, and what the unit runs is not the unit file's.
#[test]
fn a_dropin_that_empties_the_reload_and_replaces_execstart_is_named() {
    let hostile = dropin(
        "/etc/systemd/system/deevnet-transit-router.service.d/override.conf",
        "[Unit]\nReloadPropagatedFrom=\n[Service]\nExecStart=\nExecStart=/bin/true\n",
    );
    let merged = merge(super::UNIT, std::slice::from_ref(&hostile));
    assert!(!merged.reloads_with_nftables());
    assert_eq!(
        merged.unjudged,
        [
            "/etc/systemd/system/deevnet-transit-router.service.d/override.conf sets ExecStart=",
            "/etc/systemd/system/deevnet-transit-router.service.d/override.conf sets ExecStart="
        ]
    );
    let mut observed = super::enforced();
    observed.unit.dropins = vec![hostile];
    let report = crate::evaluate(&super::request(), &observed);
    assert_eq!(report.violations, ["reload_survival"]);
    // Emptying the reload alone fails too, on the merged value.
    observed.unit.dropins = vec![dropin(
        "/run/systemd/system/x.service.d/a.conf",
        "[Unit]\nReloadPropagatedFrom=\n",
    )];
    let report = crate::evaluate(&super::request(), &observed);
    let check = report
        .checks
        .iter()
        .find(|c| c.name == "reload_survival")
        .expect("reported");
    assert!(!check.ok);
    assert!(
        check
            .message
            .contains("with its drop-ins lacks ReloadPropagatedFrom=nftables.service"),
        "{}",
        check.message
    );
}

/// TR9, must not pass the other way: a drop-in that adds an unrelated setting, or sets the
/// reload again after emptying it, keeps the unit reloading with nftables.service.
#[test]
fn a_harmless_dropin_and_a_reset_then_set_reload_pass() {
    let merged = merge(
        "[Unit]\nDescription=x\n",
        &[
            dropin("/a/10-nice.conf", "[Service]\nNice=5\n"),
            dropin(
                "/a/20-reload.conf",
                "[Unit]\nReloadPropagatedFrom=\nReloadPropagatedFrom=nftables.service\n",
            ),
        ],
    );
    assert!(merged.reloads_with_nftables());
    assert!(merged.unjudged.is_empty());
    let mut observed = super::enforced();
    observed.unit.dropins = vec![dropin("/a/10-nice.conf", "# comment\n[Service]\nNice=5\n")];
    assert!(crate::evaluate(&super::request(), &observed)
        .violations
        .is_empty());
    let unread = DropIn {
        path: "/a/x.conf".into(),
        text: Err("owned by another user".into()),
    };
    assert_eq!(
        merge(super::UNIT, &[unread]).unjudged,
        ["/a/x.conf is not read: owned by another user"]
    );
}

/// TR9: systemd's drop-in folders: the type's, each dashed prefix's and the unit's own, in every
/// unit folder, the unit's own folder first; a file name found first masks the same name later,
/// and they apply sorted by name.
#[test]
fn dropins_are_found_where_systemd_reads_them_and_ordered_as_it_applies_them() {
    assert_eq!(
        dropin_names("deevnet-transit-router.service"),
        [
            "service.d",
            "deevnet-.service.d",
            "deevnet-transit-.service.d",
            "deevnet-transit-router.service.d"
        ]
    );
    let folders = dropin_folders(Path::new("/tmp/x/a.service"));
    assert_eq!(folders[0], PathBuf::from("/tmp/x/service.d"));
    assert!(folders.contains(&PathBuf::from("/run/systemd/system/a.service.d")));
    let from_etc = dropin_folders(Path::new("/etc/systemd/system/a.service"));
    assert_eq!(
        from_etc[0],
        PathBuf::from("/etc/systemd/system.control/service.d")
    );
    let found: Vec<PathBuf> = [
        "/etc/systemd/system/a.service.d/20-b.conf",
        "/etc/systemd/system/a.service.d/readme.txt",
        "/run/systemd/system/a.service.d/10-a.conf",
        "/usr/lib/systemd/system/a.service.d/20-b.conf",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    assert_eq!(
        effective_dropins(&found),
        [
            PathBuf::from("/run/systemd/system/a.service.d/10-a.conf"),
            PathBuf::from("/etc/systemd/system/a.service.d/20-b.conf")
        ]
    );
}

/// TR9: a unit of the same name in a folder systemd reads first stands in the unit's place.
#[test]
fn a_unit_shadowed_by_an_earlier_folder_is_named() {
    let mut observed = super::enforced();
    observed.unit.shadowed_by =
        vec!["/run/systemd/transient/deevnet-transit-router.service".into()];
    let report = crate::evaluate(&super::request(), &observed);
    assert_eq!(report.violations, ["reload_survival"]);
}
