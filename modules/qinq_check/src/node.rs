//! The node's side: what the checks read beyond the links (bridge VLANs, fdb, each slave's
//! driver and txvlan feature, the bridge's IPv6 switch, the bond's configured slaves from the
//! interfaces file) and the one change the module makes, txvlan switched off on bond slaves.

use crate::guest_ports::{guard_commands, Ruleset};
use crate::interfaces::{configured_slaves, ConfiguredSlaves};
use crate::{Observed, Request, SlaveState, Stack};
use deevnet_runtime::bounded_command::{self, NotFinished};
use deevnet_runtime::file_policy::{self, ProgramRefusal};
use deevnet_runtime::netlink::ethtool::Ethtool;
use deevnet_runtime::netlink::Netlink;
use deevnet_runtime::sysctl::SysctlKey;
use deevnet_runtime::{Context, Failure};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The slaves the interfaces file lists for the bond, read by the file policy: a file another
/// user than root could have written is refused (its names reach a root udev rule); a missing
/// file lists none.
pub fn read_configured_slaves(request: &Request) -> Result<ConfiguredSlaves, Failure> {
    let text = file_policy::read_trusted("interfaces_file", &request.interfaces_file)?;
    Ok(configured_slaves(
        text.as_deref().unwrap_or_default(),
        &request.bond,
        &request.interfaces_file.display().to_string(),
    ))
}

/// Reads what the checks need beyond the links.
pub fn observe(
    netlink: &Netlink,
    ethtool: &mut Ethtool,
    stack: &Stack,
    configured_slaves: Vec<String>,
    read_nftables: bool,
) -> Result<Observed, Failure> {
    let feature = stack.txvlan_feature();
    let mut slaves = BTreeMap::new();
    for (slave, _) in &stack.slaves {
        slaves.insert(
            slave.name.clone(),
            SlaveState {
                driver: ethtool.driver(&slave.name)?,
                feature: ethtool.features(&slave.name)?.get(feature),
                changed: false,
            },
        );
    }
    let disable_ipv6 = SysctlKey::ipv6_conf(&stack.bridge.name, "disable_ipv6");
    Ok(Observed {
        port_vlans: netlink.bridge_vlans()?,
        fdb: netlink.fdb(stack.bridge.index)?,
        slaves,
        bridge_disable_ipv6: disable_ipv6.read()?,
        configured_slaves,
        ruleset: if read_nftables {
            read_ruleset(Path::new(NFT))
        } else {
            Ruleset::default()
        },
        guard_changed: false,
    })
}

/// Debian's (and so Proxmox VE's) nft.
pub const NFT: &str = "/usr/sbin/nft";
/// How long `nft -j list ruleset` may take, and how much it may print.
const NFT_TIME_LIMIT: Duration = Duration::from_secs(10);
const NFT_MAX_OUTPUT: u64 = 16 << 20;

/// The ruleset as `nft -j list ruleset` prints it, with each table's flags as
/// `nft -t list ruleset` prints them ([`Ruleset::from_listings`]). nft is run without a shell and with an
/// empty environment, only when it is root's (the binary and every folder above it owned by
/// root and writable by nobody else: it runs as root), bounded in time and output. nft rather
/// than nftables netlink: the JSON is nft's documented, stable form of the whole ruleset
/// (sets and wildcards resolved), where netlink would need a decoder of nftables expressions
/// that no dependency of this workspace has. Whatever goes wrong is a reason, not a failure:
/// the guest ports then count as not covered by a rule.
pub fn read_ruleset(nft: &Path) -> Ruleset {
    // The text listing only for the tables' flags (see `Ruleset::from_listings`).
    let listings = run_nft(nft, &["-j", "list", "ruleset"])
        .and_then(|json| Ok((json, run_nft(nft, &["-t", "list", "ruleset"])?)));
    match listings {
        Ok((json, text)) => Ruleset::from_listings(&json, &text).unwrap_or_else(|e| {
            Ruleset::NotRead(format!("{} -j list ruleset printed {e}", nft.display()))
        }),
        Err(why) => Ruleset::NotRead(why),
    }
}

