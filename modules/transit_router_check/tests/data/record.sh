#!/bin/sh
# Records the listings the unit tests read (README.md says what each is). Run as root from this
# folder; every state is made in a network namespace of its own (unshare -n), so the host's
# ruleset, rules and routes never change.
set -eu
here=$(pwd)
in_ns() { unshare -n sh -euc "ip link add tr-transit type veth peer name tr-up; $1"; }

in_ns "nft -f $here/enforced.nft; nft -j list ruleset > nft-1.0.6/enforced.json
       nft -j list table inet deevnet_transit > nft-1.0.6/enforced-table.json"
in_ns "nft -f $here/enforced.nft
       nft insert rule inet deevnet_transit from_transit ip daddr 10.0.0.0/8 accept
       nft -j list ruleset > nft-1.0.6/accept-ahead.json"
in_ns "nft -f $here/enforced.nft
       nft add table ip filter
       nft add chain ip filter FORWARD '{ type filter hook forward priority -300; policy drop; }'
       nft add rule ip filter FORWARD ip daddr '{ 172.16.0.0/12, 203.0.113.0/24 }' accept
       nft -j list ruleset > nft-1.0.6/foreign-ahead.json"
in_ns "nft -f $here/enforced.nft
       nft add set inet deevnet_transit dns_servers '{ type ipv4_addr; flags interval; elements = { 10.0.0.53 } }'
       nft replace rule inet deevnet_transit from_transit handle \$(nft -a list chain inet deevnet_transit from_transit | sed -n 's/.*udp dport 53 accept # handle //p') udp dport 53 ip daddr @dns_servers accept
       nft -j list ruleset > nft-1.0.6/dns-set.json"
in_ns "nft -f $here/enforced.nft; nft add table inet deevnet_transit '{ flags dormant; }'
       nft -j list ruleset > nft-1.0.6/dormant.json; nft -t list ruleset > nft-1.0.6/dormant.txt"
in_ns "nft -f $here/enforced.nft; nft flush ruleset; nft -j list ruleset > nft-1.0.6/flushed.json"
in_ns "nft -f $here/enforced.nft
       nft add table ip mangle
       nft add chain ip mangle PREROUTING '{ type filter hook prerouting priority -150; }'
       nft add rule ip mangle PREROUTING meta mark set 0x400000
       nft add rule ip mangle PREROUTING meta mark set meta mark and 0xffbfffff xor 0x400000
       nft add rule ip mangle PREROUTING meta mark set ct mark
       nft add rule ip mangle PREROUTING meta mark set meta mark and 0xff
       nft add rule ip mangle PREROUTING meta mark set 0x1
       nft add rule ip mangle PREROUTING iifname tr-up meta mark set 0x400000
       nft add table netdev edge
       nft add chain netdev edge ingress '{ type filter hook ingress device tr-transit priority 0; }'
       nft add rule netdev edge ingress meta mark set meta mark or 0x400000
       nft -j list ruleset > nft-1.0.6/mark-writers.json"
# The rule of chain $1 that nft lists as $2, by its handle.
handle() { echo "\$(nft -a list chain inet deevnet_transit $1 | sed -n 's|.*$2 # handle ||p')"; }
in_ns "nft -f $here/enforced.nft
       nft replace rule inet deevnet_transit forward handle $(handle forward 'iifname \"tr-transit\" jump from_transit') iifname tr-transit ip saddr 198.51.100.7 jump from_transit
       nft -j list ruleset > nft-1.0.6/conditional-jump.json"
private_drop='ip daddr @private_ranges counter packets 0 bytes 0 drop'
in_ns "nft -f $here/enforced.nft
       nft replace rule inet deevnet_transit from_transit handle $(handle from_transit "$private_drop") ip daddr @private_ranges limit rate 10/second counter drop
       nft -j list ruleset > nft-1.0.6/limited-drop.json"
in_ns "nft -f $here/enforced.nft
       nft replace rule inet deevnet_transit from_transit handle $(handle from_transit "$private_drop") ip daddr 172.16.0.5 ip daddr @private_ranges counter drop
       nft -j list ruleset > nft-1.0.6/two-daddr.json"
in_ns "nft -f $here/enforced.nft
       nft insert rule inet deevnet_transit from_transit udp dport 53 accept
       nft -j list ruleset > nft-1.0.6/dns-ahead.json"
# This kernel has no flowtables and no queue: the tests add those to the JSON themselves.
in_ns "nft -f $here/enforced.nft
       nft add table netdev edge
       nft add chain netdev edge ingress '{ type filter hook ingress device tr-transit priority 0; }'
       nft add rule netdev edge ingress ip daddr 10.202.0.5 fwd to tr-up
       nft add table ip fast
       nft add chain ip fast pre '{ type filter hook prerouting priority 0; }'
       nft add rule ip fast pre ip daddr 10.202.0.5 dup to 10.202.0.6
       nft -j list ruleset > nft-1.0.6/around-forward.json"
