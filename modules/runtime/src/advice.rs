//! The advice for reloading a node's interfaces: the one text every fix that reloads gives.
//!
//! Its words live in the collection, `collection/plugins/plugin_utils/reload_advice.txt`, which
//! the Python filters read too (`plugin_utils/reload_advice.py`), so a module's fix and a
//! filter's say the same. The Cozystack guide warns against a bare reload of every interface on
//! a host whose interfaces file has stale entries: the advice shows first what the reload would
//! change (ifupdown2's `ifquery --check -a` and `ifreload -a --no-act`), refuses stale entries,
//! and ends with the guarded change, the playbook `deevnet.net.fabric_change`.

/// The advice with its placeholder [`NODE`], as the file holds it.
const TEMPLATE: &str = include_str!("../../../collection/plugins/plugin_utils/reload_advice.txt");

/// The file's one placeholder: the node whose network would be reloaded.
pub const NODE: &str = "{node}";

/// What a module running on the node calls it.
pub const THIS_NODE: &str = "this node";

/// The advice for reloading `node`'s interfaces ([`THIS_NODE`] from a module on the node), to
/// follow a fix's own words (`re-create it: <advice>`).
pub fn reload_interfaces(node: &str) -> String {
    TEMPLATE.trim_end().replace(NODE, node)
}