/// nft's real path, when it may be run as root (the file policy's rule for a program).
fn trusted_nft(nft: &Path) -> Result<PathBuf, String> {
    file_policy::trusted_program(nft).map_err(|refusal| match refusal {
        ProgramRefusal::Missing => format!(
            "{} is not installed (apt-get install nftables)",
            nft.display()
        ),
        ProgramRefusal::Untrusted(why) => format!(
            "{} is not run: another user than root could have planted it ({why})",
            nft.display()
        ),
        other => format!("{} is not run: {other}", nft.display()),
    })
}

/// Puts the guard's table in place ([`guard_commands`]), in one nft transaction.
pub fn install_guard(nft: &Path) -> Result<(), String> {
    let real = trusted_nft(nft)?;
    let done = bounded_command::run(
        Command::new(&real).arg(guard_commands()).env_clear(),
        NFT_TIME_LIMIT,
        NFT_MAX_OUTPUT,
    )
    .map_err(|e| not_finished(nft, "the guard's table", e))?;
    if !done.status.success() {
        return Err(format!(
            "{} refused the guard's table ({}): {}",
            nft.display(),
            done.status,
            String::from_utf8_lossy(&done.stderr).trim()
        ));
    }
    Ok(())
}

fn not_finished(nft: &Path, what: &str, e: NotFinished) -> String {
    match e {
        NotFinished::Spawn(e) => format!("{} cannot be run: {e}", nft.display()),
        NotFinished::Wait(e) => format!("waiting for {} failed: {e}", nft.display()),
        NotFinished::TimedOut => format!(
            "{} ran for more than {} s on {what} and was stopped",
            nft.display(),
            NFT_TIME_LIMIT.as_secs()
        ),
        NotFinished::OverCap => format!(
            "{} printed more than {NFT_MAX_OUTPUT} bytes on {what} and was stopped",
            nft.display()
        ),
    }
}

fn run_nft(nft: &Path, args: &[&str]) -> Result<String, String> {
    let real = trusted_nft(nft)?;
    let shown = args.join(" ");
    let done = bounded_command::run_stopped_over_cap(
        Command::new(&real).args(args).env_clear(),
        NFT_TIME_LIMIT,
        NFT_MAX_OUTPUT,
    )
    .map_err(|e| not_finished(nft, &shown, e))?;
    if done.over_cap() {
        return Err(format!(
            "{} {shown} printed more than {NFT_MAX_OUTPUT} bytes",
            nft.display()
        ));
    }
    if !done.status.success() {
        return Err(format!(
            "{} {shown} failed ({}): {}",
            nft.display(),
            done.status,
            String::from_utf8_lossy(&done.stderr).trim()
        ));
    }
    String::from_utf8(done.stdout)
        .map_err(|_| format!("{} {shown} printed invalid UTF-8", nft.display()))
}

/// Switches the feature off on each named slave (in check mode, only records that it would)
/// and reads it back: a driver may accept the request and keep the feature on.
pub fn switch_txvlan_off(
    ctx: &Context,
    ethtool: &mut Ethtool,
    stack: &Stack,
    observed: &mut Observed,
    names: &[String],
) -> Result<(), Failure> {
    let feature = stack.txvlan_feature();
    for name in names {
        if !ctx.check_mode {
            ethtool.set_feature(name, feature, false)?;
        }
        let after = if ctx.check_mode {
            let mut predicted = observed.slaves.get(name).map(|s| s.feature);
            if let Some(feature) = predicted.as_mut() {
                feature.active = false;
            }
            predicted
        } else {
            Some(ethtool.features(name)?.get(feature))
        };
        if let (Some(state), Some(after)) = (observed.slaves.get_mut(name), after) {
            state.changed = !after.active;
            state.feature = after;
        }
    }
    Ok(())
}
