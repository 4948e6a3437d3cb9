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
short_description: Checks that a QinQ uplink (bonded or single-NIC) keeps both VLAN tags and that every hop fits the MTU
version_added: 0.1.0
description:
  - Proxmox-backed tenant networks carry tenant and transit VLANs as inner tags inside an outer
    VLAN of the node's bonded uplink, C(bond0) -> C(bond0.40) -> C(vmbr1), a VLAN-aware bridge
    with C(bridge-vids 199-299); on a small cluster the uplink may sit on a single NIC instead,
    C(eno1) -> C(eno1.40) -> C(vmbr1). This module checks that stack over netlink and ethtool's generic
    netlink, reports each check on its own, and fails with one line per failed check.
  - "The stack: the uplink VLAN device (the VLAN device with id O(uplink_vlan) on O(bond)) is up
    and a port of O(bridge); O(bridge) has VLAN filtering on; the uplink port carries every VLAN
    of O(vlans), tagged."
  - "Every bond slave, active and backup, with its driver and role (or the single NIC): C(tx-vlan-hw-insert) is off
    (C(tx-vlan-stag-hw-insert) for an 802.1ad outer tag). Some NICs (mlx4_en was seen) overwrite
    the inner tag when they insert the outer one in hardware; the far bridge then learns the
    sender's MAC in VLAN 1 and everything that crosses hosts breaks. A backup slave with it on
    breaks the zone at the next failover."
  - "MTU: the zone MTU the uplink allows (the uplink VLAN device's MTU minus 4, the inner tag
    being payload there) is at least O(zone_mtu); the uplink VLAN device, the bond and its slaves
    (or the single NIC) carry O(zone_mtu) + 4, the bridge and O(trunk_interfaces) carry O(zone_mtu). The numbers are
    returned in RV(mtu)."
  - "Guests at the zone's MTU: every guest port of O(bridge) - a VM's C(tap<vmid>i<n>), a
    container's C(veth<vmid>i<n>), the firewall's C(fwpr<vmid>p<n>) and C(fwln<vmid>i<n>) -
    whose MTU differs from the zone's (O(zone_mtu), or when not given the bridge's own MTU) is a
    failed check C(guest_mtu:<port>) naming the port, the VM or container id, its NIC, its MTU
    and the zone's. Proxmox VE sets a guest port's MTU when the guest starts, so a guest started
    before the zone's MTU changed keeps the old one. The fix is Proxmox's - the NIC's C(mtu=)
    (C(qm set <vmid> --net<n> ...,mtu=<zone>), or C(mtu=1) to follow the bridge when the bridge
    is at the zone's MTU; C(pct set) for a container), then a restart of the guest. The findings
    and their count are returned in RV(guest_mtu); the count is in the message."
  - "The fingerprint of a lost inner tag: no MAC learned through the uplink port in VLAN 1 (or the
    port's PVID, or without a VLAN) while the zone's VLANs are elsewhere; the MACs are returned in
    RV(fdb_vlan1). Each entry of O(peers) must be learned through the uplink in its own VLAN."
  - IPv6 is disabled on the zone bridge, so that the host has no link-local address on the tenant
    transport.
  - "Guests kept off the uplink (read only): a guest NIC on a bridge that enslaves the uplink's
    parent (C(vmbr0) over C(bond0), or over C(eno1)) is a trunk onto the wire, on which the guest
    can set the outer tag itself and reach the zone bridge of every host with any inner tag. Each
    guest port of that bridge - a VM's C(tap<vmid>i<n>), a container's C(veth<vmid>i<n>), the
    firewall's C(fwpr<vmid>p<n>) and C(fwln<vmid>i<n>) - is a finding (RV(guest_ports), naming
    the bridge, the port, the VM id and the fix) unless the bridge filters VLANs with the
    uplink's tag protocol and the port carries none of the host's VLANs (O(uplink_vlan) and
    every VLAN device on the parent or on that bridge), or a bridge-family nftables rule in a
    prerouting or forward base chain drops both 802.1Q and 802.1ad frames arriving on it. O(guest_ports) says what a finding
    does to the run."
  - "The ruleset is read with C(/usr/sbin/nft -j list ruleset), run without a shell and with an
    empty environment, at most 10 seconds and 16 MiB of output, and only when the binary and
    every folder above it are root's and writable by nobody else; it is read only when the
    bridge has a guest port. A rule counts only when every match in it is an input interface
    name (wildcards included), input bridge name or ether type match and it ends in C(drop), and
    no earlier rule of its chain that may match the port ends in another verdict; anything else
    leaves the port counted (the audit may ask for a rule that is not needed, but does not miss
    a hole). When nft is missing or not trusted, every guest port counts and the finding says
    why."
  - Bad input (a VLAN outside 1-4094, a range written backwards, a O(bond) that is neither a bond nor a NIC, an
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
      - The device that carries the uplink VLAN device - a bond (its slaves, active and backup,
        are the NICs whose offloads are checked), or a single NIC (C(eno1) under C(eno1.40);
        that NIC's offload is checked, and it needs O(zone_mtu) + 4 like a bond slave).
      - A device of another kind (a bridge, a VLAN device) is refused. A veth counts as a NIC
        (the lab's stand-in).
    aliases: [parent]
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
      - When not given, the hops are held to what the uplink VLAN device allows (its MTU minus 4),
        and the guest ports of O(bridge) to the bridge's own MTU.
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
      - Switch the tag-insertion offload off on every slave (or the single NIC) that has it on and
        can switch it.
        RV(changed) says whether it did; the checks then show the state after the change.
      - A slave whose driver has the offload fixed on cannot be fixed; its check fails.
      - "Persisting the setting across reboots is the role's job, not this module's: the role
        C(deevnet.net.proxmox_node_network) with C(--tags qinq-uplink) and C(fix_txvlan: true)
        writes the udev rule C(/etc/udev/rules.d/70-deevnet-qinq-txvlan-off.rules)."
    type: bool
    default: false
  guest_ports:
    description:
      - What a guest port that can send 802.1Q/802.1ad frames onto the uplink does to the run.
      - V(fail) (the default) - each is a failed check C(guest_port:<port>). A guest that can
        tag onto the uplink breaks the isolation of every tenant of the zone, on every host, so
        the demanding default is to stop; a node whose guests are trusted sets V(warn).
      - V(warn) - each is a warning and in RV(guest_ports); the run does not fail on them.
      - V(ignore) - the bridge and the ruleset are not read; RV(guest_ports) is empty.
      - The fix each finding gives is bridge-family nftables rules that drop both tag types
        from every guest port by name pattern (C(tap*), C(veth*), C(fwpr*), C(fwln*)) - guests
        that send tagged frames on purpose (a VM NIC with C(trunks)) lose that - or making the
        bridge VLAN-aware with C(bridge-vids) that exclude the host's VLANs.
    type: str
    choices: [fail, warn, ignore]
    default: fail
  guest_vlan_guard:
    description:
      - Put in place, now, the bridge-family nftables table C(deevnet_guest_vlan) whose rules
        drop 802.1Q and 802.1ad frames arriving on any guest port by name pattern, one pattern
        and one tag type per rule (C(iifname "tap*" ether type 8021q drop),
        C(iifname "tap*" ether type 8021ad drop), and the same for C(veth*), C(fwpr*) and
        C(fwln*), in a prerouting chain at priority -300), so that ports added later are covered
        too. Guests that send tagged frames on purpose (a VM NIC with C(trunks)) lose that.
      - No set of names - nft 1.0.6 lists a set element C("tap\*") (the literal name C(tap*))
        as C("tap*"), so the audit never counts a set element that may be a literal star as
        keeping a port off, and a guard written with a set is not recognised.
      - Idempotent - nothing is done when the table is there as the guard makes it (one chain,
        its eight rules, dropping both types from every pattern); otherwise the table of that
        name is replaced whole, in one nft transaction, and read back. No other table is
        touched.
      - Needs nft (C(/usr/sbin/nft), root's); without it the task fails and nothing changes.
      - This puts the guard in the running kernel only; persisting it for boot is the role's job
        (C(guest_vlan_guard) of C(deevnet.net.proxmox_node_network)'s QinQ uplink, a systemd unit
        that loads C(commands) of RV(guest_vlan_guard)).
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
      predicted state; with O(guest_vlan_guard=true), whether the guard would be put in place,
      and the guest ports audited as if it were; nothing is changed.
  diff_mode:
    support: full
    description: Shows each switched slave's offload before and after, and the guard's table
      before (absent, or not the guard's rule alone) and after.
notes:
  - "On the target: Linux hosts with ethtool netlink (Linux 5.6 or later), such as Proxmox VE 8 and 9."
  - Idempotent; with O(fix_txvlan=true) or O(guest_vlan_guard=true) a second run reports
    C(changed=false).
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

# A single-NIC uplink (eno1 -> eno1.40 -> vmbr1): the NIC's offload and MTU are checked.
- name: Check a small cluster's uplink on one NIC
  deevnet.net.qinq_check:
    parent: eno1
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
    zone_mtu: 1496
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

# Guests kept off the uplink: the audit of vmbr0 over bond0, and the guard put in place now.
- name: Drop guests' 802.1Q/802.1ad frames (check mode shows whether it would)
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
    guest_ports: fail
    guest_vlan_guard: true
  become: true

# Guests at the zone's MTU: after raising the zone's MTU, list the VMs and containers whose
# ports on vmbr1 kept the old one (each with its qm set / pct set fix).
- name: Find guests started before the zone's MTU changed
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
    zone_mtu: 8950
  become: true
  register: qinq_mtu
  ignore_errors: true

- name: Show them
  ansible.builtin.debug:
    msg: "{{ qinq_mtu.guest_mtu.ports | map(attribute='port') | list }}"

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
      C(vlan_filtering), C(uplink_vlans), C(bond_slaves) (a bond only), C(txvlan:<slave>), C(zone_mtu) (with
      O(zone_mtu)), C(mtu:<interface>), C(trunk_bridge_port:<trunk>), C(trunk_vlans:<trunk>),
      C(fdb_vlan1), C(peer:<mac>), C(bridge_ipv6), C(guest_port:<port>) (each exposed guest
      port, with O(guest_ports=fail)), C(guest_mtu:<port>) (each guest port of O(bridge) not at
      the zone's MTU), C(guest_mtu) (only when O(bridge) has guest ports and neither O(zone_mtu)
      nor the bridge gives an MTU to compare them with).
    - C(fix) says what to do; it is present only on a failed check. A fix makes the change now
      and says where it persists (the interface's stanza in C(/etc/network/interfaces), the
      role's udev rule or sysctl.d file); it brings up only the interfaces concerned
      (C(ifup bond0 bond0.40)) and never reloads the whole network configuration.
  returned: when the options are valid and the stack exists
  type: list
  elements: dict
  sample:
    - {"name": "txvlan:qinq_b", "ok": false, "expected": "tx-vlan-hw-insert off",
       "actual": "qinq_b (backup, driver mlx4_en): on",
       "fix": "switch it off and keep it off: the role proxmox_node_network with --tags qinq-uplink
               and fix_txvlan: true (it writes the udev rule /etc/udev/rules.d/70-deevnet-qinq-txvlan-off.rules);
               now only: this module with fix_txvlan=true, or ethtool -K qinq_b tx-vlan-hw-insert off"}
    - {"name": "mtu:vmbr1", "ok": true, "expected": "MTU of vmbr1 (zone bridge) at least 8996 (the zone MTU)",
       "actual": "9000"}
slaves:
  description:
    - Each slave of O(bond) (or the single NIC) with its driver, its role (C(active), C(backup),
      or C(null) for a single NIC or when the bond does not say), the offload checked, whether it is on (after this run), whether it is
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
      zone (its MTU minus 4), and each hop's role (C(uplink VLAN device), C(bond), C(bond slave),
      C(uplink NIC) for a single NIC, C(zone bridge), C(trunk)), MTU and the MTU it needs.
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
guest_ports:
  description:
    - Each guest port that can send 802.1Q/802.1ad frames onto the uplink (empty with
      O(guest_ports=ignore), or when the uplink's parent is a port of no bridge) - the bridge,
      the port, its C(kind) (C(tap), C(veth), C(fwpr), C(fwln)), the VM or container id
      C(vmid), why VLAN filtering does not keep it off (C(vlans)), why no nftables rule does
      (C(nftables)), and the C(fix).
  returned: when the options are valid and the stack exists
  type: list
  elements: dict
  sample:
    - {"bridge": "vmbr0", "port": "tap100i0", "kind": "tap", "vmid": 100,
       "vlans": "vmbr0 does not filter VLANs",
       "nftables": "no bridge-family nftables rule drops 802.1Q or 802.1ad frames from it",
       "fix": "drop guests' 802.1Q and 802.1ad frames with bridge-family nftables rules loaded at boot ..."}
guest_vlan_guard:
  description:
    - C(requested) (O(guest_vlan_guard) was set), C(present) (the guard's table is in place after
      this run, as the guard makes it and in force, not dormant; in check mode, would be),
      C(not_in_force) (why it is not - absent, dormant, changed - with the fix; null when it is),
      C(changed) (this run put it in place, or would), and C(commands), what nft runs to put it in place (the role persists the
      same for boot).
  returned: when the options are valid and the stack exists
  type: dict
  sample:
    requested: true
    present: true
    not_in_force: null
    changed: true
    commands: >-
      add table bridge deevnet_guest_vlan; delete table bridge deevnet_guest_vlan; table bridge
      deevnet_guest_vlan { chain prerouting { type filter hook prerouting priority -300; iifname
      "tap*" ether type 8021q drop; iifname "tap*" ether type 8021ad drop; iifname "veth*" ether
      type 8021q drop; iifname "veth*" ether type 8021ad drop; iifname "fwpr*" ether type 8021q
      drop; iifname "fwpr*" ether type 8021ad drop; iifname "fwln*" ether type 8021q drop;
      iifname "fwln*" ether type 8021ad drop; }; }
guest_mtu:
  description:
    - The guest ports of O(bridge) held to the zone's MTU - C(bridge), C(zone_mtu) (the MTU they
      are held to, C(null) when unknown), C(zone_mtu_from) (C(zone_mtu), the option, or
      C(bridge), the bridge's own MTU), C(checked) (how many guest ports the bridge has),
      C(count) (how many differ) and C(ports), each that differs - its C(port), C(kind)
      (C(tap), C(veth), C(fwpr), C(fwln)), the VM or container id C(vmid), its NIC C(nic)
      (C(net<nic>) in the guest's configuration), its C(mtu) (C(null) when not reported) and the
      C(fix).
  returned: when the options are valid and the stack exists
  type: dict
  sample:
    bridge: vmbr1
    zone_mtu: 8950
    zone_mtu_from: bridge
    checked: 2
    count: 1
    ports:
      - {"port": "tap100i0", "kind": "tap", "vmid": 100, "nic": 0, "mtu": 1500,
         "fix": "set VM 100's NIC to the zone's MTU and start it again: qm set 100 --net0
                 <model>=<mac>,bridge=vmbr1,...,mtu=8950 (net0's other settings as qm config 100
                 shows them, or mtu=1 to follow the bridge), then qm reboot 100; a running guest
                 keeps the MTU Proxmox gave its ports when it started"}
changed:
  description: Whether O(fix_txvlan) switched the offload off on some slave or O(guest_vlan_guard)
    put the guard in place (would, in check mode).
  returned: always
  type: bool
  sample: false
msg:
  description:
    - "On success, a summary, ending with the count of guest ports of O(bridge) at the zone's MTU.
      On failure, one line per failed check, C(<name>: expected ..., found ...; <fix>), then,
      when guest ports of O(bridge) are not at the zone's MTU, a line with their count and names;
      or the one problem with the options."
  returned: always
  type: str
  sample: >-
    mtu:vmbr1: expected MTU of vmbr1 (zone bridge) at least 8996 (the zone MTU), found 8995;
    ip link set vmbr1 mtu 8996 now, and mtu 8996 in vmbr1's stanza in /etc/network/interfaces
'''
