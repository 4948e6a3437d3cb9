# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/egress_probe),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: egress_probe
short_description: Prove tenant egress and isolation from synthetic workloads plugged into tenants' VNets
version_added: 0.1.0
description:
  - Plugs a synthetic workload into a tenant's VNet for a few seconds, like a VM, and tests
    egress from it. Egress is observed, not inferred - replies must come back into the
    workload, and captures on every other interface of the node show where its packets left.
  - Each target gets O(count) probes (an ICMP echo, a TCP handshake or a DNS query), all targets
    at once, so a run waits at most O(count) x O(timeout) seconds for answers. O(probes) runs one
    workload per tenant in the same run; O(targets[].expect=blocked) proves isolation;
    O(targets[].peer) probes the same tenant's workload on another node across the fabric.
  - The verdict is V(failed) (a target did not answer, or its packets left by the wrong or a
    forbidden interface) or V(inconclusive) (the capture lost frames, so a leak cannot be ruled
    out), and the task fails naming the target and what was seen; else V(passed).
  - Bad input, a missing VRF, VNet or interface and an address in use are refused before anything
    is created. Everything the run creates (a network namespace of its own process, a veth
    pair) goes with it, also on error or C(kill -9); C(changed) is always C(false).
  - "How each part works (the workload, captures, IPv6, isolation, peers, O(start_at), full-size
    probes, cleanup, locking and every refusal): C(docs/egress-probe.md) in the collection, also
    on its docsite."
author:
  - deevnet.net maintainers (@deevnet)
