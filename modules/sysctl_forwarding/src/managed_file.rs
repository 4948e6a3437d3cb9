//! The settings this module owns and the sysctl.d file that persists them.

use deevnet_runtime::sysctl::SysctlKey;
use std::collections::BTreeMap;

/// One key the module manages, with the value it must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub key: SysctlKey,
    pub value: String,
    /// Per-interface keys: the interface may not exist yet when systemd-sysctl runs at boot
    /// (udev applies them again when it appears), so a failure to set them is not an error.
    pub per_interface: bool,
}

/// What the file holds for the given options: IPv4 forwarding on `all` and `default`, the same
/// for IPv6 when asked, each listed interface's forwarding under its own key, each rp_filter
/// entry, and `src_valid_mark = 1` for each name of `src_valid_mark`.
///
/// The interfaces' own keys are what makes a re-created device forward again without this
/// module: a Proxmox SDN apply's `ifreload -a` deletes and re-creates a VLAN device such as
/// vmbr0.50, and udev runs systemd-sysctl for the new device with its prefix
/// (`--prefix=/net/ipv4/conf/vmbr0.50`), which applies only keys naming it.
pub fn desired_settings(
    ipv6: bool,
    interfaces: &[String],
    rp_filter: &BTreeMap<String, u8>,
    src_valid_mark: &[String],
) -> Vec<Setting> {
    let global = |key: SysctlKey| Setting {
        key,
        value: "1".into(),
        per_interface: false,
    };
    let mut settings = vec![
        global(SysctlKey::ipv4_conf("all", "forwarding")),
        global(SysctlKey::ipv4_conf("default", "forwarding")),
    ];
    if ipv6 {
        settings.push(global(SysctlKey::ipv6_conf("all", "forwarding")));
        settings.push(global(SysctlKey::ipv6_conf("default", "forwarding")));
    }
    for name in interfaces {
        let own = |key: SysctlKey| Setting {
            key,
            value: "1".into(),
            per_interface: true,
        };
        settings.push(own(SysctlKey::ipv4_conf(name, "forwarding")));
        if ipv6 {
            settings.push(own(SysctlKey::ipv6_conf(name, "forwarding")));
        }
    }
    for (target, mode) in rp_filter {
        settings.push(Setting {
            key: SysctlKey::ipv4_conf(target, "rp_filter"),
            value: mode.to_string(),
            per_interface: !is_global_conf(target),
        });
    }
    for target in src_valid_mark {
        settings.push(Setting {
            key: SysctlKey::ipv4_conf(target, SRC_VALID_MARK),
            value: "1".into(),
            per_interface: !is_global_conf(target),
        });
    }
    settings
}

/// The leaf of `net.ipv4.conf.<name>.src_valid_mark`.
pub const SRC_VALID_MARK: &str = "src_valid_mark";

/// An interface name this module can persist: valid to the kernel, and without a character
/// that would change the meaning of its sysctl.d line (a glob character makes systemd-sysctl
/// apply the line to every matching interface; `=` ends the key).
pub fn check_interface_name(parameter: &str, name: &str) -> Result<(), String> {
    deevnet_runtime::ifname::validate(parameter, name)?;
    match name.chars().find(|c| matches!(c, '*' | '?' | '[' | '=')) {
        Some(c) => Err(format!(
            "{parameter}: '{name}' holds '{c}', which a sysctl.d file cannot hold literally (systemd-sysctl reads it as a glob or the end of the key); rename the interface"
        )),
        None => Ok(()),
    }
}

/// `all` and `default` are the kernel's pseudo-interfaces of `net.ipv4.conf`.
pub fn is_global_conf(name: &str) -> bool {
    name == "all" || name == "default"
}

const HEADER: &str = "\
# Managed by Ansible (deevnet.net.sysctl_forwarding): changes made here are overwritten.
#
# A tenant fabric's exit node routes between VRFs and its transit interface, so IPv4
# forwarding must be on. `all` turns it on for the interfaces that exist at boot; `default`
# for those created later, as the SDN's VRF and VNet devices and VLAN devices such as
# vmbr0.50 are. Dots in interface names are written as '/': net.ipv4.conf.vmbr0/50.forwarding.
# A listed interface forwards under its own key too, so that when it is re-created (ifreload -a)
# udev's systemd-sysctl run for it sets forwarding again; `-`: no error while it does not exist.
";

/// Renders the file; the same settings always give the same bytes.
pub fn render(settings: &[Setting]) -> String {
    let mut out = String::from(HEADER);
    let mut commented: Vec<&str> = Vec::new();
    for setting in settings {
        let leaf = setting.key.components().last().map_or("", String::as_str);
        let comment = match leaf {
            "rp_filter" => Some(
                "\n# Reverse-path filtering: the kernel applies the larger of `all` and the interface's\n\
                 # value; a strict filter on a transit interface drops replies to leaked routes.\n",
            ),
            SRC_VALID_MARK => Some(
                "\n# The reverse-path check looks the source up with the packet's mark (`all` or the\n\
                 # interface's value turns it on): policy-routing rules keyed on a mark see it there too.\n",
            ),
            _ => None,
        };
        if let Some(comment) = comment.filter(|_| !commented.contains(&leaf)) {
            out.push_str(comment);
            commented.push(leaf);
        }
        let optional = if setting.per_interface { "-" } else { "" };
        out.push_str(&format!("{optional}{} = {}\n", setting.key, setting.value));
    }
    out
}
