//! The unit tests, one file per module of the crate (`netlink_bridge` for `netlink::bridge`),
//! each reaching its module's items through `crate::<module>`.

mod advice;
mod atomic_file;
mod bounded_command;
mod file_policy;
mod findings;
mod ifname;
#[cfg(feature = "netlink")]
mod netlink;
#[cfg(feature = "netlink")]
mod netlink_bridge;
#[cfg(feature = "netlink")]
mod netlink_error;
#[cfg(feature = "ethtool")]
mod netlink_ethtool;
#[cfg(feature = "nft")]
mod nft;
#[cfg(feature = "nft")]
mod nft_ifname;
#[cfg(feature = "nft")]
mod nft_ranges;
#[cfg(feature = "nft")]
mod nft_walk;
mod protocol;
mod spec;
mod sysctl;
