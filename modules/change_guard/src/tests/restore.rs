use crate::params::Reload;
use crate::restore::reloads_for;
use std::path::PathBuf;

fn reload(paths: &[&str], argv: &[&str]) -> Reload {
    Reload {
        paths: paths.iter().map(PathBuf::from).collect(),
        argv: argv.iter().map(|a| a.to_string()).collect(),
    }
}

#[test]
fn a_restore_runs_the_reloads_whose_paths_hold_a_restored_file_in_order_each_once() {
    let list = [
        reload(&["/etc/network"], &["/usr/sbin/ifup", "vmbr0"]),
        reload(
            &["/etc/frr/frr.conf"],
            &["/usr/bin/systemctl", "reload", "frr"],
        ),
        reload(
            &["/etc/nftables.conf"],
            &["/usr/sbin/nft", "-f", "/etc/nftables.conf"],
        ),
        reload(&["/etc/network/interfaces.d"], &["/usr/sbin/ifup", "vmbr0"]),
    ];
    let restored = [
        PathBuf::from("/etc/network/interfaces.d/vmbr0"),
        PathBuf::from("/etc/frr/frr.conf"),
    ];
    let chosen: Vec<&Vec<String>> = reloads_for(&list, &restored)
        .into_iter()
        .map(|r| &r.argv)
        .collect();
    assert_eq!(chosen, [&list[0].argv, &list[1].argv]);
    // A prefix counts by whole path components: /etc/networking is not under /etc/network.
    assert!(reloads_for(&list, &[PathBuf::from("/etc/networking")]).is_empty());
    assert!(reloads_for(&list, &[]).is_empty());
}
