# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/sysctl_forwarding),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: sysctl_forwarding
short_description: IPv4 forwarding for a tenant fabric, persisted, applied and checked at boot
version_added: 0.1.0
description:
  - Owns one sysctl.d file (by default C(/etc/sysctl.d/90-deevnet-tenant-fabric.conf)) that sets
    C(net.ipv4.conf.all.forwarding) and C(net.ipv4.conf.default.forwarding) to 1, with a comment
    saying why. C(all) covers the interfaces that exist at boot, C(default) those created later,
    as Proxmox SDN's VRF and VNet devices are.
  - Makes the listed interfaces forward now, and persists each under its own key. A device created
    after C(all) was set, such as the transit VLAN C(vmbr0.50), comes up with C(forwarding=0), and
    its replies are dropped while the exit node's SNAT counter still climbs; its own key makes it
    forward again when it is re-created (C(ifreload -a)) or the node boots.
  - Interface names with dots work; in sysctl.d syntax their dots are written as C(/)
    (C(net.ipv4.conf.vmbr0/50.rp_filter)), a trap that breaks C(ansible.posix.sysctl).
  - Computes, by systemd-sysctl's rules, which file sets each managed key at boot, and fails
    (or warns, see O(boot_conflict)) when another file would set a different value.
author:
  - deevnet.net maintainers (@deevnet)
options:
  path:
    description:
      - The sysctl.d file this module owns, replaced as a whole. Its folder must exist.
      - With O(state=present) its name must be one systemd-sysctl reads, and it reads only
        C(*.conf) files, not hidden ones, in C(/etc/sysctl.d), C(/run/sysctl.d), C(/usr/local/lib/sysctl.d),
        C(/usr/lib/sysctl.d) and C(/lib/sysctl.d). Any other name (C(90-deevnet-tenant-fabric),
        C(.90-x.conf)) is refused before anything changes, since forwarding would be lost at
        the next boot.
      - Expanded on the target and held to the file policy, as the notes say.
    type: path
    default: /etc/sysctl.d/90-deevnet-tenant-fabric.conf
  state:
    description:
      - V(present) writes the file and applies the values.
      - V(absent) removes the file and changes no runtime value.
    type: str
    choices: [present, absent]
    default: present
  ipv6:
    description:
      - When V(false), IPv6 forwarding is neither enabled nor persisted; its runtime state is
        reported in RV(runtime), with a warning when it is on (an open path with no policy).
      - When V(true), IPv6 forwarding is managed like IPv4, for O(interfaces) too.
    type: bool
    default: false
  ipv6_switch_name:
    description:
      - What the warning about IPv6 forwarding left on with O(ipv6=false) tells the operator to set.
        A role passes the name of its own variable (C(proxmox_node_network_ipv6)), so the warning names
        the switch the operator actually has.
    type: str
    default: ipv6
  interfaces:
    description:
      - Interfaces that must forward now, such as the transit VLAN device C(vmbr0.50).
      - Each is also persisted under its own key in O(path) (C(-net.ipv4.conf.vmbr0/50.forwarding = 1),
        the C(-) because the device may not exist when systemd-sysctl runs at boot). When the device is
        deleted and created again, as C(ifreload -a) does on a Proxmox SDN apply, udev runs
        systemd-sysctl for it and that key makes it forward again without this module.
      - Each name is checked by the kernel's rules (1 to 15 bytes, no C(/), C(:) or whitespace,
        not C(.) or C(..)) before it is used in a path; a missing interface fails the task.
    type: list
    elements: str
    default: []
    aliases: [interface]
  rp_filter:
    description:
      - Reverse-path filter mode per interface (or C(all), C(default)); V(0) off, V(1) strict,
        V(2) loose. Persisted and applied like forwarding.
      - The kernel applies the larger of C(all) and the interface's value, so a lower
        per-interface value has no effect while C(all) is higher; the module warns about that.
    type: dict
    default: {}
  src_valid_mark:
    description:
      - Interfaces (or C(all), C(default)) whose reverse-path check looks the source up with the
        packet's mark, set to 1 (C(net.ipv4.conf.<name>.src_valid_mark)). Persisted and applied like
        forwarding; an interface's key has the leading C(-) and udev applies it when the device appears.
      - The kernel uses the mark when C(all) or the interface's value is 1. A router whose
        policy-routing rules depend on a mark needs it under C(rp_filter) 1 or 2, or the check meets
        those rules without the mark and drops the packet.
      - Names are checked as in O(interfaces); a missing interface fails the task.
    type: list
    elements: str
    default: []
  apply:
    description:
      - Write the runtime values under C(/proc/sys) as well as the file.
      - With V(false) only the file is written, and missing interfaces are not an error.
    type: bool
    default: true
  boot_conflict:
    description:
      - What to do when another file would set a managed key to a different value at boot.
    type: str
    choices: [fail, warn]
    default: fail
  sysctl_dirs:
    description:
      - The folders systemd-sysctl reads, in precedence order (a file name in an earlier folder
        masks the same name in later ones). Change it only to test against another tree.
      - A masked file (a link to C(/dev/null)) counts as empty. A file that is not regular (a FIFO
        does not block the scan) or an untrusted link is left out of the boot check, with a warning.
      - Each folder is expanded on the target as O(path) is.
    type: list
    elements: path
    default: [/etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /lib/sysctl.d]
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.files
attributes:
  check_mode:
    support: full
    description: Reports what would change; neither the file nor C(/proc/sys) is touched.
  diff_mode:
    support: full
    description: Shows the file before and after.
