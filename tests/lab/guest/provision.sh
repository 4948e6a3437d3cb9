#!/usr/bin/env bash
# Builds, inside the lab VM, the exit node hv02 of the mission with both faults present:
#
#   mgmt1 (10.20.99.1)  mgmt5 (10.20.99.5)      transit (10.20.50.1 on VLAN 50) -- internet (203.0.113.8)
#         \                 /                  /
#          +--- vmbr0 (10.20.99.22) ----------+      vmbr0.50 10.20.50.22 (SNAT)   vmbr0.51 underlay
#
#   vrf_tdemo (table 1001): tdemo0 10.20.129.1/24 -- tap101i0 -- tdemo-1 (10.20.129.10)
#   from Proxmox's SDN files (sdn/: zone tdemo, EVPN, exit node hv02, L3VNI 10001 on
#   vrfvx_tdemo/vrfbr_tdemo, VNet tdemo0 on VNI 11001 via vxlan_tdemo0), applied by lab-sdn-ifaces
#
#   QinQ: bond0 (active-backup: qinq_a, qinq_b) -- netns qinq-peer (the other host)
#         bond0.40 -> vmbr1 (VLAN-aware, vids 199-299) -- qvm0 (pvid 201) -- netns qinq-vm
#
# Re-running it rebuilds everything from scratch. Only addresses inside the VM are used;
# the "internet" is TEST-NET-3 (203.0.113.0/24), the QinQ segment TEST-NET-1 (192.0.2.0/24).
#
# --after-reboot (lab reboot): the topology only, as a node's network configuration builds it
# at boot: no sysctl baseline (what the node persisted in sysctl.d applies, or nothing) and no
# faults put back (FRR runs what it loaded at boot, frr.conf.local stays).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
after_reboot=0
[ "${1:-}" = --after-reboot ] && after_reboot=1

NAMESPACES=(mgmt1 mgmt5 transit internet tdemo-1 qinq-peer qinq-vm)
NODE_LINKS=(vmbr0 vmbr1 bond0 tdemo0 vrf_tdemo vrfbr_tdemo vrfvx_tdemo vxlan_tdemo0 mgmt1-port mgmt5-port transit-port tap101i0 qinq_a qinq_b qvm0)

# ---------------------------------------------------------------- clean slate
systemctl stop lab-internet-responder 2>/dev/null || true
for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
for link in "${NODE_LINKS[@]}"; do ip link del "$link" 2>/dev/null || true; done
# Every device the last SDN apply brought up (zones a test added included), as a reboot loses them.
if [ -f /run/deevnet-lab/sdn.applied ]; then
  for link in $(sed -n 's/^iface \(\S\+\).*/\1/p' /run/deevnet-lab/sdn.applied); do
    ip link del "$link" 2>/dev/null || true
  done
  rm -f /run/deevnet-lab/sdn.applied
fi
# Routes outlive a deleted VRF device: flush its table, or re-adding routes fails.
ip route flush table 1001 2>/dev/null || true
ip route del default 2>/dev/null || true

# ---------------------------------------------------------------- lab commands
install -m 755 "$here/lab-sdn-apply" /usr/local/sbin/lab-sdn-apply
install -m 755 "$here/lab-sdn-ifaces" /usr/local/sbin/lab-sdn-ifaces
install -m 755 "$here/lab-reset-faults" /usr/local/sbin/lab-reset-faults
install -m 755 "$here/lab-fix-faults" /usr/local/sbin/lab-fix-faults
install -m 755 "$here/lab-qinq-peer" /usr/local/sbin/lab-qinq-peer
install -m 755 "$here/lab-internet-responder" /usr/local/sbin/lab-internet-responder
install -m 755 "$here/lab-probe" /usr/local/sbin/lab-probe
install -d /etc/deevnet-lab
install -m 644 "$here/frr.conf.generated" /etc/deevnet-lab/frr.conf.generated

# ---------------------------------------------------------------- sysctl baseline
# A Proxmox SDN node routes: forwarding is on globally. Devices created afterwards inherit
# it from `default`; the transit VLAN is then switched off below (fault 1).
[ "$after_reboot" = 1 ] ||
  sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.forwarding=1 net.ipv4.conf.default.forwarding=1
# VRF sockets: let services bound in the default VRF answer on VRF devices too (as Proxmox).
sysctl -qw net.ipv4.tcp_l3mdev_accept=1 net.ipv4.udp_l3mdev_accept=1

# veth pair with one end in a namespace (named eth0 there, up).
veth_to_ns() {
  local node_end=$1 ns=$2 ns_end=${3:-eth0}
  ip link add "$node_end" type veth peer name "$ns_end" netns "$ns"
  ip link set "$node_end" up
  ip -n "$ns" link set "$ns_end" up
}
for ns in "${NAMESPACES[@]}"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done

# ---------------------------------------------------------------- management: vmbr0
ip link add vmbr0 type bridge stp_state 0 forward_delay 0
ip link set vmbr0 up
ip addr add 10.20.99.22/24 dev vmbr0
for host in 1 5; do
  veth_to_ns "mgmt$host-port" "mgmt$host"
  ip link set "mgmt$host-port" master vmbr0
  ip -n "mgmt$host" addr add "10.20.99.$host/24" dev eth0
done

