//! What the checks ask of the node, as a trait: the node's netlink, `/proc/sys` and nft answer
//! it in [`crate::node`], recorded answers in the tests.

use crate::vrf_support::VrfSupport;
use deevnet_runtime::netlink::{Family, Links, Lookup, Route, RouteQuery};
use deevnet_runtime::nft::Ruleset;
use deevnet_runtime::Failure;

/// What the checks ask of the node.
pub trait Kernel {
    fn links(&mut self) -> Result<Links, Failure>;
    /// Every route of one table and family.
    fn routes(&mut self, family: Family, table: u32) -> Result<Vec<Route>, Failure>;
    /// `ip route get`: the output lookup of the destination pinned to `oif` (the VRF device's
    /// ifindex; `None` for the default VRF), or with `iif` the input lookup of a packet
    /// arriving there.
    fn route_get(&mut self, query: &RouteQuery) -> Result<Lookup, Failure>;
    /// The interface's `net.ipv4|ipv6.conf.<dev>.forwarding` (`dev` may be `all`); `None` when
    /// it has none.
    fn forwarding(&mut self, family: Family, dev: &str) -> Result<Option<String>, Failure>;
    /// `net.ipv6.conf.<dev>.force_forwarding` (kernels 6.17 and later); `None` when it has
    /// none.
    fn ipv6_force_forwarding(&mut self, dev: &str) -> Result<Option<String>, Failure>;
    /// `net.ipv4.conf.<dev>.rp_filter` (`dev` may be `all`); `None` when it has none.
    fn rp_filter(&mut self, dev: &str) -> Result<Option<String>, Failure>;
    /// Whether the kernel can have VRFs (asked only when no VRF exists).
    fn vrf_support(&mut self) -> VrfSupport;
    /// The nftables ruleset in force (asked once, when a lookup has `snat_src`); an error says
    /// why it could not be read.
    fn nft_ruleset(&mut self) -> Result<Ruleset, String>;
}
