# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/frr_local_stanza),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: frr_local_stanza
short_description: FRR stanzas in /etc/frr/frr.conf.local, checked against Proxmox VE's merge
version_added: 0.1.0
description:
  - Manages stanzas (C(vrf ...), C(router bgp ...) with its address-families, C(ip prefix-list ... seq N ...)
    and the other kinds Proxmox recognises) in C(/etc/frr/frr.conf.local), the file Proxmox VE SDN merges
    into the C(/etc/frr/frr.conf) it generates on every apply.
  - The file is read as a tree of contexts by the rules of FRR's C(frr-reload.py). Stanzas the task names
    are written in a portable form (header at column 0, one space per level, C(exit) and
    C( exit-address-family) terminators, router-level lines before the first address-family, no C(!) in a
    command, no C(end), never an empty stanza) that both generations of Proxmox's parser merge correctly.
    Everything else in the file is kept byte for byte, comments and order included.
  - The whole resulting file is linted against Proxmox's merge, in the parser that shipped through PVE 9.1
    (libpve-network-perl 0.7.2 to 1.2.5) and in its 1.3.0 rewrite. Every construct the merge would drop
    without a word, change or break (a top-level C(ip route), a prefix-list entry without C(seq), a line
    holding C(!), an C(exit-vrf) the old parser doubles, an indented terminator, a block left open, a
    C(router bgp) with another ASN, route-map entries Proxmox renumbers, ...) is reported with its line, a
    rule name and what to write instead.
  - A call without O(stanzas) lints the existing file and changes nothing, so
    C(ansible pve -m deevnet.net.frr_local_stanza) is a health check of every node.
  - All tenants of a node go in one call; 500 VRFs are one task.
  - The module writes the file only; Proxmox merges it at the next SDN apply
    (C(pvesh set /cluster/sdn)), and C(pvesh get /cluster/sdn/dry-run --node NODE) previews the result on
    PVE 9.2.
author:
  - deevnet.net maintainers (@deevnet)
