# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/vrf_route_assert),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: vrf_route_assert
short_description: Assert where tenant traffic in each VRF really goes, as the kernel routes it
version_added: 0.1.0
description:
  - Asks the kernel over rtnetlink, in one process however many VRFs the node has, how traffic
    in each tenant VRF is routed, and fails with one line per failed check. It asserts the
    routing outcome, not a configuration file; a rising SNAT counter is no proof of egress.
  - Two forms. O(vrfs) lists VRFs, each with its checks. The short form, for ad-hoc checks,
    names one VRF with O(vrf) and puts the same keys at the top level (O(dst) with O(src),
    O(iif), O(via), O(dev), O(not_dev), O(table), O(reachable), O(snat_src); O(default_via),
    O(default_dev), O(forwarding), O(no_fall_through)). O(vrf) and O(vrfs) are mutually exclusive.
    O(undeclared_vrfs) and O(settle_timeout) apply to either form.
  - For each VRF it checks that the VRF device exists (a VRF that does not exist fails, saying
    the tenant has no VRF on this node), that the VRF's own table has the expected default route,
    how each destination resolves for traffic in the VRF (the equivalent of
    C(ip route get DST vrf NAME)), and that the interfaces these routes leave by forward.
  - A lookup with O(vrfs[].lookups[].iif) is made on the input path, for a packet arriving by
    that interface (C(ip route get DST from SRC iif DEV)), so the kernel applies that
    interface's C(forwarding) and reverse-path filter (C(rp_filter)) as for a real packet, such
    as a return entering the node by its uplink or a tenant VRF by its L3VNI bridge. A refusal
    names the sysctl that decides, its value and the fix.
  - B(Fall-through) is a finding of its own. A VRF table with neither a default route nor the
    C(unreachable default) catch-all lets lookups continue to the next routing rules, so
    tenant traffic is routed by the main table and leaves by the management bridge. A lookup
    answered by any table other than the VRF's own fails, and its message names it as
    fall-through, even when the lookup has no other expectation.
  - Proxmox VE adds C(unreachable default metric 4278198272) to VRF tables. It is reported in
    RV(vrfs) and stops fall-through, but it is never taken for a usable default route.
  - O(vrfs[].no_fall_through) asserts that a VRF's lookups never fall through, and
    O(vrfs[].forbidden_interfaces) that they never leave by the management side, with a lookup
    generated for every prefix connected there (no hand-picked addresses).
    O(undeclared_vrfs) inspects every VRF of the node that O(vrfs) does not list, for drift the
    inventory does not know (a new SDN zone, a typo).
  - The VRF named V(default) is the default VRF (the main table; lookups made without a VRF), so
    that "the IPv4 default is here" and "the IPv6 default is here" are assertions. With an IPv6
    default but no IPv4 one, the finding names the usual cause, a fabric whose BGP peers are
    activated only for IPv6, and the fix.
  - O(settle_timeout) re-checks until every check passes, for use right after an FRR apply.
  - O(vrfs[].lookups[].snat_src) also predicts, from the node's nftables ruleset, whether a
    workload's packets leaving by the answer are source-translated.
  - Read-only; C(changed) is always C(false). Reading routes needs no privilege; reading the
    nftables ruleset (only for O(vrfs[].lookups[].snat_src)) needs root.
author:
  - deevnet.net maintainers (@deevnet)
