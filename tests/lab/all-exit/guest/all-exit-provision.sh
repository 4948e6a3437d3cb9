#!/usr/bin/env bash
# Builds, inside the fabric VM, the all-exit fabric: three hypervisors that are all exit nodes,
# each with its own IPv6-only BGP-unnumbered uplink to a core router (podman containers on the
# VM's kernel; ../README.md has the drawing and says which parts model which Proxmox output).
#
#   hv01..hv03  FRR: router bgp 45689 (the EVPN ASN), local-as 65021..65023 toward the core,
#               peers activated only in address-family ipv6 unicast (the fabric is IPv6-only);
#               nic5 (link-local only) to the core; vmbr0 management 198.51.100.1N/26, main's
#               IPv4 default via the management gateway 198.51.100.5; vmbr0.51 the VTEPs
#               198.51.100.13N/27 (EVPN full mesh, iBGP 45689); vrf_tdemo (L3VNI 10001) and the
#               vnet tdemo0 192.0.2.1/24 (L2VNI 11001), exit-node FRR (default-originate, no
#               catch-all); forwarding: IPv6 on, IPv4 only on the SDN devices (ip_forward 0);
#               rp_filter 2 (systemd's default)
#   core        FRR AS 65001: BGP unnumbered to each hypervisor (RA on swp1..3), maximum-paths,
#               the IPv4 and IPv6 defaults originated; inet0 203.0.113.1 to the internet
#   internet    203.0.113.8 (namespace; ping, tcp/443, udp/53)
#   mgmt5       198.51.100.5, the management gateway (namespace; routes nowhere)
#   wl1..wl3    the tenant workloads 192.0.2.11..13 and 2001:db8:2::11..13 (namespaces) on tdemo0
#               of hv01..hv03
#
# The core's return to workload N goes to the NEXT hypervisor (a /32 more specific than the
# tenant aggregate: 192.0.2.11 via hv02, .12 via hv03, .13 via hv01), so every return is a
# cross-node return, deterministically, whatever ECMP would hash to.
# Only TEST-NET addresses (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) and link-local IPv6,
# all inside the VM. Re-running it rebuilds everything from scratch.
set -euo pipefail
started=$SECONDS
step() { echo "all-exit-provision: $* ($((SECONDS - started)) s)"; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The fabric lab's node helpers (remove_nodes, start_containers, add_namespaces, veth, tdemo_zone, evpn_zone).
# shellcheck source=../../fabric/guest/fabric-nodes.sh
. "$here/fabric-nodes.sh"
HVS=(hv01 hv02 hv03)
CONTAINERS=(hv01 hv02 hv03 core)
NAMESPACES=(internet mgmt5 wl1 wl2 wl3)

install -m 755 "$here/all-exit-probe" /usr/local/sbin/all-exit-probe
install -m 755 "$here/all-exit-faults" /usr/local/sbin/all-exit-faults
install -m 755 "$here/all-exit-sdn" /usr/local/sbin/all-exit-sdn
install -m 755 "$here/all-exit-bench-tenants" /usr/local/sbin/all-exit-bench-tenants
install -m 755 "$here/lab-internet-responder" /usr/local/sbin/lab-internet-responder
install -m 755 "$here/all-exit-mgmt-relay" /usr/local/sbin/all-exit-mgmt-relay
install -m 755 "$here/all-exit-guard-state" /usr/local/sbin/all-exit-guard-state
install -m 755 "$here/all-exit-tenant" /usr/local/sbin/all-exit-tenant

# ---------------------------------------------------------------- clean slate
systemctl stop all-exit-internet-responder 2>/dev/null || true
remove_nodes "${CONTAINERS[@]}" "${NAMESPACES[@]}"
ip link del msw0 2>/dev/null || true
# The cluster's SDN folder: one folder of the VM, /etc/pve/sdn in every hypervisor, as pmxcfs
# shares /etc/pve: a commit on one node is the running configuration of all, and the SDN lock is
# one token for the cluster.
SDN_SHARED=/var/lib/deevnet-all-exit/pve-sdn
rm -rf "$SDN_SHARED"
install -d -m 755 "$SDN_SHARED" "$NODE_ROOTFS/etc/pve/sdn"   # the mount point, in the nodes' lower layer

# ---------------------------------------------------------------- containers
step containers
NODE_RUN_ARGS=(-v "$SDN_SHARED:/etc/pve/sdn")
start_containers "${HVS[@]}"
NODE_RUN_ARGS=()
start_containers core
add_namespaces "${NAMESPACES[@]}"

# ---------------------------------------------------------------- management switch
step wiring
ip link add msw0 type bridge stp_state 0 forward_delay 0
ip link set msw0 up
for n in "${HVS[@]}" mgmt5; do
  veth "-:$n-m" "$n:eth0"
  ip link set "$n-m" master msw0
done
ip -n mgmt5 addr add 198.51.100.5/26 dev eth0

# ---------------------------------------------------------------- core and internet
ip netns exec core sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
  net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
veth core:inet0 internet:eth0
ip -n core addr add 203.0.113.1/24 dev inet0
# The core keeps the tenants apart (the transit router of the Cozystack guide, the one boundary
# between VPCs): it knows both tenants' aggregates, and refuses to route one to the other.
ip -n core rule add from 192.0.2.0/24 to 10.30.1.0/24 prohibit
ip -n core rule add from 10.30.1.0/24 to 192.0.2.0/24 prohibit
ip -n internet addr add 203.0.113.8/24 dev eth0
ip -n internet route add default via 203.0.113.1
systemd-run --quiet --unit=all-exit-internet-responder --collect \
  ip netns exec internet /usr/local/sbin/lab-internet-responder 203.0.113.8

# ---------------------------------------------------------------- the hypervisors
# hv N: what a Proxmox node with this SDN config has in the kernel (ifupdown2's work).
hv() {
  local i=$1 n=hv0$1
  local ns=(ip netns exec "$n")
  # Only IPv6 forwarding was switched on (the field report); rp_filter 2 is systemd's default.
  "${ns[@]}" sysctl -qw net.ipv4.ip_forward=0 net.ipv6.conf.all.forwarding=1 \
    net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.default.rp_filter=2
  # The uplink to the core: link-local IPv6 only.
  veth "core:swp$i" "$n:nic5"
  ip netns exec "$n" sysctl -qw "net.ipv4.conf.nic5.rp_filter=2"
  # Management: vmbr0, the node's own IPv4 default via the management gateway.
  ip -n "$n" link add vmbr0 type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set eth0 master vmbr0
  ip -n "$n" link set vmbr0 up
  ip -n "$n" addr add "198.51.100.1$i/26" dev vmbr0
  ip -n "$n" route add default via 198.51.100.5 dev vmbr0
  # The VTEPs' VLAN (see the README: FRR 10.3 has no EVPN over IPv6 VTEPs).
  ip -n "$n" link add link vmbr0 name vmbr0.51 type vlan id 51
  ip -n "$n" addr add "198.51.100.13$i/27" dev vmbr0.51
  ip -n "$n" link set vmbr0.51 up
  tdemo_zone "$n" "198.51.100.13$i"
  # The second tenant (Proxmox: zone tother, VNet tother0 10.30.1.1/24), with no standing
  # workload: the fabric proof brings its own.
  evpn_zone "$n" "198.51.100.13$i" tother 1002 10002 11002 10.30.1.1/24 02:de:e0:00:02:01
  # Proxmox's `ip-forward on` on the SDN devices: tenant traffic is routed, the uplink is not.
  for dev in vrf_tdemo vrfbr_tdemo tdemo0 vrf_tother vrfbr_tother tother0; do
    ip netns exec "$n" sysctl -qw "net.ipv4.conf.$dev.forwarding=1"
  done
  # The workload wl<i> 192.0.2.1<i> on the vnet (a VM's tap).
  veth "$n:tap10${i}i0" "wl$i:eth0"
  ip -n "$n" link set "tap10${i}i0" master tdemo0
  ip -n "wl$i" addr add "192.0.2.1$i/24" dev eth0
  ip -n "wl$i" route add default via 192.0.2.1
  # The tenant's IPv6 subnet (issue 27: the /128 host routes EVPN learns are what must not reach
  # the core): the same anycast gateway on every node, as Proxmox's vnet gateway, so no DAD.
  ip -n "$n" addr add 2001:db8:2::1/64 dev tdemo0 nodad
  ip -n "wl$i" addr add "2001:db8:2::1$i/64" dev eth0 nodad
  ip -n "wl$i" route add default via 2001:db8:2::1
}
for i in 1 2 3; do hv "$i"; done

# ---------------------------------------------------------------- the SDN, as Proxmox applied it
# The zone's MTU (1450: VXLAN's 50 bytes inside the underlay's 1500), as ifupdown2 sets it on the
# SDN devices and a VM's tap takes it from its bridge; and the SDN files sdn_check reads.
step 'SDN files'
for i in 1 2 3; do
  for dev in vxlan_tdemo0 vrfvx_tdemo "tap10${i}i0" tdemo0 vrfbr_tdemo vxlan_tother0 vrfvx_tother tother0 vrfbr_tother; do
    ip -n "hv0$i" link set dev "$dev" mtu 1450
  done
  ip -n "wl$i" link set dev eth0 mtu 1450
  /usr/local/sbin/all-exit-sdn "hv0$i"
done

# ---------------------------------------------------------------- FRR
step FRR
podman cp "$here/frr-core.conf" core:/etc/frr/frr.conf
for i in 1 2 3; do
  n=hv0$i peers=
  for j in 1 2 3; do [ "$j" = "$i" ] || peers+=" neighbor 198.51.100.13$j peer-group VTEP\n"; done
  sed -e "s/@NODE@/$n/; s/@VTEP@/198.51.100.13$i/; s/@LOCAL_AS@/6502$i/; s/^@VTEP_PEERS@\$/${peers%\\n}/" \
    "$here/frr-hv.conf.generated.in" >"/tmp/frr-$n.conf.generated"
  podman exec "$n" mkdir -p /etc/deevnet-lab
  podman cp "/tmp/frr-$n.conf.generated" "$n:/etc/deevnet-lab/frr.conf.generated"
  # Proxmox's SDN on the node: FRR's side (lab-sdn-apply), the interfaces' (lab-sdn-ifaces) and
  # the node's reload of both after a commit (all-exit-sdn-reload).
  for tool in lab-sdn-apply lab-sdn-ifaces all-exit-sdn-reload; do
    podman cp "$here/$tool" "$n:/usr/local/sbin/$tool"
  done
  podman exec "$n" sh -c 'chmod 755 /usr/local/sbin/lab-sdn-apply /usr/local/sbin/lab-sdn-ifaces /usr/local/sbin/all-exit-sdn-reload &&
    lab-sdn-apply --print >/etc/frr/frr.conf'
done
for c in "${CONTAINERS[@]}"; do
  podman exec "$c" sh -c 'chown frr:frr /etc/frr/frr.conf && /usr/lib/frr/frrinit.sh start' >"/tmp/frr-start-$c.log" 2>&1 &
done
wait
# Under heavy load frrinit.sh can give up waiting before it loads the configuration (`vtysh -b`),
# leaving the daemons up with none ("% BGP instance not found"), or with part of it (seen at load
# ~12: `router bgp` without its neighbors, `vrf` without its `vni`): load it again (it only adds)
# until every top-level stanza of the file is running.
loaded() { # CONTAINER: every stanza header of its frr.conf is in the running configuration
  podman exec "$1" sh -c "vtysh -c 'show running-config' >/tmp/running.conf 2>/dev/null &&
    grep -E '^(router|vrf|route-map|ip|ipv6|interface) ' /etc/frr/frr.conf | grep -vxF -f /tmp/running.conf | grep -q . && exit 1
    grep -q '^router bgp' /tmp/running.conf && grep -Eq '^ *(neighbor .* (remote-as|interface)|vni) ' /tmp/running.conf"
}
for c in "${CONTAINERS[@]}"; do
  for _ in $(seq 30); do
    loaded "$c" && continue 2
    podman exec "$c" vtysh -b >>"/tmp/frr-start-$c.log" 2>&1 || true
    sleep 2
  done
  echo "all-exit-provision: FRR on $c has no BGP configuration:" >&2
  cat "/tmp/frr-start-$c.log" >&2
  exit 1
done

# The core's deterministic cross-node returns: workload N's /32 via the next hypervisor's nic5
# (its link-local address is fixed by the MAC veth() gave it).
step 'cross-node returns'
for i in 1 2 3; do
  next=$((i % 3 + 1))
  ll=$(ip -n "hv0$next" -6 addr show dev nic5 scope link | sed -n 's/.*inet6 \(fe80::[^/]*\).*/\1/p')
  ip -n core route add "192.0.2.1$i/32" via inet6 "$ll" dev "swp$next"
done

# The fabric proof's workloads (tests/lab/all-exit/README.md, "The fabric proof"), in each
# tenant's subnet: each node's own (.254 on hv01, .253 on hv02, .252 on hv03), returned to that
# node; and one per ordered pair, .2YX of hv0Y, whose returns the core lands on hv0X.
for net in 192.0.2 10.30.1; do
  for y in 1 2 3; do
    for x in 1 2 3; do
      ll=$(ip -n "hv0$x" -6 addr show dev nic5 scope link | sed -n 's/.*inet6 \(fe80::[^/]*\).*/\1/p')
      if [ "$x" = "$y" ]; then address=$net.$((255 - y)); else address=$net.2$y$x; fi
      ip -n core route add "$address/32" via inet6 "$ll" dev "swp$x"
    done
  done
done

# Each hypervisor reachable as an operator reaches a Proxmox node: its sshd on its vmbr0 address,
# from the management network (the fabric_change scenario: all-exit-mgmt-relay from mgmt5), and
# the management stanza's own reload, all-exit-mgmt-apply.
step 'management SSH'
for n in "${HVS[@]}"; do
  podman cp "$here/all-exit-mgmt-apply" "$n:/usr/local/sbin/all-exit-mgmt-apply"
  podman exec "$n" sh -c 'chmod 755 /usr/local/sbin/all-exit-mgmt-apply && /usr/sbin/sshd'
done

step 'waiting for BGP and EVPN'
/usr/local/sbin/all-exit-probe wait-fabric 240
# Each workload announces itself (ARP and ND for its gateway), so EVPN carries its MAC/IPs.
for i in 1 2 3; do
  ip netns exec "wl$i" ping -c 1 -W 1 192.0.2.1 >/dev/null 2>&1 || true
  ip netns exec "wl$i" ping -6 -c 1 -W 1 2001:db8:2::1 >/dev/null 2>&1 || true
done
step finished
echo "provisioned: all-exit fabric up (hv01-hv03, core, internet, wl1-wl3), the field report's faults present"