options:
  path:
    description:
      - The file to manage. Its folder must exist.
      - Expanded on the target and held to the file policy, as the notes say.
      - A new file is created with mode C(0640), owner root and group C(frr) where that group exists; an
        existing file keeps its mode, owner, group, ACLs and extended attributes.
      - When the last stanza is removed the file is left empty, not deleted; an empty file makes Proxmox
        clear its local config at the next apply, a deleted one may leave the old config in place.
    type: path
    default: /etc/frr/frr.conf.local
  stanzas:
    description:
      - The stanzas to manage, identified by their header (whitespace collapsed, as C(frr-reload.py) does).
        Entries of numbered lists (C(ip prefix-list NAME seq N ...), C(ipv6 prefix-list), C(access-list),
        C(bgp community-list)) are identified by list name and C(seq), so an entry is updated in place.
      - A stanza that appears more than once in the file is joined into its first occurrence.
      - New stanzas go at the end of the file, between C(!) lines; a new list entry goes beside the entries
        of its list, in sequence order.
      - Omit it to lint the file without changing it.
      - Two items with the same header are refused.
    type: list
    elements: dict
    suboptions:
      header:
        description:
          - The stanza's first line, e.g. C(vrf vrf_tdemo), C(router bgp 45689),
            C(router bgp 45689 vrf vrf_evpn), C(ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0).
          - With O(lint=error), a header Proxmox's merge does not recognise as a stanza (a top-level
            C(ip route), a prefix-list without C(seq), C(ip nht ...), C(line vty), ...) is refused, with
            what to write instead.
          - A control character (NUL, ESC, DEL, ...) in a header or a line is refused; a tab is read, and
            written, as a space.
          - One-line stanzas (list entries) take no O(stanzas[].lines) and no O(stanzas[].children).
        type: str
        required: true
      lines:
        description:
          - The body, one command per item, without indentation or terminator.
          - A line holding C(!), C(end), a terminator (C(exit...)), a stanza header or an
            C(address-family) (give it in O(stanzas[].children)) or a control character other than tab is
            refused.
        type: list
        elements: str
        default: []
      children:
        description:
          - Nested stanzas, the C(address-family ...) blocks of a C(router bgp ...) stanza, with the
            options of a stanza except C(children). Proxmox's merge nests no deeper and keeps no other
            nesting, so children elsewhere (under a C(vrf), for instance) are refused.
        type: list
        elements: dict
        default: []
        suboptions:
          header:
            description: C(address-family ipv4 unicast), C(address-family ipv6 unicast), C(address-family l2vpn evpn).
            type: str
            required: true
          lines:
            description: The address-family's body, as O(stanzas[].lines).
            type: list
            elements: str
            default: []
          state:
            description: As O(stanzas[].state), for this address-family.
            type: str
            choices: [present, absent]
            default: present
          mode:
            description: As O(stanzas[].mode), for this address-family.
            type: str
            choices: [exact, merge]
            default: exact
      state:
        description:
          - V(present) writes the stanza; V(absent) removes every occurrence of it.
          - A stanza whose body ends up empty is removed; an empty body with V(present) is refused.
        type: str
        choices: [present, absent]
        default: present
      mode:
        description:
          - V(exact) makes the body exactly O(stanzas[].lines) and the children exactly O(stanzas[].children),
            rewriting the stanza in the portable form.
          - V(merge) adds the lines and children that are missing and removes nothing (children with
            C(state=absent) excepted); a stanza that already holds them is left as written.
        type: str
        choices: [exact, merge]
        default: exact
  lint:
    description:
      - V(error) fails the task when the resulting file holds a construct Proxmox's merge drops, changes or
        breaks, and writes nothing; findings of C(warning) severity are returned as warnings.
      - V(warn) writes the file and returns every finding as a warning.
      - V(off) does not lint.
      - Findings are returned in RV(lint) in every case but V(off).
    type: str
    choices: [error, warn, 'off']
    default: error
  asn:
    description:
      - The ASN of the C(router bgp) Proxmox generates (the EVPN controller's, or the BGP controller's on a
        node that has one).
      - A C(router bgp) stanza with another ASN is refused, in O(stanzas) and in the file, because Proxmox
        would emit a second BGP instance that bgpd rejects.
    type: int
  validate:
    description:
      - A command run on the staged file before it replaces the real one; C(%s) stands for the staged file's
        path. It is split into arguments like a shell would, and run without a shell.
      - Both its exit status and its output count; output holding C(Unknown command), C(Ambiguous command),
        C(Command incomplete), C(early exit) or C(Warning) refuses the file even when the status is 0,
        because C(vtysh) can exit 0 and still print C(Unknown command).
      - With FRR installed, C(vtysh -C -f %s) is a useful value. It checks syntax only, and FRR takes a unique
        abbreviation of a command (C(ip rout) for C(ip route)), so only a misspelling is refused.
      - Run in check mode too (it only reads the staged file, which is staged in a private temporary folder
        there, not beside O(path)); a refusal fails the check run as it would fail the real one.
      - When it ran, C(msg) ends with C(validate accepted the new file).
    type: str
  owner:
    description:
      - Names who writes the stanzas of this call, such as C(deevnet.net.proxmox_node_network). The module
        records in O(owner_record), outside the file, what it added to the file for this owner. A stanza the
        file did not have is the owner's whole; of a stanza the file already had (the operator's), only the
        lines the module added. Declaring the operator's own stanza or line never makes it the owner's.
      - On the next call with the same owner, what the owner added earlier and no longer declares is taken
        back. A stanza held in V(exact) mode is removed whole; from a stanza held in V(merge) mode only the
        owner's lines are removed (others' lines stay; a stanza left empty goes). Stanzas the owner never
        wrote, the operator's own included, are never touched.
      - With O(owner), only stanzas Proxmox's merge recognises may be declared (C(router …), C(vrf …),
        C(interface …), C(route-map NAME permit|deny N), numbered list entries), whatever O(lint) says.
      - No marker lines are written into the file, since Proxmox's merge drops comments inside stanzas
        (see C(docs/proxmox-frr-merge.md) and C(docs/frr-local-ownership.md) in the collection).
      - Check mode and diff mode show the removals (and the record's change) without making them.
      - Unset, nothing is recorded or taken back.
    type: str
  owner_record:
    description:
      - The JSON file that records, per file and per O(owner), what the module added for each owner. Read
        and replaced by the same file policy and atomic replacement as O(path), with its own lock; made
        C(0600), its folder C(0700) when missing (in a real run). Read only with O(owner).
      - Trusted only when nobody but root could have written it, since it decides what is deleted; the
        record and every folder above it must be root's and not writable by group or others (a sticky
        folder excepted), else the task fails naming the culprit. Its entries must be stanzas the module
        writes for an owner; a record naming C(hostname …) or C(line vty) is refused. Error messages give
        the place of a fault in the record, never its content.
      - Must not be O(path) itself (nor a link to it); that is refused naming both.
      - Capped at 4 MiB (about 20,000 stanzas of one line); a larger record, or a run that would make it
        larger, fails before anything is written.
      - While the file is being replaced, the new claims are recorded as pending on that write, tied to
        the file's content before and after it; a later run trusts them only if the file is what the
        write produced, so a run killed (or a disk full) between the writes never leaves a claim on a
        stanza the file never got, nor loses one it did.
    type: path
    default: /var/lib/deevnet.net/frr-local-owners.json
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.files
attributes:
  check_mode:
    support: full
    description: Computes, lints, validates (O(validate)) and reports what would change; the file is not touched.
  diff_mode:
    support: full
    description: Shows the file before and after (and the owner record's change, with O(owner)).
notes:
  - "On the target: Proxmox VE nodes with SDN (any FRR host for the file itself)."
  - Idempotent; a second run reports C(changed=false).
  - Secrets the task, the file or the owner record hold (BGP C(password), OSPF, IS-IS and RIP keys, key-chain
    C(key-string)) are shown as C(********) in every message, lint finding, warning, diff and result key,
    with or without C(no_log).
  - The rules follow how Proxmox's C(append_local_config) really merges the file (libpve-network-perl 0.7.2
    to 1.3.0). PVE 9.2 ships a newer libpve-network-perl whose code was not available; compare
    C(/usr/share/perl5/PVE/Network/SDN/Frr.pm) on such a node.