options:
  vrfs:
    description:
      - The VRFs to check, each with what must hold in it.
      - Mutually exclusive with O(vrf).
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - The VRF device, such as C(vrf_tdemo) (at most 15 bytes, as every interface name).
          - V(default) is the default VRF - the main table, with lookups made without a VRF
            (C(ip route get DST)). Its entry asserts that the IPv4 default is there (and the IPv6
            one when the entry checks IPv6), whatever its gateway, and its lookups have no
            fall-through.
        type: str
        required: true
      default_via:
        description:
          - The VRF's own table has a usable (unicast) default route through this gateway.
            An IPv6 address checks the IPv6 default.
        type: str
      default_dev:
        description:
          - The VRF's own table has a usable default route through this interface, such as the
            transit VLAN C(vmbr0.50). With O(vrfs[].default_via), the same route must have both.
          - Without O(vrfs[].default_via), the IPv4 default is checked.
        type: str
      ipv6_default_via:
        description:
          - The VRF's own table has a usable IPv6 default route (C(::/0)) through this IPv6
            gateway, such as C(fe80::1) on a BGP-unnumbered uplink. An IPv4 address is refused.
          - Not together with an IPv6 O(vrfs[].default_via).
        type: str
      ipv6_default_dev:
        description:
          - The VRF's own table has a usable IPv6 default route through this interface. With
            O(vrfs[].ipv6_default_via), the same route must have both.
        type: str
      lookups:
        description:
          - Destinations resolved as the kernel does for traffic in the VRF
            (C(ip route get DST vrf NAME)), or with O(vrfs[].lookups[].iif) for a packet arriving
            by an interface (C(ip route get DST from SRC iif DEV)).
          - The answer must come from the VRF's own table unless O(vrfs[].lookups[].table)
            says otherwise; an answer from another table is reported as fall-through. For a
            lookup with O(vrfs[].lookups[].iif), the own table is that of the VRF the interface
            is in (the VRF device itself, or the VRF it is a port of), V(main) for the default
            VRF (whose C(local) and C(default) tables are its own too).
          - An unreachable answer (the catch-all matched) passes unless O(vrfs[].lookups[].via),
            O(vrfs[].lookups[].dev), O(vrfs[].lookups[].table) or
            O(vrfs[].lookups[].reachable=true) expect a route.
        type: list
        elements: dict
        default: []
        suboptions:
          dst:
            description:
              - The destination, one IPv4 or IPv6 address (not a prefix).
            type: str
            required: true
          src:
            description:
              - The packet's source address (C(from SRC)), of O(vrfs[].lookups[].dst)'s family.
              - Without O(vrfs[].lookups[].iif), the lookup is the node's own traffic from that
                address, which must then be one of the node's (else the kernel answers network
                unreachable).
            type: str
          iif:
            description:
              - The interface the packet arrives by (C(iif DEV)), such as the uplink C(nic5) or a
                VRF's L3VNI bridge. The lookup is made on the input path, as for a packet to
                forward, and needs O(vrfs[].lookups[].src).
              - The VRF device is not sent (the kernel ignores it on the input path); the lookup
                is in the VRF of the arrival interface, as for a real packet (for a port of a VRF,
                its l3mdev rule), whichever entry lists it.
              - IPv4 - with C(net.ipv4.conf.<iif>.forwarding) off, the lookup is refused with
                C(reason=not_forwarded); with an effective C(rp_filter) (the larger of
                C(net.ipv4.conf.all.rp_filter) and the interface's) that does not let the source
                in, with C(reason=reverse_path), naming where the node routes the source back.
                The kernel answers both with errnos other refusals share, so the sysctls are
                read to tell them apart.
              - IPv6 - the kernel's lookup does not read forwarding; a packet is forwarded only
                with C(net.ipv6.conf.all.forwarding) on or (kernels 6.17 and later) the
                interface's C(force_forwarding), so a route answered without either is
                C(reason=not_forwarded). IPv6 has no reverse-path filter.
              - An interface the node does not have fails the check, naming it.
            type: str
          via:
            description:
              - The answer's gateway.
            type: str
          dev:
            description:
              - The interface the answer leaves by.
            type: str
          not_dev:
            description:
              - An interface the answer must not leave by, such as the management bridge
                C(vmbr0).
            type: str
          table:
            description:
              - The table the answer must come from, by name (V(main), V(local), V(default)) or
                number. Replaces the fall-through check, for routes leaked on purpose.
              - V(any) accepts an answer from any table, to gather where a lookup goes without
                judging it; fall-through is still reported in C(actual.fall_through).
            type: str
          reachable:
            description:
              - V(true), the destination must resolve to a route; V(false), the kernel must
                refuse it (unreachable, blackhole, prohibit or no route).
            type: bool
          snat_src:
            description:
              - The IPv4 address of a workload whose packets to O(vrfs[].lookups[].dst) take
                this lookup's answer, such as a tenant VM. When the answer leaves by a device,
                C(actual.snat) says whether the node's nftables ruleset source-translates a
                packet from this address leaving by that device - its postrouting NAT chains of
                families C(ip) and C(inet), walked in priority order through their jumps and
                gotos, each chain read once.
              - A rule whose every match is understood and holds decides - C(snat),
                C(masquerade) and iptables-nft's C(SNAT) and C(MASQUERADE) targets translate,
                C(accept) ends that chain untranslated. The matches understood are C(oifname)
                (nft's wildcards) and C(ip saddr) (an address, prefix, range or set). A match
                or statement not understood, a translating chain whose table is dormant (or
                whose flags cannot be read), or a ruleset nft could not list, makes the answer
                unknown (C(translated=null), with why), never untranslated; it fails no check.
              - Needs an IPv4 O(vrfs[].lookups[].dst). The ruleset is read once per run
                (C(/usr/sbin/nft -j list ruleset) and C(nft -t list ruleset) for the tables'
                flags, run as root only when root owns nft), and only when a lookup gives
                O(vrfs[].lookups[].snat_src).
            type: str
      forwarding:
        description:
          - Check that every interface the checked routes leave by (the lookups' answers, and
            the usable default routes of each checked default) has forwarding on
            (C(net.ipv4.conf.<dev>.forwarding), C(net.ipv6) for IPv6 routes). Replies come back
            by that interface and are dropped where it does not forward.
          - When not given, V(true) for a tenant VRF and V(false) for the V(default) VRF, where
            V(true) is refused (the node's own traffic is not forwarded).
        type: bool
      no_fall_through:
        description:
          - The VRF's lookups never fall through to the main table - its table has a default
            route, or a catch-all (an C(unreachable), C(blackhole) or C(prohibit) default, such
            as Proxmox's C(unreachable default metric 4278198272)). A C(throw) default does not
            count.
          - Checked for IPv4, and for IPv6 when the entry checks IPv6 (an IPv6 default, or a
            lookup of an IPv6 address).
          - The finding names where the lookups would leave (the main table's default, its
            C(dev) and C(via)) and the fix. Refused for the V(default) VRF.
        type: bool
        default: false
      forbidden_interfaces:
        description:
          - Interfaces tenant traffic must never leave by, such as the management bridge
            C(vmbr0). For every prefix connected on them (the main table's C(proto kernel)
            routes on those devices; IPv4, and IPv6 without link-local when the entry checks
            IPv6), the lookup of an address in that prefix (its first host that is not the
            node's own) is made in the VRF and must not leave by that interface.
          - Each generated lookup is reported in RV(checks) like a hand-written one, with
            C(connected_prefix) in C(expected); the answer must also come from the VRF's own
            table (no fall-through).
          - An interface the node does not have fails the task naming it; one with no connected
            prefix is a warning. Not together with the same interface as an expected exit
            (O(vrfs[].default_dev), a lookup's C(dev)). Refused for the V(default) VRF.
        type: list
        elements: str
        default: []
      asymmetric_returns:
        description:
          - Returns of tenant traffic may arrive by interfaces the VRF does not route them back
            by (after C(import vrf default), or with ECMP returns in an all-exit fabric). Check
            that every interface the checked routes leave by has an effective C(rp_filter) of
            V(0) - the larger of C(net.ipv4.conf.all.rp_filter) and the interface's, as the
            kernel applies it - else returns are dropped. IPv4 only (IPv6 has no such sysctl);
            with no checked IPv4 route (an IPv4 default or lookup) there is nothing to check, and
            the task warns.
          - With O(vrfs[].l3vni_bridge), the VRF's L3VNI bridge is checked too.
          - Refused for the V(default) VRF.
        type: bool
        default: false
      l3vni_bridge:
        description:
          - With O(vrfs[].asymmetric_returns) (refused without it). The VRF's L3VNI bridge, such as
            Proxmox's C(vrfbr_<zone>), where a return the core delivers to another node of an all-exit
            fabric comes back over the fabric and enters the VRF. The bridge has no IPv4 address, so
            the kernel's reverse-path check drops such returns even in loose mode (C(rp_filter) 2)
            when the VRF routes them back by the uplink. Check that it is a port of the VRF and that
            its effective C(rp_filter) (the larger of C(net.ipv4.conf.all.rp_filter) and its own) is
            V(0).
          - Named rather than looked for - a bridge of the VRF with a VXLAN port and no IPv4
            address may also be an L2-only VNet, where C(rp_filter) never applies (bridged frames
            do not reach IP input) and a finding would be false. The role
            C(deevnet.net.proxmox_node_network) passes each V(import) tenant's, from the SDN or
            Proxmox's naming.
        type: str
  vrf:
    description:
      - The short form's VRF device. Mutually exclusive with O(vrfs).
    type: str
  dst:
    description:
      - Short form, with O(vrf) - the destination to resolve in the VRF, as O(vrfs[].lookups[].dst).
      - O(src) and O(iif) describe the packet, O(via), O(dev), O(not_dev), O(table) and
        O(reachable) are expectations about this lookup, and O(snat_src) asks its source NAT;
        all need it.
    type: str
  src:
    description:
      - Short form - the packet's source, as O(vrfs[].lookups[].src).
    type: str
  iif:
    description:
      - Short form - the interface the packet arrives by, as O(vrfs[].lookups[].iif); needs O(src).
    type: str
  via:
    description:
      - Short form - the gateway of the answer for O(dst).
    type: str
  dev:
    description:
      - Short form - the interface the answer for O(dst) leaves by.
    type: str
  not_dev:
    description:
      - Short form - an interface the answer for O(dst) must not leave by.
    type: str
  table:
    description:
      - Short form - the table the answer for O(dst) must come from (V(main), V(local),
        V(default) or a number), or V(any).
    type: str
  reachable:
    description:
      - Short form - whether O(dst) must resolve to a route (V(true)) or be refused (V(false)).
    type: bool
  snat_src:
    description:
      - Short form - the workload whose source NAT by the answer's device is predicted, as
        O(vrfs[].lookups[].snat_src).
    type: str
  default_via:
    description:
      - Short form - the VRF's own table has a usable default route through this gateway.
    type: str
  default_dev:
    description:
      - Short form - the VRF's own table has a usable default route through this interface.
    type: str
  forwarding:
    description:
      - Short form - as O(vrfs[].forwarding). When not given, V(true) (V(false) for the
        V(default) VRF).
      - Not allowed with O(vrfs); set it in each entry there.
    type: bool
  no_fall_through:
    description:
      - Short form - as O(vrfs[].no_fall_through). When not given, V(false).
      - Not allowed with O(vrfs); set it in each entry there.
    type: bool
  undeclared_vrfs:
    description:
      - What to do about VRF devices of the node that O(vrfs) (or O(vrf)) does not list. With
        V(fail) or V(warn) each is inspected, and one whose table has neither a default route
        nor a catch-all (its lookups fall through to the main table) is reported in
        RV(leaking_vrfs), naming the VRF, where its lookups would leave and the fix; V(fail)
        fails the task, V(warn) warns. V(ignore) inspects none.
      - IPv4 always; IPv6 where the main table has IPv6 routes beyond link-local.
      - With V(fail) or V(warn), O(vrfs) and O(vrf) may be left out to inspect every VRF.
      - On a kernel without VRF support (no vrf driver loaded or built in, and none it could load)
        there is no VRF to inspect, and the module does not claim that none falls through - it says it
        cannot tell, and why - a failure with V(fail), a warning with V(warn).
    type: str
    choices: [fail, warn, ignore]
    default: ignore
  settle_timeout:
    description:
      - Seconds to keep re-reading the kernel and re-checking (every half second) until every
        check passes, for use right after an FRR reload installs routes asynchronously. The
        findings of the last attempt stand when the time is up. V(0) checks once.
      - A missing VRF ends the wait at once - no route brings a VRF device, so its finding stands
        (on a kernel without VRF support the finding says so).
      - From V(0) to V(600).
    type: int
    default: 0
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.check_mode_findings
  - deevnet.net.module.read_only
notes:
  - "On the target: Linux with VRF support (Proxmox VE, Debian); the checks run over rtnetlink."
  - Fails when any check fails, so C(ignore_errors) or C(failed_when) is needed to only report.
  - Every lookup without C(iif) is pinned to the VRF device, as C(ip route get DST vrf NAME) does.
    On IPv4 the kernel is asked for the table that matched (RTM_F_LOOKUP_TABLE); IPv6 answers name
    it anyway.
  - "On the input path (C(iif)) the kernel answers forwarding off on the arrival interface with
    EHOSTUNREACH, as an unreachable route, and its reverse-path filter with EINVAL (EXDEV before
    Linux 6.13), as a blackhole route or a martian address. The module reads the interface's
    sysctls, and for EINVAL looks the destination up in the arrival VRF, so that a blackhole
    route is never reported as the reverse-path filter."
  - An empty answer from the kernel, or no answer, fails the task; it is never a pass.
seealso:
  - module: deevnet.net.sysctl_forwarding
    description: Makes the transit interface forward, the fix for the forwarding check.
  - name: Virtual Routing and Forwarding (VRF)
    description: The kernel's VRF documentation, including the l3mdev rule and fall-through.
    link: https://docs.kernel.org/networking/vrf.html
'''

EXAMPLES = r'''
- name: Tenant traffic on hv02 leaves by the transit interface, never by the management bridge
  deevnet.net.vrf_route_assert:
    vrfs:
      - name: vrf_tdemo
        # Every tenant VRF has a default via the transit gateway ...
        default_via: 10.20.50.1
        default_dev: vmbr0.50
        lookups:
          # ... management-bound tenant traffic resolves via the transit interface ...
          - dst: 10.20.99.5
            dev: vmbr0.50
            not_dev: vmbr0
          # ... and the internet resolves from the VRF's own table (no fall-through).
          - dst: 1.1.1.1
            via: 10.20.50.1
        # ... and the transit interface forwards (the default).
        forwarding: true

- name: Every tenant VRF of the node has its default via the transit gateway
  deevnet.net.vrf_route_assert:
    vrfs:
      - {name: vrf_tdemo, default_via: 10.20.50.1, default_dev: vmbr0.50}
      - {name: vrf_tacme, default_via: 10.20.50.1, default_dev: vmbr0.50}

- name: An isolated tenant reaches nothing outside its VRF
  deevnet.net.vrf_route_assert:
    vrfs:
      - name: vrf_tiso
        lookups:
          - dst: 10.20.99.5
            reachable: false

- name: On an exit node, no tenant VRF falls through or reaches the management side, and no
    undeclared VRF leaks; wait up to 30 s for FRR to install the routes
  deevnet.net.vrf_route_assert:
    vrfs:
      - name: vrf_tdemo
        default_via: 10.20.50.1
        default_dev: vmbr0.50
        no_fall_through: true
        forbidden_interfaces: [vmbr0]
    undeclared_vrfs: fail
    settle_timeout: 30

- name: A member node - each tenant VRF has a default from the fabric or the catch-all
  deevnet.net.vrf_route_assert:
    vrfs:
      - {name: vrf_tdemo, no_fall_through: true, forbidden_interfaces: [vmbr0]}

- name: Any VRF of this node that the inventory does not know, reported without failing
  deevnet.net.vrf_route_assert:
    undeclared_vrfs: warn

- name: All-exit fabric - the default VRF has both defaults; the tenant's returns pass rp_filter
  deevnet.net.vrf_route_assert:
    vrfs:
      - name: default
        default_dev: nic5
        ipv6_default_dev: nic5
      # After `import vrf default`, the VRF's IPv4 default is `via inet6 fe80::... dev nic5`.
      - name: vrf_evpn
        default_dev: nic5
        asymmetric_returns: true
        l3vni_bridge: vrfbr_evpn   # where returns delivered to another node enter vrf_evpn

- name: A return from 203.0.113.8 entering hv01 by its uplink nic5 is forwarded to the workload
  deevnet.net.vrf_route_assert:
    vrfs:
      - name: default
        lookups:
          # ip route get 192.0.2.11 from 203.0.113.8 iif nic5: nic5's forwarding and rp_filter
          # apply, as for the real return.
          - dst: 192.0.2.11
            src: 203.0.113.8
            iif: nic5
            reachable: true
          # Where the same return goes from the VRF's L3VNI bridge, gathered without judging.
          - dst: 192.0.2.11
            src: 203.0.113.8
            iif: vrfbr_evpn
            table: any

- name: A route leaked into the main table on purpose
  deevnet.net.vrf_route_assert:
    vrf: vrf_tdemo
    dst: 10.20.99.10
    table: main

# Ad hoc, from the shell (the short form):
#   ansible pve -m deevnet.net.vrf_route_assert -a 'vrf=vrf_tdemo dst=10.20.99.5 dev=vmbr0.50 not_dev=vmbr0'
#   ansible hv02 -m deevnet.net.vrf_route_assert -a 'vrf=vrf_tdemo default_via=10.20.50.1'
'''

RETURN = r'''
vrfs:
  description:
    - Each declared VRF found on the node, with its table and the default routes of that
      table (IPv4 and IPv6, of every type; one entry per path of a multipath route).
  returned: always (also on failure)
  type: list
  elements: dict
  contains:
    name:
      description: The VRF device.
      type: str
    ifindex:
      description: The VRF device's interface index; V(0) for the V(default) VRF.
      type: int
    table:
      description: The VRF's routing table.
      type: int
    defaults:
      description: The default routes of the table, each with C(family), C(type), C(gateway),
        C(dev), C(metric) and C(protocol).
      type: list
      elements: dict
    unreachable_catch_all:
      description: Whether the table has the IPv4 C(unreachable default) catch-all.
      type: bool
    unreachable_catch_all_ipv6:
      description: Whether the table has the IPv6 C(unreachable default) catch-all.
      type: bool
  sample:
    - name: vrf_tdemo
      ifindex: 12
      table: 1001
      defaults:
        - {family: IPv4, type: unicast, gateway: 10.20.50.1, dev: vmbr0.50, metric: null, protocol: static}
        - {family: IPv4, type: unreachable, gateway: null, dev: null, metric: 4278198272, protocol: boot}
      unreachable_catch_all: true
      unreachable_catch_all_ipv6: false
checks:
  description:
    - One entry per check, passed or failed. C(check) is V(vrf), V(default_route),
      V(no_fall_through), C(lookup <dst>), C(forwarding <dev>) or C(rp_filter <dev>); C(msg) is
      the check on one line.
    - For a lookup, C(actual) has the answer's C(type), C(via), C(dev), C(table) and
      C(fall_through), or C(type=refused) and the C(reason) - V(unreachable), V(blackhole),
      V(prohibit), V(no_route), and on the input path V(not_forwarded) (with the C(sysctls) read
      and their values), V(reverse_path) (with the C(rp_filter) values and C(route_back), where the
      node routes the source) or V(martian); a lookup generated by
      O(vrfs[].forbidden_interfaces) has C(connected_prefix) in C(expected).
    - A lookup with C(iif) also has C(src) and C(iif) in C(actual); an C(iif) the node does not
      have is C(type=no_interface).
    - A lookup with C(snat_src) whose answer leaves by a device also has C(snat) in C(actual) -
      C(src), C(translated) (V(true), V(false), or null when it could not be told) and C(why)
      (the NAT chain that translates, or what was not understood and where).
    - For V(no_fall_through), C(actual) has C(stopped_by) (the route that stops the lookups) or
      C(leaves_by); for C(rp_filter <dev>), the C(all), C(interface) and C(effective) values (for
      an O(vrfs[].l3vni_bridge) that is not a port of the VRF, its C(controller) instead).
  returned: always, once the arguments are valid
  type: list
  elements: dict
  sample:
    - vrf: vrf_tdemo
      check: lookup 10.20.99.5
      ok: false
      expected: {dev: vmbr0.50, not_dev: vmbr0, table: 1001}
      actual: {type: unicast, via: null, dev: vmbr0, table: 254, fall_through: true}
      msg: "vrf_tdemo: 10.20.99.5 resolves via dev vmbr0 (table main: fall-through), expected dev vmbr0.50, not dev vmbr0"
leaking_vrfs:
  description:
    - With O(undeclared_vrfs=fail) or O(undeclared_vrfs=warn), each VRF that O(vrfs) does not
      list whose lookups of a family fall through, and where they would leave (the main table's
      default; C(dev) and C(via) null when it has none). Empty with O(undeclared_vrfs=ignore).
  returned: always, once the arguments are valid
  type: list
  elements: dict
  contains:
    name:
      description: The undeclared VRF device.
      type: str
    table:
      description: Its routing table, the one without a default route or catch-all.
      type: int
    family:
      description: V(IPv4) or V(IPv6).
      type: str
    leaves_by:
      description: The main table's default that the lookups would take, C(dev) and C(via).
      type: dict
  sample:
    - {name: vrf_tnew, table: 1002, family: IPv4, leaves_by: {dev: vmbr0, via: 10.20.99.1}}
settled_after:
  description:
    - Seconds from the first check to the end of the last attempt (see O(settle_timeout)).
  returned: always, once the arguments are valid
  type: float
  sample: 2.514
attempts:
  description:
    - How many times the kernel was read and every check made; V(1) unless O(settle_timeout)
      waited for a route.
  returned: always, once the arguments are valid
  type: int
  sample: 6
msg:
  description:
    - On failure, every failed check on a line of its own (and, with O(undeclared_vrfs=fail),
      every undeclared VRF that falls through); otherwise how many checks passed, whether an
      undeclared VRF falls through (when they were inspected) and, when O(settle_timeout) made
      more than one attempt, after how long.
  returned: always
  type: str
  sample: "vrf_tdemo: 10.20.99.5 resolves via dev vmbr0 (table main: fall-through), expected dev vmbr0.50, not dev vmbr0"
'''