options:
  vrf:
    description:
      - The tenant's VRF device, such as C(vrf_tdemo). Its bridges and their subnets are where
        the workload may plug in.
      - V(default) is the main table, for VNets without a VRF (a Proxmox C(simple) zone).
      - With O(address) and O(targets), a run of one probe; mutually exclusive with
        O(probes). One of the two forms is required.
    type: str
  address:
    description:
      - The workload's IPv4 or IPv6 address with the prefix length of its subnet, such as
        C(10.20.129.250/24) or C(fd00:129::250/64). It must be unused - not configured on the node and not answering
        ARP on the VNet - and inside a subnet the VRF has connected.
    type: str
  targets:
    description:
      - Where to send probes. Only these receive traffic. A host in the VNet's own subnet is
        refused - its answer would not prove egress - unless it is a peer
        (O(targets[].peer)).
      - At most 32, probed at once.
    type: list
    elements: dict
    suboptions: &target_suboptions
      address:
        description:
          - One unicast address of O(address)'s family (no names - the probe must not depend
            on DNS).
        type: str
        required: true
      proto:
        description:
          - V(icmp) sends echo requests; V(tcp) completes a handshake with O(targets[].port);
            V(udp) sends a DNS query to O(targets[].port) and waits for its answer.
        type: str
        choices: [icmp, tcp, udp]
        default: icmp
      port:
        description:
          - The port, required for V(tcp); V(udp) defaults to 53; not allowed for V(icmp).
        type: int
      expect:
        description:
          - V(reply), the target must answer every probe. V(none), a leak probe (toward a
            management address, for instance) - the answer is not judged, only the path of its
            packets. V(blocked), isolation - the target must not answer and its probes must not
            leave the node (see the description).
        type: str
        choices: [reply, none, blocked]
        default: reply
      size:
        description:
          - A full-size probe - an ICMP echo with DF set of this IP packet size in bytes
            (68, 88 in IPv6, up to the VNet's MTU), or V(mtu) for the VNet's MTU. Only for V(icmp) targets with
            O(targets[].expect=reply). It passes on arrival or on fragmentation-needed.
        type: str
      peer:
        description:
          - Another workload of the same proof, on another node, in the workload's own subnet
            (the same tenant's, reached across the fabric) - the one target the VNet's own
            subnet may hold. Only with O(targets[].proto=icmp) and O(targets[].expect=reply),
            and requires O(targets[].via) and O(start_at).
        type: bool
        default: false
      via:
        description:
          - An interface of the node the target's requests must be seen leaving by - for a
            peer, the VNet's VXLAN port (such as C(vxlan_tdemo0)) or a VLAN zone's uplink. The
            target, which must reply, passes only when every probe is answered and its
            requests left by it (for this target it replaces O(expect_egress_interface));
            answered without crossing it, it fails - answered on the node's side of it.
          - Captured whatever it is, a port of the VNet among them; never a default forbidden
            interface, and refused in O(forbidden_interfaces). The VNet itself is refused
            before anything is created. An interface the node does not have (a VNet whose
            VXLAN port is gone) fails its target, naming it, while the other targets run.
        type: str
  probes:
    description:
      - Many probes in one run, all at once, one per tenant; mutually exclusive with O(vrf),
        O(address), O(targets), O(vnet), O(gateway) and O(expect_egress_interface), which
        each entry has for itself. O(count), O(timeout) and O(forbidden_interfaces) are the
        run's.
      - At most 128. Two entries may not share a name or an address.
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - The tenant's name (1 to 64 letters, digits, C(-), C(_), C(.), C(/), such as
            C(tacme/ipv6)); the result is keyed by it and messages name it first.
        type: str
        required: true
      vrf:
        description:
          - As O(vrf), for this probe. Required unless O(probes[].bridge) is given.
        type: str
      bridge:
        description:
          - A VLAN-aware bridge (C(vlan_filtering) on) to plug into instead of a VRF's VNet,
            like a VM's C(tag=N) NIC - the workload's port is an untagged member of
            O(probes[].vlan) only (its PVID), and gets the bridge's MTU. There is no VRF on
            the node then - O(probes[].gateway) is required (the tenant's router, off the
            node), and the address-in-use and gateway ARP checks are asked from inside the
            workload, so a refusal there happens once it exists (and removes it).
          - Refused before anything is created - with O(probes[].vrf) or O(probes[].vnet),
            without O(probes[].vlan) or O(probes[].gateway), a bridge that does not exist, is
            not a bridge or is not VLAN-aware.
        type: str
      vlan:
        description:
          - The VLAN for O(probes[].bridge), 1 to 4094; only with O(probes[].bridge).
        type: int
      vnet:
        description:
          - As O(vnet), for this probe.
        type: str
      address:
        description:
          - As O(address), for this probe.
        type: str
        required: true
      gateway:
        description:
          - As O(gateway), for this probe; required with O(probes[].bridge).
        type: str
      expect_egress_interface:
        description:
          - As O(expect_egress_interface), for this probe.
        type: str
      forbidden_interfaces:
        description:
          - Added to the run's O(forbidden_interfaces) for this probe. Without either, the
            default of O(forbidden_interfaces) applies to it.
        type: list
        elements: str
      targets:
        description:
          - As O(targets), for this probe.
        type: list
        elements: dict
        required: true
        # The same suboptions as O(targets), declared once.
        suboptions: *target_suboptions
  vnet:
    description:
      - The VNet's bridge to plug into. Default - the VRF's bridge whose subnet holds
        O(address).
    type: str
  gateway:
    description:
      - The workload's default gateway. Default - the node's address on O(vnet) in that subnet
        (the VNet's gateway on a Proxmox SDN node).
    type: str
  count:
    description:
      - Probes per target, 1 to 20 (with O(timeout) and the number of O(targets), see there).
    type: int
    default: 3
  timeout:
    description:
      - Seconds to wait for each answer, 1 to 30. A run waits at most about
        O(count) x O(timeout), however many targets it has (they are probed at once).
    type: int
    default: 2
  forbidden_interfaces:
    description:
      - Interfaces no probe packet may leave by. Default - every interface of the main table
        (no VRF) with an address, but C(lo), the VNet and O(expect_egress_interface), so
        the management bridge C(vmbr0) among them.
      - Frames tagged for a VLAN device on top of an interface count for that device, not for
        the interface (capture the VLAN device itself to judge it) - but on a port of a tagged
        workload's bridge (O(probes[].bridge)), frames tagged with its VLAN count for the port.
    type: list
    elements: str
  start_at:
    description:
      - When the run's probing starts, in seconds since the epoch (such as C(1767225600.0));
        every node of a proof gets the same value from the controller. The workloads are set
        up first and wait for it; then every one stays up, answering, until O(start_at) +
        O(count) x O(timeout), also when its own targets are done (see the description).
      - At most 300 seconds after the node's clock; one already past starts the probing at
        once (RV(start_late_secs) says by how much it was late). Required by a peer target
        (O(targets[].peer)), whose workload must be up while this one probes it.
    type: float
  expect_egress_interface:
    description:
      - The transit interface the probes should leave by, such as C(vmbr0.50). Its capture
        tells whether the traffic left and whether replies came back to the node, and each
        answering target's packets must be seen leaving by it (by its O(targets[].via)
        instead, for a target that has one).
      - Without it, each answering target's packets must be seen leaving by some interface
        that is not forbidden (listed in RV(interfaces) with role V(other)).
    type: str
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.check_mode_findings
attributes:
  check_mode:
    support: full
    description: >-
      The probe runs in check mode too. It changes no configuration and leaves nothing behind
      (the workload and its veth exist only during the run), and a probe that did not run
      would prove nothing.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
notes:
  - "On the target: Linux, run as root (it creates a network namespace and a veth pair, opens
    packet captures and raw ICMP sockets)."
  - An IPv4 workload's traffic on the VNet is its ARP for the gateway and the probes; an
    IPv6 one's its DAD solicitation, its neighbor discovery (and MLD reports) and the probes.
  - Fails when the verdict is V(failed); use C(failed_when) or C(ignore_errors) to only report.
  - Probe packets are recognized also after source NAT - by the workload's address, or by the
    run's ICMP echo identifier and the local ports of its TCP and UDP sockets (chosen from
    10000-31999, below the kernel's ephemeral range, before the capture starts).
