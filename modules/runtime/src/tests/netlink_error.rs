use crate::netlink::error::*;
use netlink_packet_core::ErrorMessage;
use std::num::NonZeroI32;

fn kernel_error(errno: i32) -> rtnetlink::Error {
    let mut message = ErrorMessage::default();
    message.code = NonZeroI32::new(-errno);
    rtnetlink::Error::NetlinkError(message)
}

#[test]
fn permission_errors_say_to_become_root() {
    let error = NetlinkError::from_rtnetlink("dumping links", kernel_error(libc::EPERM));
    assert_eq!(error.errno(), Some(libc::EPERM));
    assert_eq!(
            error.to_string(),
            "dumping links: Operation not permitted (os error 1); permission denied: run the task as root (become: true)"
        );
}

#[test]
fn a_failure_from_a_netlink_error_carries_its_message() {
    let error = NetlinkError::from_rtnetlink("dumping links", kernel_error(libc::EPERM));
    let message = error.to_string();
    let failure: crate::Failure = error.into();
    assert_eq!(failure.msg, message);
    assert!(failure.diff.is_empty() && failure.data.is_empty());
}

#[test]
fn errnos_without_a_known_fix_keep_the_kernels_words() {
    let error = NetlinkError::from_rtnetlink("dumping table 7", kernel_error(libc::ENOENT));
    assert_eq!(error.errno(), Some(libc::ENOENT));
    assert_eq!(
        error.to_string(),
        "dumping table 7: No such file or directory (os error 2)"
    );
}

#[test]
fn io_errors_keep_their_errno() {
    let error = NetlinkError::from_io(
        "opening the rtnetlink socket",
        std::io::Error::from_raw_os_error(libc::EAFNOSUPPORT),
    );
    assert_eq!(error.errno(), Some(libc::EAFNOSUPPORT));
    assert!(error.to_string().ends_with("for that address family"));
    let error = NetlinkError::from_io("x", std::io::Error::other("boom"));
    assert_eq!((error.errno(), error.to_string()), (None, "x: boom".into()));
}