# ---------------------------------------------------------------- transit: vmbr0.50, underlay vmbr0.51
ip link add link vmbr0 name vmbr0.50 type vlan id 50
ip link add link vmbr0 name vmbr0.51 type vlan id 51
ip addr add 10.20.50.22/24 dev vmbr0.50
ip addr add 10.20.51.22/24 dev vmbr0.51
ip link set vmbr0.50 up
ip link set vmbr0.51 up

# The transit router takes VLAN 50 off its vmbr0 port and routes to the "internet".
veth_to_ns transit-port transit
ip link set transit-port master vmbr0
ip -n transit link add link eth0 name eth0.50 type vlan id 50
ip -n transit addr add 10.20.50.1/24 dev eth0.50
ip -n transit link set eth0.50 up
ip -n transit link add inet0 type veth peer name eth0 netns internet
ip -n transit addr add 203.0.113.1/24 dev inet0
ip -n transit link set inet0 up
ip netns exec transit sysctl -qw net.ipv4.ip_forward=1
# The upstream knows no tenant subnet: only SNATed traffic can come back.
ip -n internet addr add 203.0.113.8/24 dev eth0
ip -n internet link set eth0 up
ip -n internet route add default via 203.0.113.1
systemd-run --quiet --unit=lab-internet-responder --collect \
  ip netns exec internet /usr/local/sbin/lab-internet-responder 203.0.113.8

# The node's own default, as on the real hv02.
ip route add default via 10.20.50.1 dev vmbr0.50

# ---------------------------------------------------------------- exit-node SNAT
nft -f - <<'EOF'
table ip deevnet_lab_nat
delete table ip deevnet_lab_nat
table ip deevnet_lab_nat {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "vmbr0.50" ip saddr 10.20.129.0/24 counter snat to 10.20.50.22 comment "tenant-snat"
  }
}
EOF

# ---------------------------------------------------------------- tenant tdemo: Proxmox's SDN
# The cluster's SDN in Proxmox's files, and the node's own network configuration (the SDN finds
# the local VTEP there). A fresh provision is a node after `pvesh set /cluster/sdn`: it writes
# /etc/network/interfaces.d/sdn from .running-config and applies it (ifreload -a). After a reboot
# the node applies the interfaces.d/sdn it has, as networking.service would at boot.
if [ "$after_reboot" = 0 ]; then
  rm -rf /etc/pve/sdn
  install -d -m 755 /etc/pve/sdn /etc/network/interfaces.d
  for f in zones vnets subnets controllers; do install -m 640 "$here/sdn/$f.cfg" "/etc/pve/sdn/$f.cfg"; done
  install -m 640 "$here/sdn/running-config" /etc/pve/sdn/.running-config
  install -m 644 "$here/sdn/interfaces" /etc/network/interfaces
  lab-sdn-ifaces reload
else
  lab-sdn-ifaces apply
fi
# The guest's NIC: qemu-server plugs tap101i0 into the VNet bridge with the bridge's MTU.
veth_to_ns tap101i0 tdemo-1
ip link set tap101i0 mtu "$(cat /sys/class/net/tdemo0/mtu)"
ip -n tdemo-1 link set eth0 mtu "$(cat /sys/class/net/tdemo0/mtu)"
ip link set tap101i0 master tdemo0
ip -n tdemo-1 addr add 10.20.129.10/24 dev eth0
ip -n tdemo-1 route add default via 10.20.129.1

# ---------------------------------------------------------------- QinQ topology
ip link add bond0 type bond mode active-backup miimon 100
for leg in a b; do
  ip link add "qinq_$leg" type veth peer name "peer_$leg" netns qinq-peer
  ip link set "qinq_$leg" master bond0
done
ip link set bond0 type bond primary qinq_a
ip link set bond0 up
ip link add link bond0 name bond0.40 type vlan id 40
ip link set bond0.40 up
ip link add vmbr1 type bridge vlan_filtering 1 vlan_default_pvid 1 stp_state 0 forward_delay 0
ip link set bond0.40 master vmbr1
bridge vlan add dev bond0.40 vid 199-299
ip link set vmbr1 up
# A guest NIC on VLAN 201, so the peer has someone to talk to there.
veth_to_ns qvm0 qinq-vm
ip link set qvm0 master vmbr1
bridge vlan add dev qvm0 vid 201 pvid untagged
ip -n qinq-vm addr add 192.0.2.10/24 dev eth0

# The other host: its own bond over the two veth ends, outer VLAN 40, inner VLAN 201.
# No IPv6 there: its autoconf chatter would teach vmbr1 the peer's MAC on its own.
for ns in qinq-peer qinq-vm; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip -n qinq-peer link add pbond type bond mode active-backup miimon 100
for leg in a b; do ip -n qinq-peer link set "peer_$leg" master pbond; done
ip -n qinq-peer link set pbond type bond primary peer_a
ip -n qinq-peer link set pbond up
ip -n qinq-peer link add link pbond name pbond.40 type vlan id 40
ip -n qinq-peer link set pbond.40 up
ip -n qinq-peer link add link pbond.40 name pbond.40.201 type vlan id 201
ip -n qinq-peer link set pbond.40.201 up
lab-qinq-peer tagged >/dev/null

# ---------------------------------------------------------------- FRR and both faults
if [ "$after_reboot" = 1 ]; then
  # udev has run for every device made above (the role's rules included) before this returns.
  udevadm settle
  echo "topology rebuilt after the reboot; FRR and sysctl as the node booted them"
  exit 0
fi
lab-reset-faults

echo "provisioned: hv02 topology up, both faults present"
