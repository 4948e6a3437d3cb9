# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/qinq_check),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: qinq_check
short_description: Checks that a bonded QinQ uplink keeps both VLAN tags and that every hop fits the MTU
version_added: 0.1.0
description:
  - Proxmox-backed tenant networks carry tenant and transit VLANs as inner tags inside an outer
    VLAN of the node's bonded uplink, C(bond0) -> C(bond0.40) -> C(vmbr1), a VLAN-aware bridge
    with C(bridge-vids 199-299). This module checks that stack over netlink and ethtool's generic
    netlink, reports each check on its own, and fails with one line per failed check.
  - "The stack: the uplink VLAN device (the VLAN device with id O(uplink_vlan) on O(bond)) is up
    and a port of O(bridge); O(bridge) has VLAN filtering on; the uplink port carries every VLAN
    of O(vlans), tagged."
  - "Every bond slave, active and backup, with its driver and role: C(tx-vlan-hw-insert) is off
    (C(tx-vlan-stag-hw-insert) for an 802.1ad outer tag). Some NICs (mlx4_en was seen) overwrite
    the inner tag when they insert the outer one in hardware; the far bridge then learns the
    sender's MAC in VLAN 1 and everything that crosses hosts breaks. A backup slave with it on
    breaks the zone at the next failover."
  - "MTU: the zone MTU the uplink allows (the uplink VLAN device's MTU minus 4, the inner tag
    being payload there) is at least O(zone_mtu); the uplink VLAN device, the bond and its slaves
    carry O(zone_mtu) + 4, the bridge and O(trunk_interfaces) carry O(zone_mtu). The numbers are
    returned in RV(mtu)."
  - "The fingerprint of a lost inner tag: no MAC learned through the uplink port in VLAN 1 (or the
    port's PVID, or without a VLAN) while the zone's VLANs are elsewhere; the MACs are returned in
    RV(fdb_vlan1). Each entry of O(peers) must be learned through the uplink in its own VLAN."
  - IPv6 is disabled on the zone bridge, so that the host has no link-local address on the tenant
    transport.
  - Bad input (a VLAN outside 1-4094, a range written backwards, a bond that is not a bond, an
    uplink VLAN device that does not exist, a O(zone_mtu) above what a hop's driver accepts, an
    interface name the kernel would refuse) fails with a message that says what to fix, before
    anything is changed.
  - Implemented as a compiled Rust executable; the target needs no Python, C(ip), C(bridge) or
    C(ethtool).
author:
  - deevnet.net maintainers (@deevnet)
options:
  bond:
    description:
      - The bond that carries the uplink; its slaves are the NICs whose offloads are checked.
    type: str
    required: true
  uplink_vlan:
    description:
      - The outer VLAN id. The uplink is the VLAN device with this id on O(bond), whatever its
        name (usually C(bond0.40)).
    type: int
    required: true
  bridge:
    description:
      - The zone's VLAN-aware bridge that the uplink VLAN device is a port of.
    type: str
    required: true
  vlans:
    description:
      - The zone's inner VLANs, as in C(bridge-vids) - one VLAN (V(201)) or a range (V(199-299))
        per element; commas and spaces separate more within an element.
      - A range must be written lowest first; each VLAN must be within 1-4094.
    type: list
    elements: str
    required: true
  zone_mtu:
    description:
      - The MTU the zone's guests use, for example V(8996) on a 9000-byte uplink.
      - When not given, the hops are held to what the uplink VLAN device allows (its MTU minus 4).
    type: int
  trunk_interfaces:
    description:
      - Other ports of O(bridge) that must carry the zone (the cluster nodes' trunk NICs). Each
        must be a port of O(bridge), carry every VLAN of O(vlans) tagged, and carry O(zone_mtu).
    type: list
    elements: str
    default: []
  peers:
    description:
      - MACs of the far hosts, each with the inner VLAN it must be learned in through the uplink.
      - A peer learned in VLAN 1 instead sends without its inner tag.
    type: list
    elements: dict
    default: []
    suboptions:
      mac:
        description: The far host's MAC, C(02:00:00:00:02:01) (C(-) separators and upper case
          are accepted).
        type: str
        required: true
      vlan:
        description: The inner VLAN its frames must arrive in.
        type: int
        required: true
  fix_txvlan:
    description:
      - Switch the tag-insertion offload off on every slave that has it on and can switch it.
        RV(changed) says whether it did; the checks then show the state after the change.
      - A slave whose driver has the offload fixed on cannot be fixed; its check fails.
      - Persisting the setting across reboots (a C(post-up ethtool -K ...) line) is the role's
        job, not this module's.
    type: bool
    default: false
  interfaces_file:
    description:
      - The ifupdown2 configuration whose C(iface) stanzas of O(bond) list its configured slaves
        (C(bond-slaves), C(slaves) or C(bond_slaves) lines), returned in RV(configured_slaves) so
        that the rule keeping the offload off also covers a NIC that is configured but not
        enslaved now. C(source)d files are not followed.
      - Read only if nobody but root could have written it (the file and every folder above it
        owned by root, not writable by group or others), since the names end up in a root udev
        rule; otherwise the task fails and nothing is changed. A missing file lists no slave.
      - A listed name with a character other than letters, digits, C(.), C(_) and C(-) (a glob,
        a quote) is left out of RV(configured_slaves), with a warning.
    type: path
    default: /etc/network/interfaces