seealso:
  - module: deevnet.net.vrf_route_assert
    description: Where the kernel routes tenant traffic, without sending any.
  - module: deevnet.net.sysctl_forwarding
    description: Makes the transit interface forward, the fix for replies not forwarded back.
'''

EXAMPLES = r'''
- name: Tenant tdemo reaches the internet by the transit VLAN, and nothing leaks by vmbr0
  deevnet.net.egress_probe:
    vrf: vrf_tdemo
    address: 10.20.129.250/24
    expect_egress_interface: vmbr0.50
    targets:
      - address: 203.0.113.8
      - {address: 203.0.113.8, proto: tcp, port: 443}
      - {address: 203.0.113.8, proto: udp}
      # A leak probe: packets to a management host must not leave by vmbr0.
      - {address: 10.20.99.5, expect: none}

- name: Every tenant of the node at once, each isolated from the others and the management side
  deevnet.net.egress_probe:
    count: 2
    timeout: 1
    probes:
      - name: tdemo
        vrf: vrf_tdemo
        address: 10.20.129.250/24
        expect_egress_interface: vmbr0.50
        targets:
          - address: 203.0.113.8
          - {address: 203.0.113.8, size: mtu}
          - {address: 10.20.130.250, expect: blocked}
          - {address: 10.20.99.5, expect: blocked}
      - name: tother
        vrf: vrf_tother
        address: 10.20.130.250/24
        expect_egress_interface: vmbr0.50
        targets:
          - address: 203.0.113.8
          - {address: 10.20.129.250, expect: blocked}

- name: Tenant tdemo's workload on this node pings its peer on hv02 across the fabric, small and full-size
  deevnet.net.egress_probe:
    count: 3
    timeout: 2
    # The same instant on every node of the proof, from the controller.
    start_at: "{{ fabric_proof_start_at }}"
    probes:
      - name: tdemo
        vrf: vrf_tdemo
        vnet: tdemo0
        address: 10.20.129.250/24
        targets:
          - address: 203.0.113.8
          # hv02's workload of tdemo, in the same subnet, reached by the VNet's VXLAN port.
          - {address: 10.20.129.251, peer: true, via: vxlan_tdemo0}
          - {address: 10.20.129.251, peer: true, via: vxlan_tdemo0, size: mtu}

- name: Report only, in the play's recap
  deevnet.net.egress_probe:
    vrf: vrf_tdemo
    address: 10.20.129.250/24
    targets: [{address: 203.0.113.8}]
  register: egress
  failed_when: false

# Ad hoc, from the shell:
#   ansible hv02 -m deevnet.net.egress_probe -a 'vrf=vrf_tdemo address=10.20.129.250/24 expect_egress_interface=vmbr0.50 targets=[{"address":"203.0.113.8"}]'
'''

RETURN = r'''
verdict:
  description: V(passed), V(failed), or V(inconclusive) (nothing failed, but the capture lost
    frames).
  returned: once the probe ran (also on failure)
  type: str
  sample: failed
capture:
  description:
    - Whether the capture saw everything - C(dropped), the frames the kernel dropped before
      the module read them, and C(overflowed), the interfaces where more probe frames crossed
      than the capture keeps (10,000). Either makes a verdict that would pass V(inconclusive).
  returned: once the probe ran (also on failure)
  type: dict
  sample: {dropped: 0, overflowed: []}
problems:
  description: What failed or left the verdict inconclusive, one line each; empty when the
    verdict is V(passed). With O(probes), each line starts with its probe's name.
  returned: once the probe ran (also on failure)
  type: list
  elements: str
  sample: ["3 tenant packets left by vmbr0 untranslated"]
