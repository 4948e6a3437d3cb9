# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Documentation only: the module is the Rust binary of the same name (modules/transit_router_check),
# which ansible-core prefers at run time. This file serves ansible-doc, ansible-doc -l and Galaxy.

from __future__ import annotations

DOCUMENTATION = r'''
module: transit_router_check
short_description: Audits a transit router - what the transit network may reach, and that it stays closed without its rules
version_added: 0.1.0
description:
  - Every VPC's egress gateway SNATs onto one shared transit network; the transit router decides
    what that network may reach - the LoadBalancer ranges, DNS (UDP 53), NTP (UDP 123) and the
    Internet, never another private destination or a VPC range. This module audits that router,
    read-only, and fails naming each violation with its fix.
  - "Two layers keep the router closed (docs/transit-router.md in the repository): the nftables
    table O(table) (family C(inet)), whose forward chain decides transit traffic first and whose
    prerouting chain ORs O(gate_mark) into every packet that arrives on O(transit_interface); and
    the routing gate, two policy-routing rules at O(gate_priority) that send what arrives there
    unmarked (IPv4) or at all (IPv6) to C(prohibit). When the table is gone, the gate holds."
  - "What it reads: C(nft -j list ruleset); C(ip -j -4 rule show), C(ip -j -6 rule show),
    C(ip -j -4 route show table all), C(ip -j -6 route show table local) and C(ip -j -d addr show); C(tc -j qdisc show) and the ingress
    and egress filters of O(transit_interface); C(ip -j route get fibmatch) of VPC addresses as a
    marked packet from the transit network; C(net.ipv4.ip_forward),
    C(net.ipv4.conf.<transit_interface>.forwarding) and the C(rp_filter) and C(src_valid_mark)
    of C(all) and O(uplink) under C(/proc/sys); C(/proc/net/ip_tables_names) and
    C(ip6_tables_names); O(ruleset_path), O(unit_path) with its drop-ins, and
    O(nftables_conf_path). nft, ip and tc run only when root's (the program and every folder
    above it owned by root, writable by nobody else), without a shell, with an empty environment,
    bounded in time (10 s) and output (16 MiB)."
  - "The checks, in order, each in RV(checks) with C(name), C(ok), C(message) and C(fix):
    C(table_present) (the table, without flags - a dormant table decides nothing - with its
    forward base chain and the prerouting rule that marks transit packets); C(open_forward_policy) (fails when the table's forward chain is absent,
    forwarding is on and no forward base chain has policy drop - a forward policy of accept with
    no collection rules); C(first_in_forward) (no other forward base chain of family C(ip),
    C(inet) or C(ip6) at the table's priority or before it); C(private_accept_ahead) (no rule
    accepts a private or VPC destination that no rule ahead of it dropped for every packet,
    walking the forward chain into the chains it jumps to, and any foreign forward chain that
    runs first, each chain read once; and every private destination is dropped for every packet.
    A drop, jump or goto counts for a destination only when it holds for every transit packet to
    it - a condition on the source, the output interface, a port, C(limit), C(quota) or a match
    the module does not model makes it count for none - and several matches on one field
    intersect. The allowances are the LoadBalancer ranges, UDP 53 to O(dns_servers) and UDP 123
    to O(ntp_servers), never to a VPC range (C(any) is any server outside the VPC ranges, as the
    role's ruleset has it: its DNS and NTP accepts follow the VPC drop); a rule with no
    destination match accepts everything; a statement the module cannot read, such as C(xt), a
    loop, a missing chain, a chain 16 jumps below its base chain, or a walk past 2000000 steps
    (a rule read or a chain entered) is named and fails the check);
    C(vpc_route) (no unicast route, in any table, into a VPC range - blackhole, unreachable and
    prohibit routes are fine - and the kernel forwards no packet from the transit network, marked
    as the table marks it, to a VPC address by any route but the one an Internet address takes,
    nor back out of O(transit_interface): each range's first address and every address where a
    route or rule prefix starts or ends inside it is asked, so policy routing into a VPC is
    found; an answer it cannot read fails); C(uplink_snat) (a nat postrouting rule masquerades
    or SNATs the transit network going out of O(uplink) with no other match - a masquerade
    narrowed, e.g. to TCP, is named with what narrows it); C(routing_gate) (both gate rules -
    each exactly C(iif), the IPv4 one's C(fwmark 0/<gate_mark>), and C(prohibit), the interface
    by its name or an altname; a rule narrowed by any other selector, C(ipproto), C(to), ports,
    C(tos), C(uidrange) or one the module does not know, is not the gate and is named - no rule
    ahead of them, at priority 0 or by an altname of the transit interface included, that may
    route transit packets, no forwarding route in table C(local), IPv4 or IPv6; no rule other
    than the table's own marking rule that may set O(gate_mark) - a C(meta mark set) of any
    family and hook, netdev included, unless its value provably keeps the bit clear (a constant
    without it, or C(meta mark) with C(&), C(|) or C(^) of such constants) or it matches only
    another input interface, and any iptables target (C(xt)) - and nothing that moves transit
    packets around the forward chain: a flowtable on O(transit_interface), an ingress chain on
    it (nft 1.0.6 lists no device for a netdev chain, so every ingress chain counts) holding
    more than matches, counters, limits and verdicts, or C(fwd), C(dup), C(queue), C(TEE) or
    C(NFQUEUE) in a chain that sees transit packets); C(forwarding)
    (C(net.ipv4.conf.<transit_interface>.forwarding) is 1); C(persisted) (O(ruleset_path),
    loaded by C(nft -f) in a network namespace of its own, gives the running table, compared
    object by object with handles and counter values left out); C(reload_survival)
    (O(unit_path) is enabled for boot - a link to it in C(sysinit.target.wants) or its
    C(WantedBy=) target's C(.wants) folder next to it - and, merged with its drop-ins as
    systemd merges them (an empty assignment resets a list), has
    C(ReloadPropagatedFrom=nftables.service), or O(nftables_conf_path) includes O(ruleset_path);
    a drop-in that sets C(Exec*=), C(Type=), C(Condition*=) or C(Assert*=), one that cannot be
    read, or a unit of the same name in a folder systemd reads first fails);
    C(transit_interface) (O(transit_interface) has no master - a bridge would take its packets
    from the table's C(iifname) and the gate's C(iif) - no device stacked on it (a VLAN or
    macvlan receives from the transit wire as itself), no XDP program, no tc filter on it that
    the audit cannot prove harmless (only C(gact) and C(police) actions are; C(mirred),
    C(skbedit), C(bpf) and shared blocks are not), and no other interface holds an address in
    the transit network); C(legacy_tables) (no iptables-legacy table is loaded: nft cannot list
    them); C(reverse_path) (the answers to transit traffic pass the reverse-path filter: their
    reverse lookup runs as if they came in on the transit interface, unmarked unless
    C(src_valid_mark) is on, so with C(rp_filter) 1 or 2 on O(uplink) - the larger of C(all)'s and
    its own - it meets the gate's C(prohibit) unless C(src_valid_mark) is on and the table's
    prerouting chain marks what arrives there - a rule naming O(uplink) or no interface, such as
    the role's mark of the replies to the transit network; judged where transit traffic passes
    the gate - the table marks it and an IPv4 rule refuses it unmarked)."
  - Files are read through the collection's file policy as another tool's files - a regular file
    that nobody but root could have written, in folders the same, a link only when root planted
    it; anything else fails its check, naming the file and why. It never changes anything, on the
    node or in its ruleset - the persisted file is loaded in a scratch network namespace.
  - Implemented as a compiled Rust executable; the target needs no Python.
author:
  - deevnet.net maintainers (@deevnet)
options:
  transit_interface:
    description:
      - The router's interface on the transit network (a VLAN device such as C(eth0.40.199)). It
        must exist on the node; a name the kernel would refuse, or one the node lacks, fails the
        task naming it.
    type: str
    required: true
  transit_network:
    description:
      - The transit network, an IPv4 CIDR such as C(198.51.100.0/24); the source C(uplink_snat)
        looks for.
    type: str
    required: true
  uplink:
    description:
      - The interface toward the Internet (C(eth1)). It must exist on the node.
    type: str
    required: true
  loadbalancer_ranges:
    description:
      - The LoadBalancer ranges the transit network may reach (IPv4 CIDRs, at least one).
    type: list
    elements: str
    required: true
  dns_servers:
    description:
      - The DNS servers UDP 53 may reach - a list of IPv4 addresses or CIDRs, or the string
        V(any).
    type: raw
    default: any
  ntp_servers:
    description:
      - The NTP servers UDP 123 may reach - a list of IPv4 addresses or CIDRs, or the string
        V(any).
    type: raw
    default: any
  vpc_ranges:
    description:
      - Every VPC's address ranges (IPv4 CIDRs, at least one). No route may lead there, and no
        accept may let transit traffic reach them.
    type: list
    elements: str
    required: true
  private_ranges:
    description:
      - The private ranges the table must drop (IPv4 CIDRs, at least one). The role
        C(deevnet.net.transit_router) holds the default, its variable C(transit_router_private_ranges).
    type: list
    elements: str
    required: true
  table:
    description:
      - The name of the table, family C(inet).
    type: str
    default: deevnet_transit
  forward_priority:
    description:
      - The priority the table's forward chain is rendered with; C(first_in_forward) reads the
        running chain's own.
    type: int
    default: -200
  gate_mark:
    description:
      - The packet-mark bit the prerouting chain sets on transit packets and the IPv4 gate rule
        tests (C(fwmark 0/<gate_mark>)). It must be a single bit - 4194304 is C(0x400000).
    type: int
    default: 4194304
  gate_priority:
    description:
      - The priority of both gate rules, from 1 to 32765 (after rule 0, C(lookup local), so
        packets for the router itself are delivered).
    type: int
    default: 100
  ruleset_path:
    description:
      - The persisted ruleset that the unit loads.
    type: path
    default: /etc/nftables.d/deevnet-transit-router.nft
  unit_path:
    description:
      - The unit that adds the gate rules and loads O(ruleset_path). Its C(.wants) links are
        looked for in its own folder.
    type: path
    default: /etc/systemd/system/deevnet-transit-router.service
  nftables_conf_path:
    description:
      - nftables.service's configuration; read by C(reload_survival) when the unit does not
        reload with nftables.service, for an C(include) of O(ruleset_path) (its path, or a glob
        that matches it).
    type: path
    default: /etc/nftables.conf
extends_documentation_fragment:
  - deevnet.net.module
  - deevnet.net.module.read_only
notes:
  - Read-only and idempotent; C(changed) is always C(false).
  - Reading the ruleset and loading the persisted file in a network namespace need root; run the
    task with C(become).
  - IPv4 only, as the transit network is; IPv6 from the transit interface must be dropped, which
    the gate's IPv6 rule and the table's first rule do.
seealso:
  - name: nft(8)
    description: nftables, its hooks, priorities and verdicts.
    link: https://www.netfilter.org/projects/nftables/manpage.html
'''

