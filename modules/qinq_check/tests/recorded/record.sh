#!/usr/bin/env bash
# Records the netlink answers of tests/it/recorded.rs in the lab VM (tests/lab/lab up first): the
# lab node's QinQ stack rebuilt in namespaces of this script's own (qqrec, qqpeer, qqvm; the
# VM's own topology is not touched), the module run under an nlmon capture in two states:
#   provisioned/: the peer tagging on VLAN 201, txvlan on on both veth slaves;
#   faults/: the peer without its inner tag, vmbr1's MTU 1495, txvlan off on qinq_a only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
lab=$repo/tests/lab/lab
(cd "$repo" && cargo build --release --locked --quiet -p qinq_check)
"$lab" copy "$repo/target/release/qinq_check" /tmp/qinq_check_rec
peer_mac=$("$lab" run bash -s <<'GUEST'
set -eu
for ns in qqrec qqpeer qqvm; do ip netns del $ns 2>/dev/null || true; ip netns add $ns; done
for ns in qqrec qqpeer qqvm; do
  ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n $ns link set lo up
done
ip -n qqrec link add bond0 type bond mode active-backup miimon 100
for leg in a b; do
  ip -n qqrec link add "qinq_$leg" type veth peer name "peer_$leg" netns qqpeer
  ip -n qqrec link set "qinq_$leg" master bond0
done
ip -n qqrec link set bond0 type bond primary qinq_a
ip -n qqrec link set bond0 up
ip -n qqrec link add link bond0 name bond0.40 type vlan id 40
ip -n qqrec link set bond0.40 up
ip -n qqrec link add vmbr1 type bridge vlan_filtering 1 vlan_default_pvid 1 stp_state 0 forward_delay 0
ip -n qqrec link set bond0.40 master vmbr1
ip netns exec qqrec bridge vlan add dev bond0.40 vid 199-299
ip -n qqrec link set vmbr1 up
ip -n qqrec link add qvm0 type veth peer name eth0 netns qqvm
ip -n qqrec link set qvm0 master vmbr1
ip netns exec qqrec bridge vlan add dev qvm0 vid 201 pvid untagged
ip -n qqrec link set qvm0 up
ip -n qqvm link set eth0 up
ip -n qqvm addr add 192.0.2.10/24 dev eth0
ip -n qqpeer link add pbond type bond mode active-backup miimon 100
for leg in a b; do ip -n qqpeer link set "peer_$leg" master pbond; done
ip -n qqpeer link set pbond up
ip -n qqpeer link add link pbond name pbond.40 type vlan id 40
ip -n qqpeer link set pbond.40 up
ip -n qqpeer link add link pbond.40 name pbond.40.201 type vlan id 201
ip -n qqpeer link set pbond.40.201 up
sleep 2
peer_mac=$(ip netns exec qqpeer cat /sys/class/net/pbond/address)
mode() {
  if [ "$1" = tagged ]; then
    ip -n qqpeer addr flush dev pbond.40; ip -n qqpeer link set pbond.40.201 up
    ip -n qqpeer addr replace 192.0.2.20/24 dev pbond.40.201
  else
    ip -n qqpeer link set pbond.40.201 down; ip -n qqpeer addr replace 192.0.2.20/24 dev pbond.40
  fi
  ip -n qqrec link set dev vmbr1 type bridge fdb_flush
  ip netns exec qqpeer ping -c 3 -i 0.2 -W 1 192.0.2.10 >/dev/null || true
}
printf '{"bond": "bond0", "uplink_vlan": 40, "bridge": "vmbr1", "vlans": "199-299", "zone_mtu": 1496, "peers": [{"mac": "%s", "vlan": 201}]}' "$peer_mac" >/tmp/cap.json
modprobe nlmon 2>/dev/null || true
ip -n qqrec link add nlmon0 type nlmon && ip -n qqrec link set nlmon0 up
capture() {
  ip netns exec qqrec tcpdump -i nlmon0 -U -w "/tmp/cap-$1.pcap" 2>/dev/null &
  local pid=$!
  sleep 2
  ip netns exec qqrec /tmp/qinq_check_rec /tmp/cap.json >/dev/null || true
  sleep 2
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
mode tagged
capture provisioned
ip netns exec qqrec ethtool -K qinq_a txvlan off
ip -n qqrec link set vmbr1 mtu 1495
mode untagged
capture faults
for ns in qqrec qqpeer qqvm; do ip netns del $ns; done
echo "$peer_mac"
GUEST
)
for state in provisioned faults; do
  mkdir -p "$here/$state"
  "$lab" run "cat /tmp/cap-$state.pcap" >"/tmp/cap-$state.pcap"
  python3 "$here/extract.py" "/tmp/cap-$state.pcap" "$here/$state"
  echo "$peer_mac" >"$here/$state/peer_mac"
done
"$lab" run 'rm -f /tmp/cap-*.pcap /tmp/cap.json /tmp/qinq_check_rec'
