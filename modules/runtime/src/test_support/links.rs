//! Links as the kernel reports them, for the tests of the checks that read links (feature
//! `netlink`): one named link of a kind, every other field as [`Link::default`] leaves it, to
//! be set with struct update syntax where a test needs it.

use crate::netlink::Link;

/// The link `index`, named `name`, of `kind` (`None` for a NIC or loopback, which have none).
pub fn link(index: u32, name: &str, kind: Option<&str>) -> Link {
    Link {
        index,
        name: name.into(),
        kind: kind.map(str::to_string),
        ..Link::default()
    }
}