probes:
  description:
    - Per probe (one entry in the single form too, named by its VRF), in the order given -
      C(name), C(verdict), C(msg) (its findings, the tenant first), where its workload sat
      (C(vrf), C(bridge), C(vlan), C(vnet), C(address), C(gateway), and C(interface), the node
      end of its veth, gone when the task returns), C(interfaces) (as RV(interfaces)) and
      C(targets) - each with the keys of RV(targets) (C(peer) and C(via) among them), its
      C(verdict) (V(passed) or V(failed)) and C(replies) (the answers, as C(received)).
  returned: once the probes ran (also on failure)
  type: list
  elements: dict
  sample:
    - name: tdemo
      verdict: failed
      msg: "tdemo: 10.20.130.250 icmp: answered by 10.20.130.250 (2/2 probes) though it must be blocked: the isolation is missing"
      vrf: vrf_tdemo
      bridge: null
      vlan: null
      vnet: tdemo0
      address: 10.20.129.250/24
      gateway: 10.20.129.1
      interface: dvp4242p0
      interfaces: []
      targets:
        - {address: 10.20.130.250, proto: icmp, port: null, expect: blocked, size: null, verdict: failed,
           sent: 2, received: 2, replies: 2, rtt_ms: {min: 0.1, avg: 0.1, max: 0.1}, error: null,
           left_by: [], passed: false, blocked_by: null, frag_needed_mtu: null, answered_by: 10.20.130.250,
           peer: false, via: null}
workload:
  description: The synthetic workload - C(address), C(vrf), C(vnet), C(gateway) and the node
    end of its veth (C(interface)), which no longer exists when the task returns.
  returned: once the probe ran (also on failure), in the single form
  type: dict
  sample: {address: 10.20.129.250/24, vrf: vrf_tdemo, vnet: tdemo0, gateway: 10.20.129.1, interface: dvprobe4242}
targets:
  description:
    - Per target what the workload saw - probes C(sent) and C(received), C(rtt_ms) (C(min),
      C(avg), C(max); null without answers), the last C(error) (C(no reply), C(refused),
      C(unreachable), ...), the captured interfaces its packets C(left_by), and whether it
      C(passed).
    - C(size) (a full-size probe's size in bytes; V(mtu) reads as the VNet's MTU),
      C(frag_needed_mtu) (the MTU a fragmentation-needed named), C(blocked_by) (how a
      blocked target was blocked, see the description) and C(answered_by) (who answered a
      target that must be blocked); null where they do not apply.
    - C(peer) and C(via), as given (O(targets[].peer), false by default; O(targets[].via), null
      without it).
  returned: once the probe ran (also on failure), in the single form
  type: list
  elements: dict
  sample:
    - {address: 203.0.113.8, proto: icmp, port: null, expect: reply, sent: 3, received: 0,
       rtt_ms: null, error: no reply, left_by: [vmbr0.50], passed: false, size: null,
       blocked_by: null, frag_needed_mtu: null, answered_by: null, peer: false, via: null}
    - {address: 10.20.129.251, proto: icmp, port: null, expect: reply, sent: 3, received: 3,
       rtt_ms: {min: 0.4, avg: 0.5, max: 0.7}, error: null, left_by: [vxlan_tdemo0], passed: true,
       size: null, blocked_by: null, frag_needed_mtu: null, answered_by: null, peer: true,
       via: vxlan_tdemo0}
interfaces:
  description:
    - Per captured interface - its C(role) (V(forbidden), V(egress), or V(other) - another
      interface of the node, listed only when probe packets crossed it), the probe C(packets)
      that left by it, how many of those were C(untranslated) (still the workload's source
      address), C(translated) (all of them were; null when none left), the C(replies) that
      arrived on it, and a C(sample) of up to three probe packets (C(source), C(destination),
      C(protocol), C(direction)).
  returned: once the probe ran (also on failure), in the single form
  type: list
  elements: dict
  sample:
    - {name: vmbr0, role: forbidden, packets: 3, untranslated: 3, translated: false, replies: 0,
       sample: [{source: 10.20.129.250, destination: 10.20.99.5, protocol: icmp, direction: out}]}
start_at:
  description: O(start_at) as given (seconds since the epoch); null without it.
  returned: once the probe ran (also on failure)
  type: float
  sample: 1767225600.0
start_late_secs:
  description: How many seconds after O(start_at) the workloads were ready, so that their
    probing started at once, late; 0 when they waited for it; null without O(start_at).
  returned: once the probe ran (also on failure)
  type: float
  sample: 0.0
msg:
  description: On failure, the problems (or the refusal; with O(probes), one line per probe
    that did not pass, its name first); otherwise a one-line summary.
  returned: always
  type: str
  sample: "egress proven from 10.20.129.250 on tdemo0: 4 targets as expected, no probe packet on vmbr0, vmbr0.51"
'''
