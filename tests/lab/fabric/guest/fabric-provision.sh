#!/usr/bin/env bash
# Builds, inside the fabric VM, a two-member EVPN/VXLAN fabric whose nodes are podman containers
# (the VM's kernel has VRF, VXLAN and 802.1Q; each container has its own network namespace):
#
#            fsw0 (the data-centre switch: a plain bridge in the VM, tagged frames pass)
#     ┌──────────┬─────────────┬───────────────┬──────────┐
#   hv01        hv02         transit          mgmt5
#   vmbr0 .11   vmbr0 .12    eth0.50 .65      198.51.100.5   management 198.51.100.0/26 (untagged)
#   vmbr0.51    vmbr0.51     inet0 203.0.113.1 ── internet 203.0.113.8 (ping, tcp/443, udp/53)
#    .131 ═VXLAN═ .132       underlay 198.51.100.128/27 (VLAN 51): VNI 10001 (L3), 11001 (L2)
#   tdemo0      vmbr0.50 .66 transit 198.51.100.64/28 (VLAN 50), SNAT, node default via .65
#   192.0.2.1   tdemo0 192.0.2.1 (anycast gateway, the same MAC on both)
#     │
#   tap101i0 ── tdemo-1 192.0.2.10 (the tenant workload, behind hv01)
#
# hv01 is a plain member (unreachable catch-all in vrf_tdemo, as Proxmox renders a non-exit
# node), hv02 the exit node (FRR's generated config: default-originate, import vrf) with both
# faults of the mission: vmbr0.50 does not forward, vrf_tdemo has no default. Containers: hv01,
# hv02, transit, tdemo-1; the internet host and the management host are plain namespaces.
# Only TEST-NET addresses (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24), all inside the VM.
# Re-running it rebuilds everything from scratch.
set -euo pipefail
started=$SECONDS
step() { echo "fabric-provision: $* ($((SECONDS - started)) s)"; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fabric-nodes.sh
. "$here/fabric-nodes.sh"
CONTAINERS=(hv01 hv02 transit tdemo-1)
NAMESPACES=(internet mgmt5)

install -m 755 "$here/fabric-probe" /usr/local/sbin/fabric-probe
install -m 755 "$here/lab-internet-responder" /usr/local/sbin/lab-internet-responder

# ---------------------------------------------------------------- clean slate
systemctl stop fabric-internet-responder 2>/dev/null || true
remove_nodes "${CONTAINERS[@]}" "${NAMESPACES[@]}"
ip link del fsw0 2>/dev/null || true

# ---------------------------------------------------------------- containers
step containers
start_containers "${CONTAINERS[@]}"
add_namespaces "${NAMESPACES[@]}"

# ---------------------------------------------------------------- the switch
step wiring
ip link add fsw0 type bridge stp_state 0 forward_delay 0
ip link set fsw0 up
for n in hv01 hv02 transit mgmt5; do
  veth "-:$n-p" "$n:eth0"
  ip link set "$n-p" master fsw0
done
ip -n mgmt5 addr add 198.51.100.5/26 dev eth0

# ---------------------------------------------------------------- transit router and internet
ip -n transit link add link eth0 name eth0.50 type vlan id 50
ip -n transit addr add 198.51.100.65/28 dev eth0.50
ip -n transit link set eth0.50 up
veth transit:inet0 internet:eth0
ip -n transit addr add 203.0.113.1/24 dev inet0
ip netns exec transit sysctl -qw net.ipv4.ip_forward=1
# The upstream knows no tenant subnet: only SNATed traffic can come back.
ip -n internet addr add 203.0.113.8/24 dev eth0
ip -n internet route add default via 203.0.113.1
systemd-run --quiet --unit=fabric-internet-responder --collect \
  ip netns exec internet /usr/local/sbin/lab-internet-responder 203.0.113.8

# ---------------------------------------------------------------- the nodes
# node N MGMT UNDERLAY: vmbr0 with the management address, vmbr0.51 the underlay (VTEP),
# vrf_tdemo (table 1001) with its L3VNI 10001 and the vnet tdemo0 on L2VNI 11001.
node() {
  local n=$1 mgmt=$2 vtep=$3
  local ns=(ip netns exec "$n")
  # A Proxmox SDN node routes: forwarding on globally, inherited by devices created later.
  "${ns[@]}" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.forwarding=1 net.ipv4.conf.default.forwarding=1
  "${ns[@]}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$n" link add vmbr0 type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set eth0 master vmbr0
  ip -n "$n" link set vmbr0 up
  ip -n "$n" addr add "$mgmt/26" dev vmbr0
  ip -n "$n" link add link vmbr0 name vmbr0.51 type vlan id 51
  ip -n "$n" addr add "$vtep/27" dev vmbr0.51
  ip -n "$n" link set vmbr0.51 up

  tdemo_zone "$n" "$vtep"
}
node hv01 198.51.100.11 198.51.100.131
node hv02 198.51.100.12 198.51.100.132

# hv01, not an exit node: the low-priority catch-all Proxmox adds, so nothing falls through to main.
ip -n hv01 route add vrf vrf_tdemo unreachable default metric 4278198272
# The tenant workload behind hv01.
veth hv01:tap101i0 tdemo-1:eth0
ip -n hv01 link set tap101i0 master tdemo0
ip -n tdemo-1 addr add 192.0.2.10/24 dev eth0
ip -n tdemo-1 route add default via 192.0.2.1

# hv02, the exit node: the transit VLAN, its own default via the transit router, SNAT.
ip -n hv02 link add link vmbr0 name vmbr0.50 type vlan id 50
ip -n hv02 addr add 198.51.100.66/28 dev vmbr0.50
ip -n hv02 link set vmbr0.50 up
ip -n hv02 route add default via 198.51.100.65 dev vmbr0.50
ip netns exec hv02 nft -f - <<'NFT'
table ip deevnet_lab_nat {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "vmbr0.50" ip saddr 192.0.2.0/24 counter snat to 198.51.100.66 comment "tenant-snat"
  }
}
NFT
# Fault 1: the transit VLAN is node-owned and created after boot: nothing sets forwarding on it.
ip netns exec hv02 sysctl -qw net.ipv4.conf.vmbr0/50.forwarding=0

# ---------------------------------------------------------------- FRR
step FRR
# hv01 runs its generated config as it is; hv02 gets it through lab-sdn-apply (Proxmox's merge of
# frr.conf.local, which the role writes), as on the single-node lab.
podman cp "$here/frr-hv01.conf" hv01:/etc/frr/frr.conf
podman exec hv02 mkdir -p /etc/deevnet-lab
podman cp "$here/frr-hv02.conf.generated" hv02:/etc/deevnet-lab/frr.conf.generated
podman cp "$here/lab-sdn-apply" hv02:/usr/local/sbin/lab-sdn-apply
podman exec hv02 sh -c 'chmod 755 /usr/local/sbin/lab-sdn-apply && lab-sdn-apply --print >/etc/frr/frr.conf'
for n in hv01 hv02; do
  podman exec "$n" sh -c 'chown frr:frr /etc/frr/frr.conf && /usr/lib/frr/frrinit.sh start' >/dev/null 2>&1 &
done
wait

step 'waiting for EVPN'
/usr/local/sbin/fabric-probe wait-evpn 180
step finished
echo "provisioned: fabric up (hv01, hv02, transit, tdemo-1), both faults present on hv02"