EXAMPLES = r'''
- name: Audit the transit router
  deevnet.net.transit_router_check:
    transit_interface: eth0.40.199
    transit_network: 198.51.100.0/24
    uplink: eth1
    loadbalancer_ranges: [10.96.100.0/28]
    vpc_ranges: [10.202.0.0/16, 192.0.2.0/24]
    private_ranges: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, 169.254.0.0/16]
  become: true
  register: transit

# Resolvers on a private address: UDP 53 only to them.
- name: Audit with declared DNS and NTP servers
  deevnet.net.transit_router_check:
    transit_interface: eth0.40.199
    transit_network: 198.51.100.0/24
    uplink: eth1
    loadbalancer_ranges: [10.96.100.0/28]
    dns_servers: [10.0.0.53]
    ntp_servers: any
    vpc_ranges: [10.202.0.0/16]
    private_ranges: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16]
  become: true

# Ad hoc:
#   ansible router -b -m deevnet.net.transit_router_check -a 'transit_interface=eth0.40.199
#     transit_network=198.51.100.0/24 uplink=eth1 loadbalancer_ranges=10.96.100.0/28
#     vpc_ranges=10.202.0.0/16 private_ranges=10.0.0.0/8,172.16.0.0/12,192.168.0.0/16'
'''

RETURN = r'''
state:
  description:
    - V(enforced) - the table decides transit traffic (C(table_present), C(first_in_forward) and
      C(private_accept_ahead) pass), the routing gate holds and the transit interface forwards.
    - V(closed) - nothing is forwarded from the transit network - forwarding is off on it, or the
      table does not decide and the routing gate holds.
    - V(open) - forwarding is on and the routing gate does not hold (with no table deciding,
      anything routable passes; with one, nothing is left when it goes); or something may move or
      mark transit packets ahead of the table and the gate (C(transit_interface) or
      C(legacy_tables) fails), so nothing can be proven.
    - C(reverse_path) and C(vpc_route) change no state - a router whose answers the reverse-path
      filter drops is closed and broken, and a route into a VPC stands behind the table's drop.
  returned: when the node was read
  type: str
  sample: enforced
checks:
  description:
    - Each check in order - C(name), C(ok), C(message) (what was found) and C(fix) (the command
      or step that fixes it, empty when C(ok)).
  returned: when the node was read
  type: list
  elements: dict
  sample:
    - name: table_present
      ok: true
      message: table inet deevnet_transit has its forward chain and marks transit packets with 0x400000.
      fix: ""
violations:
  description: The names of the failed checks, in order; the task fails unless it is empty.
  returned: when the node was read
  type: list
  elements: str
  sample: [private_accept_ahead, persisted]
forward_chains:
  description: Each base chain on the forward hook - C(family), C(table), C(chain), C(priority), C(policy).
  returned: when the node was read
  type: list
  elements: dict
  sample: [{"family": "inet", "table": "deevnet_transit", "chain": "forward", "priority": -200, "policy": "accept"}]
routes_into_vpc:
  description: Each unicast route into a VPC range - C(dst), C(table), C(dev), C(gateway) (C(null) when none).
  returned: when the node was read
  type: list
  elements: dict
  sample: [{"dst": "10.202.0.0/25", "table": "7", "dev": "eth1", "gateway": "203.0.113.1"}]
gate:
  description: Whether each gate rule is in place - C(ipv4), C(ipv6).
  returned: when the node was read
  type: dict
  sample: {"ipv4": true, "ipv6": true}
forwarding:
  description: C(ip_forward) (C(net.ipv4.ip_forward)) and C(transit) (C(net.ipv4.conf.<transit_interface>.forwarding)), each on or off.
  returned: when the node was read
  type: dict
  sample: {"ip_forward": true, "transit": true}
nft_version:
  description: The nft version that listed the ruleset.
  returned: when the node was read
  type: str
  sample: 1.0.6
'''
