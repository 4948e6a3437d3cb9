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
    workload, and captures on the node's other interfaces show where its packets left. A
    rising SNAT counter is no proof of egress; route lookups (M(deevnet.net.vrf_route_assert))
    show where the kernel would send a packet, not that replies come back.
  - The workload is a network namespace of the module's own process, with a veth pair whose
    node end (C(dvprobe<pid>)) is attached to the VNet's bridge as a VM's tap is. Inside it
    has O(address) and a default route via O(gateway). For an IPv4 address IPv6 is off in it
    and on its tap, so the workload sends nothing but the probes and one ARP request for its
    gateway, from which the node learns its new MAC (and an EVPN zone its address). An IPv4
    gateway's MAC is pinned
    (a permanent neighbour entry) - the VNet bridge's own for a gateway of the node's, else the
    MAC that answered the ARP check - a host on the VNet answering ARP in the gateway's name
    cannot become the workload's router and pass some probes while dropping others.
  - "IPv6 - O(address) and the targets may be IPv6 (one family per probe; a dual-stack tenant
    is two probes). The workload then has IPv6 on but learns nothing from routers (no router
    advertisements, autoconf or solicitations) and has no link-local address; neighbor
    discovery replaces ARP, and the address-in-use check is the workload's own duplicate
    address detection (one neighbor solicitation, within 4 seconds; an address another host
    holds is refused and the workload removed). A gateway that is not the node's is not
    checked beforehand in IPv6. Probes are ICMPv6 echoes, TCP handshakes and DNS queries;
    captures recognize IPv6 packets (without extension headers) also after NPTv6 or SNAT66, by
    the echo identifier and ports."
  - One packet capture (AF_PACKET) on every interface of the node starts before the first
    probe - O(forbidden_interfaces), O(expect_egress_interface) and every other interface a
    packet could leave by (not C(lo), the VNet, its ports or the workload's own veth; a workload
    on a VLAN-aware bridge, O(probes[].bridge), has its router off the node, so there the
    bridge's other ports are watched, and a frame tagged with the workload's VLAN counts on
    them as the workload's - a trunk toward its router carries it tagged). A filter
    in the kernel passes only what can be the probe's, and a frame counts only once recognized
    as one of the probe's packets, so other traffic, however much, neither fills the capture
    nor hides a leak. Each target gets O(count) probes - an ICMP echo, a completed TCP
    handshake, or a DNS query (C(. IN NS)) answered - each waiting at most O(timeout) seconds.
  - An echo reply counts only with the request's identifier, sequence and payload, which
    carries a random nonce of the run - a neighbour answering in a target's name cannot
    forge it. An ICMP error (unreachable, fragmentation needed, packet too big) counts only
    when its quote of the request holds that nonce too, as every router quoting per RFC 1812
    does; one quoting only the 8 bytes RFC 792 asks for proves nothing and is ignored.
  - "Every target is probed at once - each target's probes follow one another, but no target
    waits for another - so a run waits at most O(count) x O(timeout) seconds for answers
    (600 at most), whatever the number of targets, plus a few seconds to set up (the ARP check
    below, the workload's link). At most 32 O(targets); more is refused before anything
    happens."
  - "The verdict is V(failed), and the task fails, when a target with O(targets[].expect=reply)
    did not answer every probe, when its packets did not leave by O(expect_egress_interface)
    (without it - when none of its packets was seen leaving the node by an interface that is
    not forbidden: replies alone prove nothing), or when any probe packet left by a forbidden
    interface. It is V(inconclusive), and the task fails too, when nothing failed but the
    capture lost frames (the kernel dropped some, or more probe frames crossed an interface
    than the capture keeps): a leak cannot be ruled out. The message says it in the
    incident's words, for instance C(203.0.113.8 icmp: 0/3 replies while traffic left by
    vmbr0.50 and 3 replies came back to it: replies are not forwarded back) or
    C(3 tenant packets left by vmbr0 untranslated). A leak probe (O(targets[].expect=none))
    that could send nothing (its workload's veth gone mid-run, say) fails too - a probe that
    sent nothing proves nothing."
  - "Many probes in one run - O(probes), one entry per tenant (at most 128), all at once: each
    its own workload namespace and veth (C(dvp<pid>p<index>)), set up, probed and removed
    together, so the run takes about as long as its slowest target - at most 600 seconds of
    waiting, plus the setup (one 3-second ARP
    check, all at once). One capture serves the run; each frame goes to the probe that sent it
    - by the workload's address, or after SNAT by the probe's own echo identifier and local
    ports (consecutive blocks, one per probe, planned before the capture starts), and for a
    full-size echo by its length. Each probe keeps at most 10,000 frames, fewer when there are
    more than 20 probes (200,000 frames for the run, about 30 MB at most); a probe that reached
    its share is V(inconclusive). The result has one entry per probe in RV(probes), keyed by
    its O(probes[].name); the run's verdict is the worst of them and its message one line per
    probe that did not pass, the tenant first."
  - "Isolation - a target with O(targets[].expect=blocked) must not answer (no echo reply, no
    TCP handshake or reset, no DNS answer or port unreachable) and its probes must not be seen
    leaving the node by any captured interface but O(expect_egress_interface) (toward the
    perimeter, which may drop or refuse them). How it was blocked is reported in
    C(blocked_by) - C(icmp admin-prohibited) (a C(prohibit) route, a reject rule), C(icmp
    host-unreachable) (an C(unreachable) route), C(icmp net-unreachable), ..., C(no answer)
    (silent and not seen leaving - a C(blackhole) route or a drop at the node), C(dropped
    beyond the node) (silent after leaving by the expected egress), or C(rejected by the
    node) (a reset or port unreachable in the target's name while nothing of the probe left
    the node nor came back to it - a firewall's REJECT on the node; a target that is one of
    the node's own addresses is the node answering). An answer fails it, naming who answered
    (C(answered_by)) - also when the answers were seen arriving at the node and dropped there
    before the workload: reachable one way is reachable. A node rate-limits its ICMP errors to one
    source (a burst of about two, then one every two seconds), so a target past the burst may
    read C(no answer) - still blocked."
  - "Peers - a fleet-wide proof (C(deevnet.net.fabric_proof)) runs the module on every node at
    once, and each tenant's workload pings the same tenant's workloads on the other nodes,
    across the EVPN/VXLAN fabric, in its own subnet. Such a target has O(targets[].peer=true)
    and O(targets[].via), the VNet's VXLAN port (C(vxlan_<vnet>)) or a VLAN zone's uplink - the
    one target allowed in the VNet's own subnet, an ICMP echo that must reply (small, or
    full-size with O(targets[].size=mtu)). It passes only when every echo is answered and its
    requests were seen leaving by O(targets[].via); a neighbour on the node's own bridge
    answering in the peer's name fails it - the replies did not come across O(targets[].via).
    Any target that must reply may name its O(targets[].via) so; it is captured whatever it
    is (a port of the VNet among them), is never a default forbidden interface, and takes the
    place of O(expect_egress_interface) for that target."
  - "O(start_at) - the controller gives every node of the proof the same instant, and the run's
    probing starts then: the workloads are set up first, then wait for it (at most 300
    seconds ahead of the node's clock, checked before anything is made). Every workload then
    stays up, answering its peers, until O(start_at) + O(count) x O(timeout), even when its own
    targets were done earlier. Workloads ready only after O(start_at) probe at once, and
    RV(start_late_secs) says how late they were - their probing may then outlast the peers'
    window. A run with a peer target requires O(start_at): the peer's workload must be up while
    this one probes it. The run then ends by the later of O(start_at) and the workloads' being
    ready, plus O(count) x O(timeout) (600 seconds at most), plus the setup and teardown: at
    most 900 seconds of waiting."
  - "Full-size probes - O(targets[].size) sends ICMP echoes with DF set of exactly that IP
    size (or V(mtu), the VNet's MTU; the workload's interface gets the VNet's MTU, as a VM's
    NIC would). The target passes when every echo is answered or when a router sends
    fragmentation-needed back (its MTU is reported in C(frag_needed_mtu)); a silent drop fails
    it. A size above the VNet's MTU is refused."
  - Everything the run creates goes with it, also on error, timeout, panic, SIGTERM or
    C(kill -9) - the namespace has no name and is held only by the process, so the kernel
    removes it, and the veth pair with it, when the process ends. The node end of the veth
    carries a mark in its alias (C(deevnet.net egress_probe boot=... pidns=... pid=...
    start=...) - the boot, the PID namespace, the process id and its start time). A marked
    pair whose run is verifiably over (same boot and PID namespace, and no such process
    started then) is removed by the next run, with a warning. A link is never removed for its
    name alone - an operator's C(dvprobe4000000), or the live probe of a run in another PID
    namespace, is left alone.
  - One run at a time per address on a VNet - the run holds a lock on it (a file in the
    modules' lock folder, C(/run/lock/deevnet.net)) from before its ARP check to its end. A
    second run on the same address is refused with a message saying so, instead of two
    workloads sharing one address.
  - Refused before anything is created - a VRF, VNet or interface that does not exist, an
    address outside the subnets the VRF has connected, with another prefix length, configured
    on the node or answering ARP on the VNet, a gateway that neither is the node's address
    on the VNet nor answers ARP, targets that are broadcast, multicast, loopback, link-local,
    unspecified, the node's own or the workload's own addresses or inside the VNet's own
    subnet (a probe to them never leaves the node; a peer, O(targets[].peer), alone may be
    there), a O(targets[].via) that is the VNet itself, a O(start_at) more than 300 seconds
    ahead of the node's clock, and out-of-range O(count) or O(timeout).
    An address or gateway counts as silent when nothing answered ARP for it within 3 seconds,
    the question asked again every 0.5 seconds, so a loaded VM that answers late still holds
    its address.
  - A VNet whose bridge is full (a Linux bridge takes at most 1023 ports) is named as such,
    with its port count, and nothing remains.
  - C(changed) is always C(false) - no configuration changes and nothing remains.
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