extends_documentation_fragment:
  - deevnet.net.module
attributes:
  check_mode:
    support: full
    description: With O(fix_txvlan=true), reports which slaves would be switched and checks the
      predicted state; nothing is changed.
  diff_mode:
    support: full
    description: Shows each switched slave's offload before and after.
notes:
  - "On the target: Linux hosts with ethtool netlink (Linux 5.6 or later), such as Proxmox VE 8 and 9."
  - Idempotent; with O(fix_txvlan=true) a second run reports C(changed=false).
  - Read-only unless O(fix_txvlan=true); the checks need root (netlink dumps of the bridge and
    ethtool requests), so run the task with C(become).
  - A failed check fails the task; register the result with C(ignore_errors) to read RV(checks)
    anyway.
seealso:
  - name: Proxmox VE network configuration
    description: VLAN-aware bridges, bonds and MTU on Proxmox VE nodes.
    link: https://pve.proxmox.com/wiki/Network_Configuration
'''

EXAMPLES = r'''
# Every check of the uplink stack at once: bond0.40 on bond0, a port of VLAN-aware vmbr1
# carrying 199-299 tagged, txvlan off on every slave, MTU per hop, no lost inner tags, no
# IPv6 on vmbr1.
- name: Check the QinQ uplink of the Cozystack zone
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
    zone_mtu: 8996
  become: true

# txvlan: the slaves' tag-insertion offload, backups included; switch it off where it is on.
- name: Switch txvlan off on every slave of bond0 (check mode shows which first)
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
    fix_txvlan: true
  become: true

# MTU: a 9000-byte uplink allows a zone MTU of 8996; the trunk NICs must carry it too.
- name: Hold the uplink, the bond, its slaves, vmbr1 and the trunk NICs to the zone MTU
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: [199-249, 250-299]
    zone_mtu: 8996
    trunk_interfaces: [eno2, eno3]
  become: true

# Lost inner tags: the far hosts' MACs must be learned through the uplink in their own VLAN,
# not in VLAN 1.
- name: Check that both neighbours are learned in the transit VLAN
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
    peers:
      - {mac: "bc:24:11:5e:0a:01", vlan: 201}
      - {mac: "bc:24:11:5e:0b:01", vlan: 201}
  become: true

# Reading the report when a check fails.
- name: Check, and keep going to show the report
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
  become: true
  register: qinq
  ignore_errors: true

- name: Show the failed checks
  ansible.builtin.debug:
    msg: "{{ qinq.checks | rejectattr('ok') | map(attribute='name') | list }}"

