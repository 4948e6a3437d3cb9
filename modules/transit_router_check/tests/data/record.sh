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
       nft -j list ruleset > nft-1.0.6/dormant.json"
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