notes:
  - "On the target: Linux hosts with systemd-sysctl (Proxmox VE, Debian)."
  - Idempotent; a second run reports C(changed=false).
seealso:
  - module: ansible.posix.sysctl
    description: One sysctl key in one file; it cannot hold a dotted interface name such as C(vmbr0.50)
      and does not see other files that undo the value at boot.
  - name: sysctl.d(5)
    description: The file format and precedence rules this module follows.
    link: https://www.freedesktop.org/software/systemd/man/latest/sysctl.d.html
'''

EXAMPLES = r'''
- name: Tenant egress needs IPv4 forwarding, on the transit interface now
  deevnet.net.sysctl_forwarding:
    interfaces: [vmbr0.50]

- name: Loose reverse-path filtering on the transit interface as well
  deevnet.net.sysctl_forwarding:
    interfaces: [vmbr0.50]
    rp_filter:
      all: 0
      vmbr0.50: 2

- name: Reverse-path checks with the packet's mark (policy routing by mark under rp_filter)
  deevnet.net.sysctl_forwarding:
    interfaces: [vmbr0.50]
    src_valid_mark: [all]

- name: Persist only; the values apply at the next boot
  deevnet.net.sysctl_forwarding:
    apply: false

# Ad hoc, from the shell:
#   ansible hv02 -b -m deevnet.net.sysctl_forwarding -a 'interfaces=vmbr0.50' --check --diff
'''

RETURN = r'''
path:
  description: The managed file.
  returned: always
  type: str
  sample: /etc/sysctl.d/90-deevnet-tenant-fabric.conf
runtime:
  description:
    - Each runtime key the module manages, with its value before and after the run (after is the
      predicted value in check mode). With O(ipv6=false), C(net.ipv6.conf.all.forwarding) as observed.
    - Keys are in sysctl.d spelling; C(null) means the key does not exist.
  returned: always
  type: dict
  sample: {"net.ipv4.conf.vmbr0/50.forwarding": {"before": "0", "after": "1"}}
interfaces:
  description: Each interface of O(interfaces) with its IPv4 forwarding before and after.
  returned: always
  type: dict
  sample: {"vmbr0.50": {"before": "0", "after": "1"}}
boot:
  description:
    - For each key of the file, the file and line that set it at boot and the value it gets
      (C(null) file when no file sets it). Empty with O(state=absent).
  returned: always
  type: dict
  sample: {"net.ipv4.conf.all.forwarding": {"file": "/etc/sysctl.d/90-deevnet-tenant-fabric.conf", "line": 7, "value": "1"}}
backup_file:
  description: The backup of the previous file.
  returned: when O(backup=true) and the file changed
  type: str
  sample: /etc/sysctl.d/90-deevnet-tenant-fabric.conf.4242.2026-11-30@11:20:00~
msg:
  description: What was done, in one line.
  returned: always
  type: str
  sample: /etc/sysctl.d/90-deevnet-tenant-fabric.conf written; 3 runtime value(s) set
'''
