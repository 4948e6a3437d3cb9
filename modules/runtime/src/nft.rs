//! The house's one nftables reader (feature `nft`): nft run as root only when root owns it,
//! within a time limit and an output cap ([`run`], [`read_ruleset`]); the ruleset it prints,
//! typed ([`Ruleset`], with what only the text listing shows right, [`text`]); each table's
//! flags by one policy ([`flags`]); nft's interface-name
//! patterns ([`ifname`]); IPv4 ranges on `ipnet` with nft's `a-b` form and their union,
//! intersection and difference ([`ranges`]); and one walker of jumps and gotos that reads each
//! chain once ([`walk`]: a chain's [`Outcome`] with a [`Walker`], or a summary of the caller's
//! own with a [`Folder`]).
//!
//! What a rule *means* (which packets it matches, whether an accept lets something through)
//! stays with the module asking: the reader types nft's JSON, the walker follows a rule's step
//! as the module's [`walk::Meaning`] (or [`walk::Fold`]) gives it.
//!
//! nft rather than nftables netlink: the JSON is nft's documented, stable form of the whole
//! ruleset (sets and wildcards resolved), where netlink would need a decoder of nftables
//! expressions that no dependency of this workspace has.

pub mod flags;
pub mod ifname;
pub mod ranges;
mod ruleset;
pub mod text;
pub mod walk;

pub use flags::TableFlags;
pub use ranges::{any_overlap, covered, Range};
pub use ruleset::{
    text as json_text, value_range, BaseChain, Chain, Flowtable, Owner, Rule, Ruleset, Set, Table,
};
pub use walk::{Fault, Fold, Folder, Meaning, Next, Outcome, Step, Unreadable, Walker};

use crate::bounded_command;
use std::path::Path;
use std::time::Duration;

/// Debian's (and so Proxmox VE's and Ubuntu's) nft.
pub const NFT: &str = "/usr/sbin/nft";
/// How long one nft run may take.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);
/// How much one nft run may print (a ruleset that large is no firewall a person reads).
pub const MAX_OUTPUT: u64 = 16 << 20;

/// What `nft ARGS` prints, run through [`bounded_command::trusted_output`] (no shell, an empty
/// environment, only when root owns the binary and every folder above it; 10 s, 16 MiB). Every
/// error names the command; a missing nft names the package that brings it.
pub fn run(nft: &Path, args: &[&str]) -> Result<String, String> {
    run_with_input(nft, args, None)
}

/// [`run`] with `input` on nft's stdin: a ruleset the caller has read and checked, loaded with
/// `nft -f -` so that nft opens no path of its own.
pub fn run_with_input(nft: &Path, args: &[&str], input: Option<&[u8]>) -> Result<String, String> {
    bounded_command::trusted_output_with_input(nft, args, input, TIME_LIMIT, MAX_OUTPUT).map_err(
        |e| {
            if e == format!("{} is not installed", nft.display()) {
                format!("{e} (apt-get install nftables)")
            } else {
                e
            }
        },
    )
}

/// The ruleset in force: `nft -j list ruleset` for everything, and `nft -t list ruleset` for
/// what nft 1.0.6's JSON gets wrong ([`text`]): each table's flags (the policy of [`flags`])
/// and the devices of netdev-hooked chains. An error names the command and what went wrong.
pub fn read_ruleset(nft: &Path) -> Result<Ruleset, String> {
    let json = run(nft, &["-j", "list", "ruleset"])?;
    let text = run(nft, &["-t", "list", "ruleset"])?;
    Ruleset::parse_listings(&json, &text)
        .map_err(|e| format!("{} -j list ruleset printed {e}", nft.display()))
}
