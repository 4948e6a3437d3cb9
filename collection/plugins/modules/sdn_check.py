# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/sdn_check),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: sdn_check
short_description: Reads a Proxmox VE node's SDN intent from the cluster's configuration and reports its drift
version_added: 0.1.0
description:
  - Proxmox VE's SDN already holds what a tenant network is made of - zones, their VRFs, which
    node is an exit node, VNets, subnets and gateways. This module reads it for one node, by the
    rules of Proxmox's own generator (pve-network; the rules in the project's words are
    docs/proxmox-sdn.md in the repository), and reports it in RV(zones) and RV(tenants).
  - "What it reads: the applied configuration O(running_config) (JSON: C(version), C(zones),
    C(vnets), C(subnets), C(controllers) and, on Proxmox VE 9, C(fabrics)); the section-config
    files in O(config_dir) (C(zones.cfg), C(vnets.cfg), C(subnets.cfg), C(controllers.cfg),
    C(fabrics.cfg)), for changes not applied yet; the C(#version:N) line of O(interfaces_sdn),
    the version this node generated its network from; and the node's own addresses in
    O(interfaces), among which Proxmox picks the local VTEP."
  - "What it derives for the node: the zones that apply to it (a zone's C(nodes) restricts it);
    for EVPN zones the VRF C(vrf_<zone>), the L3VNI (C(vrf-vxlan)) with its VXLAN device
    C(vrfvx_<zone>) and bridge C(vrfbr_<zone>), whether the node is an exit node (C(exitnodes)),
    the primary exit node, local routing; for VXLAN and EVPN zones the local VTEP (a controller
    peer that is one of the node's addresses, the address of the BGP or IS-IS controller's
    loopback for the node, or the node's C(ip) in the controller's fabric) and the MTU (the
    zone's C(mtu), else the VTEP interface's MTU minus 50, else 1450); the VNets with their VNI
    or VLAN tag and subnets."
  - "Drift, each a finding with the object, what Proxmox declares, what the node has and the fix:
    an SDN object whose C(.cfg) section differs from the running configuration (pending, fix:
    C(pvesh set /cluster/sdn)); a node whose O(interfaces_sdn) is older than the running
    configuration, or missing while zones apply (fix: the collection's one advice for a reload:
    C(ifquery --check -a) and C(ifreload -a --no-act) to see what a reload would change, no reload
    that would touch stale entries, then the guarded change, the playbook
    C(deevnet.net.fabric_change)); and, with O(kernel=true),
    what the kernel has that differs (VRFs, VXLAN devices, bridges, addresses, the unreachable
    catch-all, MTUs), and what it has but cannot use (a device administratively down, a gateway
    address whose duplicate address detection failed). Drift fails the task unless O(drift=warn)."
  - Every file is read through the collection's file policy as another tool's file - a regular
    file that nobody but root could have written, a link only when root planted it - and is at
    most 4 MiB. A missing, unreadable, malformed, oversized or untrusted file fails the task with
    its path and what is wrong. A zone type or key the module does not know is reported in
    RV(skipped_config) and as a warning, and skipped. It never changes anything.
  - Implemented as a compiled Rust executable; the target needs no Python or C(pvesh).
author:
  - deevnet.net maintainers (@deevnet)
options:
  node:
    description:
      - The node whose intent is read, as Proxmox names it (C(pvecm nodes)); by default this
        host's short name.
      - A name that is neither this host nor named anywhere in the SDN configuration (a zone's
        C(nodes), C(exitnodes) or C(exitnodes-primary), a fabric node, a BGP or IS-IS
        controller's C(node)) fails the task, naming it.
    type: str
  running_config:
    description:
      - The applied SDN configuration, which C(pvesh set /cluster/sdn) writes. It must exist - when it (or
        its folder) does not, the task fails with RV(sdn_applied=false), naming the fixes - apply the SDN in
        Proxmox, or do not read it on a node without Proxmox's SDN (C(/etc/pve) is Proxmox's cluster file
        system - its folders are never created by hand).
    type: path
    default: /etc/pve/sdn/.running-config
  config_dir:
    description:
      - The folder of the SDN's section-config files. A missing file holds no object of its kind.
    type: path
    default: /etc/pve/sdn
  interfaces_sdn:
    description:
      - The file the node generated from the running configuration; its first line is
        C(#version:N). When it does not exist, C(version.applied) is C(null).
    type: path
    default: /etc/network/interfaces.d/sdn
  interfaces:
    description:
      - The node's own network configuration; its C(address) lines (CIDR, or address with
        C(netmask)) and C(mtu) lines per C(iface) pick the local VTEP and its MTU. C(source)d
        files are not followed, as Proxmox's generator does not follow them (each C(source) line
        is reported in RV(skipped_config), except the C(source /etc/network/interfaces.d/*) every
        Proxmox node has). It must exist.
    type: path
    default: /etc/network/interfaces
  kernel:
    description:
      - Compare the intent with what the kernel has, over netlink. V(false) returns the intent
        and the file drift only.
    type: bool
    default: true
  drift:
    description:
      - What drift does to the task. V(fail) fails it, naming every finding; V(warn) returns
        each finding as a warning and succeeds.
    type: str
    choices: [fail, warn]
    default: fail
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.read_only
notes:
  - Read-only and idempotent; RV(changed) is always C(false).
  - Reading C(/etc/pve) and netlink needs root; run the task with C(become).
  - A VTEP Proxmox would find only by routing (no peer is one of the node's addresses) is not
    guessed; C(zones[].vtep) is then C(null) and RV(skipped_config) says why.
seealso:
  - name: Proxmox VE Software-Defined Network
    description: Zones, VNets, subnets, controllers and fabrics.
    link: https://pve.proxmox.com/pve-docs/chapter-pvesdn.html
'''

EXAMPLES = r'''
# The node's intent and drift: fails when SDN changes are not applied, the node has not
# reloaded, or the kernel differs.
- name: Check this node's SDN
  deevnet.net.sdn_check: {}
  become: true
  register: sdn

- name: The tenants the cluster declares for this node
  ansible.builtin.debug:
    msg: "{{ sdn.tenants | map(attribute='name') | list }}"

# Report drift without failing, and read the files of another node's view.
- name: Report SDN drift as warnings
  deevnet.net.sdn_check:
    node: hv02
    drift: warn
  become: true

# Only the intent and the file drift, without the kernel comparison.
- name: Read the intent from the files
  deevnet.net.sdn_check:
    kernel: false
  become: true

# Ad hoc:
#   ansible hv02 -b -m deevnet.net.sdn_check
#   ansible hv02 -b -m deevnet.net.sdn_check -a 'kernel=false drift=warn'
'''

RETURN = r'''
sdn_applied:
  description:
    - Whether the SDN's running configuration (O(running_config)) exists. V(false) only on the failure
      that says it does not - no SDN was ever applied on the cluster, or this is not a Proxmox VE node -
      so a caller can tell that case from any other failure (the role
      P(deevnet.net.proxmox_node_network#role) then plans from the inventory alone, with a warning).
  returned: when the files were read, and when the running configuration does not exist
  type: bool
  sample: true
node:
  description: The node the intent is for (O(node), or this host's short name).
  returned: when the files were read
  type: str
  sample: hv02
version:
  description:
    - C(running), the version of the running configuration; C(applied), the C(#version:N) of
      O(interfaces_sdn) (C(null) when the file does not exist).
  returned: when the files were read
  type: dict
  sample: {"running": 7, "applied": 7}
pending:
  description:
    - Each SDN object whose C(.cfg) section differs from the running configuration -
      C(kind) (C(zone), C(vnet), C(subnet), C(controller), C(fabric)), C(id), C(change)
      (C(added), C(removed), C(changed)). Each is also a finding in RV(drift).
  returned: when the files were read
  type: list
  elements: dict
  sample: [{"kind": "zone", "id": "tdemo2", "change": "added"}]
zones:
  description:
    - Each zone that applies to the node, by name. C(type) is C(simple), C(vlan), C(qinq),
      C(vxlan) or C(evpn). C(vrf), C(l3vni), C(l3vni_vxlan), C(l3vni_bridge),
      C(primary_exit_node) are C(null) and C(exit_node), C(local_routing) false unless EVPN.
      C(vtep) and C(vxlan_port) are set for VXLAN and EVPN zones (C(vtep) C(null) when not
      found). C(mtu) is C(null) when a VLAN, QinQ or simple zone sets none. C(generated) is
      false for a zone without a VNet, for which Proxmox makes no device.
    - "Each of C(vnets): C(name) (also its bridge's), C(vni) (VXLAN, EVPN), C(vlan) (VLAN,
      QinQ), C(vlan_aware), C(vxlan_device) (C(vxlan_<vnet>)), C(mtu), and C(subnets) with
      C(cidr), C(gateway) (C(null) where Proxmox puts no gateway on the node: VLAN, QinQ and
      VXLAN zones) and C(snat)."
  returned: when the files were read
  type: list
  elements: dict
  sample:
    - name: tdemo
      type: evpn
      vrf: vrf_tdemo
      l3vni: 10000
      l3vni_vxlan: vrfvx_tdemo
      l3vni_bridge: vrfbr_tdemo
      exit_node: true
      primary_exit_node: null
      local_routing: false
      vtep: 10.20.51.22
      vxlan_port: null
      mtu: 1450
      generated: true
      vnets:
        - {name: tdemo0, vni: 11000, vlan: null, vlan_aware: false, vxlan_device: vxlan_tdemo0,
           mtu: 1450, subnets: [{cidr: 10.20.129.0/24, gateway: 10.20.129.1, snat: true}]}
tenants:
  description:
    - One per EVPN zone that applies to the node, in the shape of the role's tenants - C(name)
      (the zone), C(vrf), C(l3vni_bridge), C(exit_node).
  returned: when the files were read
  type: list
  elements: dict
  sample: [{"name": "tdemo", "vrf": "vrf_tdemo", "l3vni_bridge": "vrfbr_tdemo", "exit_node": true}]
drift:
  description:
    - Every finding - pending changes, a node not reloaded, then the kernel's - each with
      C(object), C(declared) (what Proxmox declares), C(found) (what the node has), C(fix) and
      C(awaits_reload).
    - C(awaits_reload) is true when only this node's reload is missing - the node applied an
      older SDN version than the cluster runs, and the finding is that, or a device the running
      version declares that the node's generated file (O(interfaces_sdn)) does not. A device
      that file declares too is drift the node had before any new version - C(awaits_reload)
      false.
  returned: when the files were read
  type: list
  elements: dict
  sample:
    - {"object": "vrfvx_tdemo", "declared": "local 2001:db8:51::22 (IPv6)", "found": "local 10.20.51.22 (IPv4)",
       "fix": "re-create it: first see what a reload of this node's network would change: `ifquery --check -a`
         (where the interfaces differ from the files) and `ifreload -a --no-act` (what it would run); if
         it would touch stale entries (interfaces outside the change), do not reload; otherwise reload as
         a guarded change: the playbook `deevnet.net.fabric_change` (canary first, rolled back on a
         regression)", "awaits_reload": false}
kernel:
  description: Whether the kernel was compared (O(kernel)).
  returned: when the files were read
  type: bool
  sample: true
skipped_config:
  description:
    - What the module did not know and skipped (a zone type, a key, a C(source) line of
      O(interfaces), a VTEP not found), each also a warning. (Not C(skipped), which Ansible
      reads as a skipped task.)
  returned: when the files were read
  type: list
  elements: str
  sample: ["zone z9: type 'foo' is not one sdn_check knows; skipped"]
changed:
  description: Always C(false); the module changes nothing.
  returned: always
  type: bool
  sample: false
msg:
  description:
    - "On success, a summary. With drift and O(drift=fail), one line per finding, C(<object>:
      declared ..., found ...; <fix>). Otherwise the one problem with the options or a file."
  returned: always
  type: str
  sample: "node hv02: 2 zone(s), 2 tenant(s), SDN version 7; 0 drift finding(s); files and kernel compared"
'''