seealso:
  - name: FRR frr-reload.py
    description: How FRR reads a configuration into contexts.
    link: https://docs.frrouting.org/en/latest/setup.html
'''

EXAMPLES = r'''
- name: Tenant default route leaked to the default VRF, peer-group activated, default VRF imported
  deevnet.net.frr_local_stanza:
    asn: 45689
    stanzas:
      # Use case 1: the tenant VRF's default route, resolved in the default VRF.
      - header: vrf vrf_tdemo
        lines:
          - ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default
      # Use case 2: activate a peer-group for IPv4 unicast in the default instance.
      - header: router bgp 45689
        children:
          - header: address-family ipv4 unicast
            lines:
              - neighbor VTEP activate
      # Use case 3: import the default VRF into the EVPN tenant VRF.
      - header: router bgp 45689 vrf vrf_evpn
        children:
          - header: address-family ipv4 unicast
            lines:
              - import vrf default
      - header: ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0
      - header: ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31
    validate: vtysh -C -f %s
  register: frr_local

- name: Apply SDN when a stanza changed, so Proxmox merges the file into frr.conf
  ansible.builtin.command: pvesh set /cluster/sdn
  when: frr_local.changed

- name: One task for every tenant VRF of the node
  deevnet.net.frr_local_stanza:
    stanzas: "{{ tenants | map('extract', tenant_routes) | list }}"
  vars:
    tenants: [tdemo, tblue]
    tenant_routes:
      tdemo: {header: vrf vrf_tdemo, lines: ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}
      tblue: {header: vrf vrf_tblue, lines: ["ip route 0.0.0.0/0 10.20.60.1 nexthop-vrf default"]}

- name: Add a line to a stanza someone else also edits, removing nothing
  deevnet.net.frr_local_stanza:
    stanzas:
      - header: router bgp 45689 vrf vrf_evpn
        mode: merge
        children:
          - header: address-family ipv4 unicast
            mode: merge
            lines: [import vrf default]

- name: Remove a tenant
  deevnet.net.frr_local_stanza:
    stanzas:
      - header: vrf vrf_tdemo
        state: absent

# Health check of every node, from the shell:
#   ansible pve -b -m deevnet.net.frr_local_stanza -a path=/etc/frr/frr.conf.local
# Preview first:
#   ansible-playbook site.yml --check --diff
'''

RETURN = r'''
stanzas:
  description:
    - Each header of O(stanzas) with what happened to it.
    - With O(owner), also each stanza the owner wrote earlier and no longer declares (V(removed), or
      V(updated) when only its lines were taken back).
  returned: always
  type: dict
  sample: {"vrf vrf_tdemo": "added", "router bgp 45689": "unchanged", "vrf vrf_old": "removed"}
lint:
  description:
    - Every finding in the resulting file (the existing file for a health check); empty with O(lint=off).
    - Also returned when the task fails on findings.
  returned: always
  type: list
  elements: dict
  contains:
    line:
      description: The 1-based line number in the resulting file.
      type: int
    severity:
      description: C(error) (Proxmox's merge drops, changes or breaks it) or C(warning).
      type: str
    rule:
      description: The rule's short name, e.g. C(top-level-route), C(exit-vrf), C(unterminated-block).
      type: str
    msg:
      description: What goes wrong and what to write instead.
      type: str
    generations:
      description: The Proxmox parser generations affected, C(1.2.x) (through PVE 9.1) and C(1.3.0).
      type: list
      elements: str
  sample: [{"line": 7, "severity": "error", "rule": "exit-vrf", "generations": ["1.2.x"],
            "msg": "`exit-vrf` is kept as a body line by the parser that shipped through PVE 9.1 ...; write `exit` at column 0 instead"}]
backup_file:
  description: The backup of the previous file.
  returned: when O(backup=true) and the file changed
  type: str
  sample: /etc/frr/frr.conf.local.4242.2026-11-30@11:20:00~
msg:
  description: What was done, in one line.
  returned: always
  type: str
  sample: 3 added, 2 unchanged; lint clean
'''
