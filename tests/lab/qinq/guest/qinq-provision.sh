#!/usr/bin/env bash
# Builds, inside the fabric VM, the QinQ lab: three hypervisors on one switch that carries the
# outer VLAN 40, each with a VLAN-aware zone bridge on its uplink (podman containers on the VM's
# kernel; ../README.md has the drawing and the faults).
#
#   qsw0        the data-centre switch: a plain bridge in the VM (tagged frames pass as they are)
#   hv01, hv02  bond0 (active-backup, miimon 100, primary eth1) of eth1 + eth2, both on qsw0;
#               vmbr0 (the management bridge) over bond0, the uplink's parent; bond0.40 (the
#               outer tag) a tagged member of VLANs 199-299 of vmbr1 (VLAN-aware, MTU 1496)
#   hv03        the single-NIC uplink: eno1 on qsw0, vmbr0 over eno1, eno1.40 in vmbr1
#   egw         the egress gateway (namespace): 192.0.2.1 on inner VLAN 201, 198.51.100.2 on the
#               transit VLAN 199, both inside outer VLAN 40; it routes between them and SNATs
#               its VPC onto the transit network
#   egwb        another VPC's egress gateway (namespace): 198.51.100.3 on VLAN 199, its VPC's
#               host 10.202.0.10
#   transit     the transit router (a container booting systemd, transit-lab): 198.51.100.1 on
#               VLAN 199 inside 40, 203.0.113.1 toward upstream; forwarding on, no rules, routes
#               into both VPC ranges (R4's fault), as an unprotected router would have
#   upstream    what lies beyond the router (namespace): the internet host 203.0.113.8, the
#               LoadBalancer range (10.96.0.10), DNS (10.53.0.53) and NTP (10.123.0.123)
#               stand-ins, the management network (10.10.0.5) and the other RFC 1918 ranges
#               (172.16.0.5, 192.168.0.5); a DNS-like responder on udp/53 and udp/123
#   guest666    a guest (namespace) whose NIC tap666i0 is a port of hv01's vmbr0: a trunk onto
#               the uplink's parent, from which it can set the outer tag itself
#
# The MTUs follow the guide: the NICs and the switch carry 1500, the uplink VLAN device 1500, the
# zone bridge and the VLAN legs of egw and transit 1496 (the inner tag takes the other 4 bytes).
# Faults as provisioned (qinq-lab sets and clears each; qinq-lab state prints them):
#   - hv02's eth1 (its active slave) loses the inner tag of what it sends while its tag-insertion
#     offload is on, as provisioned (qinq-lab inner-tag);
#   - the switch port toward the transit router is 4 bytes short (qinq-lab short-hop);
#   - no guard on hv01's vmbr0: guest666 can inject double-tagged frames (the node's fix).
# Only TEST-NET addresses, all inside the VM. Re-running it rebuilds everything from scratch.
set -euo pipefail
started=$SECONDS
step() { echo "qinq-provision: $* ($((SECONDS - started)) s)"; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The fabric lab's node helpers (remove_nodes, start_containers, add_namespaces, veth).
# shellcheck source=../../fabric/guest/fabric-nodes.sh
. "$here/fabric-nodes.sh"
CONTAINERS=(hv01 hv02 hv03)
NAMESPACES=(egw egwb upstream guest666)

install -m 755 "$here/qinq-lab" /usr/local/sbin/qinq-lab
install -m 755 "$here/transit-lab" /usr/local/sbin/transit-lab
install -m 755 "$here/transit-upstream-responder" /usr/local/sbin/transit-upstream-responder

# ---------------------------------------------------------------- clean slate
systemctl stop qinq-upstream-responder 2>/dev/null || true
remove_nodes "${CONTAINERS[@]}" "${NAMESPACES[@]}" transit
ip link del qsw0 2>/dev/null || true

step containers
start_containers "${CONTAINERS[@]}"
add_namespaces "${NAMESPACES[@]}"
# No IPv6 where nothing needs it: its chatter would teach the bridges MACs the checks look for.
for ns in "${CONTAINERS[@]}" "${NAMESPACES[@]}"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

# ---------------------------------------------------------------- the switch
step wiring
ip link add qsw0 type bridge stp_state 0 forward_delay 0
ip link set qsw0 up
# switch_port NS NAME: a veth from the switch (port "<NS>-<NAME>") to NAME in NS.
switch_port() {
  veth "-:$1-$2" "$1:$2"
  ip link set "$1-$2" master qsw0
}

# ---------------------------------------------------------------- the hypervisors
# zone_bridge NODE UPLINK: vmbr1, VLAN-aware, MTU 1496, UPLINK a tagged member of 199-299 and
# still untagged in VLAN 1, its PVID, as ifupdown2 leaves a port (so a frame that lost its inner
# tag is learned in VLAN 1: the guide's sign).
zone_bridge() {
  local n=$1 uplink=$2
  ip -n "$n" link add vmbr1 type bridge stp_state 0 forward_delay 0 vlan_filtering 1
  ip -n "$n" link set vmbr1 mtu 1496
  ip -n "$n" link set "$uplink" master vmbr1
  ip netns exec "$n" bridge vlan add dev "$uplink" vid 199-299
  ip -n "$n" link set vmbr1 up
}
for n in hv01 hv02; do
  switch_port "$n" eth1
  switch_port "$n" eth2
  ip -n "$n" link add bond0 type bond mode active-backup miimon 100
  for s in eth1 eth2; do
    ip -n "$n" link set "$s" down
    ip -n "$n" link set "$s" master bond0
  done
  ip -n "$n" link set bond0 type bond primary eth1
  ip -n "$n" link set bond0 up
  ip -n "$n" link add vmbr0 type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set bond0 master vmbr0
  ip -n "$n" link set vmbr0 up
  ip -n "$n" link add link bond0 name bond0.40 type vlan id 40
  ip -n "$n" link set bond0.40 up
  zone_bridge "$n" bond0.40
done
switch_port hv03 eno1
ip -n hv03 link add vmbr0 type bridge stp_state 0 forward_delay 0
ip -n hv03 link set eno1 master vmbr0
ip -n hv03 link set vmbr0 up
ip -n hv03 link add link eno1 name eno1.40 type vlan id 40
ip -n hv03 link set eno1.40 up
zone_bridge hv03 eno1.40

# Each node's /etc/network/interfaces, as Proxmox's ifupdown2 would have built the links above
# from it (qinq_check reads the bond's configured slaves there).
interfaces() { # NODE PARENT BOND_SLAVES ("" for a single NIC)
  local n=$1 parent=$2 bond_slaves=$3 nic
  {
    printf 'auto lo\niface lo inet loopback\n\n'
    for nic in ${bond_slaves:-$parent}; do printf 'auto %s\niface %s inet manual\n\n' "$nic" "$nic"; done
    if [ -n "$bond_slaves" ]; then
      printf 'auto bond0\niface bond0 inet manual\n\tbond-slaves %s\n\tbond-miimon 100\n\tbond-mode active-backup\n\tbond-primary eth1\n\n' "$bond_slaves"
    fi
    printf 'auto vmbr0\niface vmbr0 inet manual\n\tbridge-ports %s\n\tbridge-stp off\n\tbridge-fd 0\n\n' "$parent"
    printf 'auto %s.40\niface %s.40 inet manual\n\n' "$parent" "$parent"
    printf 'auto vmbr1\niface vmbr1 inet manual\n\tbridge-ports %s.40\n\tbridge-stp off\n\tbridge-fd 0\n\tbridge-vlan-aware yes\n\tbridge-vids 199-299\n\tmtu 1496\n' "$parent"
  } | podman exec -i "$n" sh -c 'mkdir -p /etc/network && cat >/etc/network/interfaces && chmod 644 /etc/network/interfaces'
}
interfaces hv01 bond0 "eth1 eth2"
interfaces hv02 bond0 "eth1 eth2"
interfaces hv03 eno1 ""

# The guest on hv01's vmbr0 (a VM's NIC: Proxmox names its tap tap<vmid>i<n>).
veth "hv01:tap666i0" "guest666:eth0"
ip -n hv01 link set tap666i0 master vmbr0

# ---------------------------------------------------------------- egress gateway and transit
# vlan_leg NS NAME ID PARENT ADDRESS: a VLAN device at the zone MTU with its address.
vlan_leg() {
  ip -n "$1" link add link "$4" name "$2" type vlan id "$3"
  ip -n "$1" link set "$2" mtu 1496 up
  ip -n "$1" addr add "$5" dev "$2"
}
for ns in egw egwb; do
  switch_port "$ns" eth0
  # egw's MAC is known to transit-lab's counters (what came from egw directly, not routed).
  if [ "$ns" = egw ]; then ip -n egw link set eth0 address 02:7e:00:00:02:01; fi
  # Both tags in the frame, as on a wire: with the outer tag beside the frame (veth's offload)
  # the kernel's MTU check on the way would count 4 bytes less, and a short hop would pass.
  ip netns exec "$ns" ethtool -K eth0 txvlan off >/dev/null
  ip -n "$ns" link add link eth0 name eth0.40 type vlan id 40
  ip -n "$ns" link set eth0.40 up
done
vlan_leg egw eth0.40.201 201 eth0.40 192.0.2.1/24
vlan_leg egw eth0.40.199 199 eth0.40 198.51.100.2/24
ip netns exec egw sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0
ip -n egw route add default via 198.51.100.1
# The guide's egress gateway SNATs its VPC onto the transit network.
ip netns exec egw nft -f - <<'NFT'
table ip egw_snat {
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "eth0.40.199" ip saddr 192.0.2.0/24 masquerade
	}
}
NFT
# Kube-OVN's ACL keeps each egress gateway to the router inside the transit network: egw reaches
# egwb only through the router, whose side of that rule the lab proves.
ip -n egw route add 198.51.100.3/32 via 198.51.100.1
vlan_leg egwb eth0.40.199 199 eth0.40 198.51.100.3/24
ip -n egwb addr add 10.202.0.10/32 dev lo

# What lies beyond the router; its side of the link is made by transit-lab wire.
for address in 10.96.0.10 10.53.0.53 10.123.0.123 10.10.0.5 172.16.0.5 192.168.0.5; do
  ip -n upstream addr add "$address/32" dev lo
done
systemd-run --quiet --unit=qinq-upstream-responder --collect \
  ip netns exec upstream /usr/local/sbin/transit-upstream-responder \
  10.96.0.10 10.53.0.53 10.123.0.123 10.10.0.5 172.16.0.5 192.168.0.5 203.0.113.8

step transit-router
transit-lab create >/dev/null
ip netns exec transit sysctl -qw net.ipv4.ip_forward=1
transit-lab vpc-routes on >/dev/null

# ---------------------------------------------------------------- the faults
step faults
qinq-lab inner-tag off >/dev/null
qinq-lab inner-tag on hv02 eth1
qinq-lab short-hop on
# What the links' first frames taught the bridges goes, as their ageing would make it go.
qinq-lab forget >/dev/null
step finished
echo "provisioned: QinQ lab up (hv01, hv02 bonded; hv03 single NIC; egw, egwb, transit, upstream, guest666), faults present"
qinq-lab state
transit-lab state