# Ad hoc, after replacing a NIC of the bond (see what would change, then fix):
#   ansible hv02 -b -m deevnet.net.qinq_check -a 'bond=bond0 uplink_vlan=40 bridge=vmbr1 vlans=199-299 zone_mtu=8996 fix_txvlan=true' --check --diff
#   ansible hv02 -b -m deevnet.net.qinq_check -a 'bond=bond0 uplink_vlan=40 bridge=vmbr1 vlans=199-299 zone_mtu=8996 fix_txvlan=true'
'''

RETURN = r'''
checks:
  description:
    - Each check on its own, in order. C(name) is one of C(uplink_device), C(uplink_bridge_port),
      C(vlan_filtering), C(uplink_vlans), C(bond_slaves), C(txvlan:<slave>), C(zone_mtu) (with
      O(zone_mtu)), C(mtu:<interface>), C(trunk_bridge_port:<trunk>), C(trunk_vlans:<trunk>),
      C(fdb_vlan1), C(peer:<mac>), C(bridge_ipv6).
    - C(fix) says what to do; it is present only on a failed check.
  returned: when the options are valid and the stack exists
  type: list
  elements: dict
  sample:
    - {"name": "txvlan:qinq_b", "ok": false, "expected": "tx-vlan-hw-insert off",
       "actual": "qinq_b (backup, driver mlx4_en): on",
       "fix": "run with fix_txvlan=true, or ethtool -K qinq_b txvlan off (persist it, e.g. in a post-up line)"}
    - {"name": "mtu:vmbr1", "ok": true, "expected": "MTU of vmbr1 (zone bridge) at least 8996 (the zone MTU)",
       "actual": "9000"}
slaves:
  description:
    - Each slave of O(bond) with its driver, its role (C(active), C(backup), or C(null) when the
      bond does not say), the offload checked, whether it is on (after this run), whether it is
      fixed by the driver, and whether this run switched it off (would, in check mode).
  returned: when the options are valid and the stack exists
  type: list
  elements: dict
  sample:
    - {"name": "eno1", "driver": "mlx4_en", "role": "active", "feature": "tx-vlan-hw-insert",
       "enabled": false, "fixed": false, "changed": true}
mtu:
  description:
    - The requested zone MTU (C(null) when not given), what the uplink VLAN device allows the
      zone (its MTU minus 4), and each hop's MTU and the MTU it needs.
  returned: when the options are valid and the stack exists
  type: dict
  sample:
    zone_mtu: 8996
    uplink_allows: 8996
    hops:
      bond0.40: {"role": "uplink VLAN device", "mtu": 9000, "required": 9000}
      bond0: {"role": "bond", "mtu": 9000, "required": 9000}
      vmbr1: {"role": "zone bridge", "mtu": 9000, "required": 8996}
fdb_vlan1:
  description:
    - The MACs learned through the uplink port in VLAN 1, in the port's PVID, or without a VLAN
      (when those are not zone VLANs), each with that VLAN (C(null) for none). Not empty is the
      fingerprint of frames that lost their inner tag on the way.
  returned: when the options are valid and the stack exists
  type: list
  elements: dict
  sample: [{"mac": "bc:24:11:5e:0a:01", "vlan": 1}]
configured_slaves:
  description:
    - The slaves the C(iface) stanzas of O(bond) in O(interfaces_file) list, in file order, each
      once (C(none) is no slave); empty when the file is missing or lists none.
  returned: when the options are valid and the stack exists
  type: list
  elements: str
  sample: [eno1, eno2]
changed:
  description: Whether O(fix_txvlan) switched the offload off on some slave (would, in check mode).
  returned: always
  type: bool
  sample: false
msg:
  description:
    - "On success, a summary. On failure, one line per failed check, C(<name>: expected ...,
      found ...; <fix>), or the one problem with the options."
  returned: always
  type: str
  sample: >-
    mtu:vmbr1: expected MTU of vmbr1 (zone bridge) at least 8996 (the zone MTU), found 8995;
    ip link set vmbr1 mtu 8996 (and mtu in /etc/network/interfaces)
'''
