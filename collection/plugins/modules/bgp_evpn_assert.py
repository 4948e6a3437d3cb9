# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/bgp_evpn_assert),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: bgp_evpn_assert
short_description: Asserts FRR's control plane - BGP sessions, address families, the peer AS, defaults, what is advertised, EVPN VNIs and VTEPs
version_added: 0.1.0
description:
  - Reads FRR's state through C(vtysh -c 'show ... json') and asserts what the fabric needs from
    it. Faults that live in FRR rather than in the kernel's routes are named directly - a core
    that announces the node's own base AS, IPv4 never activated on an IPv6-only fabric, host
    routes and the default leaking to the core, a VNI missing on a node.
  - "It runs vtysh directly, without a shell, at most twice per check: once with
    C(show bgp vrf all neighbors json), C(show bgp vrf all summary json),
    C(show evpn vni detail json) and C(show evpn next-hops vni all json) (the BGP commands only
    with O(peers), the EVPN ones only with O(vnis)); and, only when O(peers[].receives_default)
    or O(peers[].advertises=aggregates_only) asks for them, once more with
    C(show bgp vrf VRF FAMILY unicast neighbors PEER routes json) and
    C(... advertised-routes json) for the Established peers and their negotiated families."
  - "For each peer, one finding per difference: the session is not Established (with FRR's
    last notification and reset reason in words; a bad peer AS notification compares the
    AS the peer announced with this node's base AS, e.g. C(the core announces AS 45689, this
    node's base AS: give the core an AS of its own)); a family of
    O(peers[].address_families) not negotiated (with the stanza that activates it); a remote AS
    other than O(peers[].remote_as); no default received from it in a family of
    O(peers[].receives_default); a host route (/32, /128) or a default advertised to it with
    O(peers[].advertises=aggregates_only). For each VNI: absent from FRR's EVPN, or remote VTEPs
    other than O(vnis[].remote_vteps). Each finding names the object, what was expected, what
    FRR reports and the fix; findings fail the task."
  - "Bad input fails before or instead of any check, with a message that names the option, the
    value and the fix: a vtysh that does not exist, is not executable, or could have been
    planted or changed by another user than root (it is then not run); one that does not finish
    within O(timeout) (it is killed), prints more than O(max_output_bytes) (it is killed), exits
    with an error or prints something other than one JSON value per command; a VRF without a
    BGP instance; a peer that is neither a neighbor nor a peer group with members in its VRF."
  - Implemented as a compiled Rust executable; the target needs no Python.
author:
  - deevnet.net maintainers (@deevnet)
options:
  vtysh:
    description:
      - FRR's vtysh. It must be a regular executable file that nobody but root could have
        written, in folders only root can write (a link only when root planted it), since it runs
        as root and what it prints is acted on.
    type: path
    default: /usr/bin/vtysh
  timeout:
    description:
      - Seconds each vtysh run may take (1 to 600). A run still going then is killed and the task
        fails, naming this option.
    type: int
    default: 10
  settle_timeout:
    description:
      - Seconds to keep re-reading FRR, every half second, until every check passes (0 to 600;
        V(0) checks once). For use right after an FRR apply, while sessions come up. An unknown
        VRF or peer, or a vtysh that fails, ends it at once.
    type: int
    default: 0
  max_output_bytes:
    description:
      - The most one vtysh run may print (4096 to 1073741824). Over it the run is killed and the
        task fails, naming this option.
    type: int
    default: 16777216
  fabric_ipv6_only:
    description:
      - The fabric's sessions are IPv6 only (BGP unnumbered or IPv6 addresses). IPv4 unicast not
        activated for a peer is then named as the activation fault of such a fabric (IPv6
        defaults arrive, IPv4 ones do not), with the stanza that fixes it.
    type: bool
    default: false
  peers:
    description:
      - The BGP peers to assert. Each is a neighbor or a peer group; a peer group stands for each
        of its members, and must have at least one.
    type: list
    elements: dict
    default: []
    suboptions:
      peer:
        description:
          - The neighbor as FRR names it - the interface for BGP unnumbered (C(ens19)), the
            address otherwise - or a peer group (C(bgpv6)).
        type: str
        required: true
      vrf:
        description:
          - The VRF of the C(router bgp) instance the peer is configured in.
        type: str
        default: default
      remote_as:
        description:
          - The AS the session must have with the peer (1 to 4294967295). Also compared with this
            node's base AS when the peer is refused for its AS.
        type: int
      address_families:
        description:
          - The families that must be negotiated with the peer, each V(ipv4_unicast),
            V(ipv6_unicast) or V(l2vpn_evpn).
        type: list
        elements: str
        default: []
      receives_default:
        description:
          - The families, each V(ipv4) or V(ipv6), whose default route (C(0.0.0.0/0), C(::/0))
            must be among the routes accepted from the peer.
        type: list
        elements: str
        default: []
      advertises:
        description:
          - What may be advertised to the peer. V(aggregates_only) - no host route (/32, /128)
            and no default, in either family; V(any) - not checked.
        type: str
        choices: [aggregates_only, any]
        default: any
  vnis:
    description:
      - The EVPN VNIs, L2 and L3, that must be present in FRR.
    type: list
    elements: dict
    default: []
    suboptions:
      vni:
        description:
          - The VNI (1 to 16777215).
        type: int
        required: true
      remote_vteps:
        description:
          - Exactly these remote VTEPs, in any order (IPv4 or IPv6 addresses). For an L2 VNI, its
            flood list (C(remoteVteps)); for an L3 VNI, its EVPN next hops. Left out, the VTEPs
            are reported, not checked.
        type: list
        elements: str
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.findings
  - deevnet.net.module.check_mode_findings
  - deevnet.net.module.read_only