in_ns "nft -f $here/enforced.nft
       nft replace rule inet deevnet_transit postrouting handle $(handle postrouting 'ip saddr 198.51.100.0/24 oifname != \"tr-transit\" masquerade') ip saddr 198.51.100.0/24 oifname tr-up meta l4proto tcp masquerade
       nft -j list ruleset > nft-1.0.6/narrow-masquerade.json"
in_ns "ip -4 rule add priority 100 iif tr-transit fwmark 0/0x400000 prohibit
       ip -6 rule add priority 100 iif tr-transit prohibit
       ip -j -4 rule show > ip-6.1/gate-rules-4.json; ip -j -6 rule show > ip-6.1/gate-rules-6.json
       ip -4 rule add priority 50 iif tr-transit lookup 7
       ip -j -4 rule show > ip-6.1/rule-ahead-4.json
       ip link set tr-up up; ip addr add 10.9.0.1/24 dev tr-up
       ip route add 10.202.0.0/25 via 10.9.0.2 table 7
       ip route add blackhole 192.0.2.0/24
       ip route add default via 10.9.0.2
       ip -j -4 route show table all > ip-6.1/routes.json"
# The kernel's side of the audit (TR4-TR7, TR10): rules narrowed or ahead of the gate, altnames,
# a bridge, a second interface in the transit network, tc on the transit interface, the kernel's
# answer for VPC addresses.
in_ns "ip link property add dev tr-transit altname trx
       ip -4 rule add priority 100 iif tr-transit fwmark 0/0x400000 ipproto gre prohibit
       ip -6 rule add priority 100 iif tr-transit to 2001:db8::1 prohibit
       ip -j -4 rule show > ip-6.1/narrowed-gate-4.json; ip -j -6 rule show > ip-6.1/narrowed-gate-6.json"
in_ns "ip link property add dev tr-transit altname trx
       ip -4 rule add priority 100 iif trx fwmark 0/0x400000 prohibit
       ip -4 rule add priority 0 iif tr-transit lookup 7
       ip -4 rule add priority 50 iif trx lookup 8
       ip -4 rule add priority 60 oif trx lookup 9
       ip -4 rule add priority 70 iif tr-up lookup 10
       ip -4 rule add priority 80 not iif trx ipproto udp lookup 11
       ip -4 rule add priority 90 iif trx nop
       ip -j -4 rule show > ip-6.1/ahead-altname-4.json"
in_ns "ip link property add dev tr-transit altname trx; ip link add br0 type bridge
       ip link set tr-transit master br0; ip link add tr-2 type veth peer name tr-3
       ip addr add 198.51.100.7/24 dev tr-2
       ip -j addr show > ip-6.1/bridged-addr.json"
in_ns "tc qdisc add dev tr-transit clsact
       tc filter add dev tr-transit ingress protocol ip u32 match u32 0 0 action mirred egress redirect dev tr-up
       tc -j filter show dev tr-transit ingress > tc-6.1/ingress-redirect.json
       tc -j qdisc show dev tr-transit > tc-6.1/qdisc-clsact.json"
in_ns "tc qdisc add dev tr-transit ingress_block 22 clsact
       tc -j qdisc show dev tr-transit > tc-6.1/qdisc-shared-block.json"
# `ip -j route get fibmatch` as a marked transit packet: a route into a VPC by policy routing, the
# Internet's route, and the refusals' messages.
in_ns "ip link set tr-transit up; ip link set tr-up up; echo 1 > /proc/sys/net/ipv4/ip_forward
       ip addr add 198.51.100.1/24 dev tr-transit; ip addr add 203.0.113.1/24 dev tr-up
       ip route add default via 203.0.113.2
       ip -4 rule add priority 100 iif tr-transit fwmark 0/0x400000 prohibit
       ip -4 rule add priority 200 to 10.202.0.0/24 lookup 7; ip route add default via 198.51.100.2 table 7
       ask() { ip -j route get fibmatch \$1 from 198.51.100.2 iif tr-transit \$2 2>&1; }
       ask 10.202.0.0 'mark 0x400000' > ip-6.1/route-get-vpc-policy.json
       ask 1.1.1.1 'mark 0x400000' > ip-6.1/route-get-internet.json
       ask 192.0.2.0 'mark 0x400000' > ip-6.1/route-get-internet-route.json
       ask 10.202.0.0 '' > ip-6.1/route-get-unmarked.txt || true
       ip route add blackhole 192.0.2.0/24
       ask 192.0.2.0 'mark 0x400000' > ip-6.1/route-get-blackhole.txt || true"
# The role's mark of the replies to the transit network, which the reverse-path check needs.
in_ns "nft -f $here/enforced.nft
       nft add rule inet deevnet_transit prerouting iifname tr-up ct direction reply ct original ip saddr 198.51.100.0/24 meta mark set meta mark \| 0x00400000
       nft -j list ruleset > nft-1.0.6/replies-marked.json"
# A macvlan stacked on the transit interface, with ip's details (-d).
in_ns "ip link add link tr-transit name mv0 type macvlan
       ip -j -d addr show > ip-6.1/stacked-addr.json"
