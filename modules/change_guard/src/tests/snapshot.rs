use crate::snapshot::{collect, differs, entry_of, plan, Action, Current, Manifest};
use std::fs;

fn file(bytes: &str, mode: u32) -> Current {
    Current::File {
        bytes: bytes.as_bytes().to_vec(),
        mode,
        uid: 0,
        gid: 0,
    }
}

#[test]
fn a_file_differs_by_content_mode_owner_kind_or_existence() {
    let entry = entry_of("/x".as_ref(), &file("a", 0o644), Some("files/0".into()));
    assert!(!differs(&entry, &file("a", 0o644)));
    assert!(differs(&entry, &file("b", 0o644)));
    assert!(differs(&entry, &file("a", 0o600)));
    assert!(differs(&entry, &Current::Absent));
    let link = Current::Link {
        target: "a".into(),
        uid: 0,
        gid: 0,
    };
    assert!(differs(&entry, &link));
    let absent = entry_of("/x".as_ref(), &Current::Absent, None);
    assert!(!differs(&absent, &Current::Absent));
    assert!(differs(&absent, &file("", 0o644)));
    assert!(!differs(&entry_of("/l".as_ref(), &link, None), &link));
}

#[test]
fn the_walk_refuses_a_fifo_naming_it_and_a_restore_removes_what_a_folder_gained() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("d");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("a"), "a").unwrap();
    let found = collect(std::slice::from_ref(&folder)).unwrap();
    assert_eq!(found.folders, std::slice::from_ref(&folder));
    let manifest = Manifest {
        paths: vec![folder.clone()],
        folders: found.folders,
        files: found
            .files
            .iter()
            .map(|(p, c)| entry_of(p, c, Some("files/0".into())))
            .collect(),
    };
    assert_eq!(plan(&manifest).unwrap(), []);
    fs::write(folder.join("b"), "b").unwrap();
    fs::write(folder.join("a"), "changed").unwrap();
    assert_eq!(
        plan(&manifest).unwrap(),
        [
            Action::Put(manifest.files[0].clone()),
            Action::Remove(folder.join("b"))
        ]
    );
    nix::unistd::mkfifo(
        &folder.join("p"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let Err(msg) = collect(std::slice::from_ref(&folder)) else {
        panic!("a FIFO was taken")
    };
    assert!(
        msg.contains(&folder.join("p").display().to_string()) && msg.contains("a FIFO"),
        "{msg}"
    );
}
