use crate::guest_ports::Ruleset;
use crate::interfaces::ConfiguredSlaves;
use crate::node::*;
use crate::Params;
use crate::Request;
use std::os::unix::fs::PermissionsExt;

fn request(interfaces_file: std::path::PathBuf) -> Request {
    Request::from_params(Params {
        bond: "bond0".into(),
        uplink_vlan: 40,
        bridge: "vmbr1".into(),
        vlans: vec!["199-299".into()],
        interfaces_file,
        ..Params::default()
    })
    .unwrap()
}

/// nft runs only when it is root's; a missing one, one another user could have planted,
/// or one that prints no JSON is a reason, never a run of it.
#[test]
fn nft_is_run_only_when_it_is_roots() {
    if !nix::unistd::geteuid().is_root() {
        return; // ownership can only be given away as root
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let nft = dir.path().join("nft");
    let reason = |ruleset: Ruleset| match ruleset {
        Ruleset::NotRead(why) => why,
        Ruleset::Read(ruleset) => panic!("read: {ruleset:?}"),
    };
    assert!(reason(read_ruleset(&nft)).ends_with("is not installed (apt-get install nftables)"));
    let marker = dir.path().join("ran");
    std::fs::write(
        &nft,
        format!(
            "#!/bin/sh\ntouch {}\necho '{{\"nftables\": []}}'\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&nft, std::fs::Permissions::from_mode(0o755)).unwrap();
    nix::unistd::chown(&nft, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    let why = reason(read_ruleset(&nft));
    assert!(
        why.contains("another user than root could have planted it"),
        "{why}"
    );
    assert!(!marker.exists(), "a planted nft was run");
    nix::unistd::chown(&nft, Some(nix::unistd::Uid::from_raw(0)), None).unwrap();
    assert!(matches!(read_ruleset(&nft), Ruleset::Read(_)));
    assert!(marker.exists());
    std::fs::write(&nft, "#!/bin/sh\necho not json\n").unwrap();
    assert!(reason(read_ruleset(&nft)).contains("printed no JSON ruleset"));
}

/// The configured slaves come from root's file only; a file another user could have
/// written fails the run, naming the option and why; a missing file lists none.
#[test]
fn configured_slaves_are_read_from_roots_file_only() {
    if !nix::unistd::geteuid().is_root() {
        return; // ownership can only be given away as root
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("interfaces");
    let missing = read_configured_slaves(&request(file.clone())).unwrap();
    assert_eq!(missing, ConfiguredSlaves::default());
    std::fs::write(
        &file,
        "iface bond0 inet manual\n\tbond-slaves eno1 eno[2]\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let found = read_configured_slaves(&request(file.clone())).unwrap();
    assert_eq!(found.names, ["eno1"]);
    assert_eq!(found.left_out.len(), 1);
    nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    let refused = read_configured_slaves(&request(file.clone())).unwrap_err();
    assert!(
            refused.msg.starts_with(&format!(
                "interfaces_file={} could have been written by another user than root (the file {} is owned by ",
                file.display(),
                file.display()
            )),
            "{refused}"
        );
}