notes:
  - Read-only and idempotent; C(changed) is always C(false). vtysh needs root (or the C(frrvty)
    group); run the task with C(become).
  - At least one of O(peers) and O(vnis) must be given.
  - Received routes are read with C(neighbors PEER routes), which needs no soft
    reconfiguration; they are the routes accepted from the peer after inbound policy.
seealso:
  - module: deevnet.net.vrf_route_assert
    description: Where tenant traffic really goes, in the kernel.
  - name: FRR's BGP documentation
    description: Neighbors, address families, local-as, and the show commands' JSON.
    link: https://docs.frrouting.org/en/latest/bgp.html
'''

EXAMPLES = r'''
# An exit node of an IPv6-only fabric: the fabric's peer group, the core in the tenant VRF with
# both defaults received and only aggregates sent, the tenant's VNIs and their VTEPs.
- name: Assert the control plane after the FRR apply
  deevnet.net.bgp_evpn_assert:
    fabric_ipv6_only: true
    settle_timeout: 30
    peers:
      - peer: bgpv6
        address_families: [ipv6_unicast, l2vpn_evpn]
      - peer: 2001:db8:60::1
        vrf: vrf_tdemo
        remote_as: 65100
        address_families: [ipv4_unicast, ipv6_unicast]
        receives_default: [ipv4, ipv6]
        advertises: aggregates_only
    vnis:
      - vni: 10100
        remote_vteps: [fd00:51::22, fd00:51::23]
      - vni: 4001
  become: true

# Only report, never fail.
- name: Read the sessions and VNIs
  deevnet.net.bgp_evpn_assert:
    peers:
      - peer: ens19
    vnis:
      - vni: 10100
  become: true
  register: control_plane
  failed_when: false

# Ad hoc:
#   ansible hv01 -b -m deevnet.net.bgp_evpn_assert -a '{"peers": [{"peer": "bgpv6"}]}'
'''

RETURN = r'''
peers:
  description:
    - Each neighbor the O(peers) entries name (a peer group's members each), as FRR reports it.
  returned: when O(peers) was read
  type: list
  elements: dict
  contains:
    peer:
      description: The neighbor as FRR names it (interface or address).
      type: str
    vrf:
      description: Its VRF.
      type: str
    peer_group:
      description: Its peer group, or C(null).
      type: str
    state:
      description: FRR's session state (C(Established), C(Active), C(Idle), ...).
      type: str
    remote_as:
      description: The peer's AS as FRR has it; C(null) when it has none yet.
      type: int
    local_as:
      description: This node's AS toward the peer (its C(local-as) when set).
      type: int
    address_families:
      description: The families negotiated with it.
      type: list
      elements: str
    last_reset:
      description: FRR's reason for the last reset (C(lastResetDueTo)), or C(null).
      type: str
    last_notification:
      description: The last BGP notification's reason (C(lastNotificationReason)), or C(null).
      type: str
    prefixes_received:
      description: The prefixes accepted from it, per activated family.
      type: dict
    default_received:
      description: Per family (C(ipv4), C(ipv6)), whether the default was received; C(null) for
        a family not in O(peers[].receives_default).
      type: dict
    advertised_host_routes:
      description: The /32 and /128 advertised to it; C(null) unless
        O(peers[].advertises=aggregates_only).
      type: list
      elements: str
    advertised_default:
      description: Whether a default is advertised to it; C(null) unless
        O(peers[].advertises=aggregates_only).
      type: bool
  sample:
    - peer: 2001:db8:60::1
      vrf: vrf_tdemo
      peer_group: null
      state: Established
      remote_as: 65100
      local_as: 65021
      address_families: [ipv4_unicast, ipv6_unicast]
      last_reset: null
      last_notification: null
      prefixes_received: {ipv4_unicast: 2, ipv6_unicast: 1}
      default_received: {ipv4: true, ipv6: true}
      advertised_host_routes: []
      advertised_default: false
vnis:
  description: Each VNI of O(vnis), as FRR reports it.
  returned: when O(vnis) was read
  type: list
  elements: dict
  contains:
    vni:
      description: The VNI.
      type: int
    type:
      description: C(L2) or C(L3); C(null) when FRR does not have the VNI.
      type: str
    vrf:
      description: Its tenant VRF.
      type: str
    remote_vteps:
      description: Its remote VTEPs (an L3 VNI's EVPN next hops).
      type: list
      elements: str
  sample:
    - {vni: 10100, type: L2, vrf: vrf_tdemo, remote_vteps: ["fd00:51::22", "fd00:51::23"]}
findings:
  description:
    - One entry per difference, each with C(object) (the peer or VNI), C(expected), C(found)
      (what FRR reports) and C(fix). The task fails when it is not empty.
  returned: when FRR was read
  type: list
  elements: dict
  sample:
    - object: peer 2001:db8:60::1 in VRF vrf_tdemo
      expected: the session Established
      found: "state Idle; last notification: OPEN Message Error/Bad Peer AS (code/subcode 0202); last reset: BGP Notification send"
      fix: "2001:db8:60::1 announces AS 45689, this node's base AS: give 2001:db8:60::1 an AS of its own"
'''
