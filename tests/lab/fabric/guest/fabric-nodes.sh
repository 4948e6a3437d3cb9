# Sourced by the provisioning scripts of the container labs (fabric-provision.sh here,
# ../../all-exit/guest/all-exit-provision.sh): nodes as podman containers on the shared node root
# filesystem, plain namespaces, and the veth pairs that wire them.

NODE_ROOTFS=/var/lib/deevnet-fabric/node

# PID 1 of a node: reaps the orphans FRR's daemons leave when they restart (a plain `sleep` would
# keep them as zombies, and frrinit.sh would wait for them forever); /run/sshd for `sshd -i`.
NODE_INIT='
import os, signal, time
os.makedirs("/run/sshd", exist_ok=True)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(1)
'

# remove_nodes NAME...: each container and namespace of that name, gone (nothing if absent).
remove_nodes() {
  local n
  for n; do
    podman rm -f -t 0 "$n" >/dev/null 2>&1 || true
    ip netns del "$n" 2>/dev/null || true
  done
}

# start_containers NAME...: a node container each, its namespace attached under its name.
# --network none: the wiring is the only network a container has. --privileged: a node writes
# its own sysctls and runs FRR. :O: a throw-away overlay on the shared node rootfs. The array
# NODE_RUN_ARGS, when set, adds podman run options (a folder the nodes share: -v HOST:PATH).
start_containers() {
  local c
  for c; do
    podman run -d --name "$c" --hostname "$c" --network none --privileged --ulimit nofile=1024:1024 \
      ${NODE_RUN_ARGS[@]+"${NODE_RUN_ARGS[@]}"} --rootfs "$NODE_ROOTFS:O" python3 -c "$NODE_INIT" >/dev/null
    ip netns attach "$c" "$(podman inspect -f '{{.State.Pid}}' "$c")"
    ip -n "$c" link set lo up
  done
}

# add_namespaces NAME...: plain network namespaces (hosts that run nothing but a responder).
add_namespaces() {
  local ns
  for ns; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
  done
}

# veth NS_A:NAME_A NS_B:NAME_B (a namespace "-" is the VM itself); both ends up. The MACs are
# set here: udev's MACAddressPolicy=persistent would give every pair made under the same
# temporary names the same two addresses (and so the same IPv6 link-local addresses).
veth_count=0
veth() {
  local a_ns=${1%%:*} a=${1#*:} b_ns=${2%%:*} b=${2#*:}
  veth_count=$((veth_count + 1))
  ip link add fab-tmp-a address "$(printf '02:fa:b0:00:%02x:0a' "$veth_count")" type veth \
    peer name fab-tmp-b address "$(printf '02:fa:b0:00:%02x:0b' "$veth_count")"
  if [ "$a_ns" = - ]; then ip link set fab-tmp-a name "$a"; else ip link set fab-tmp-a netns "$a_ns" name "$a"; fi
  if [ "$b_ns" = - ]; then ip link set fab-tmp-b name "$b"; else ip link set fab-tmp-b netns "$b_ns" name "$b"; fi
  if [ "$a_ns" = - ]; then ip link set "$a" up; else ip -n "$a_ns" link set "$a" up; fi
  if [ "$b_ns" = - ]; then ip link set "$b" up; else ip -n "$b_ns" link set "$b" up; fi
}

# tdemo_zone NODE VTEP: the SDN zone tdemo on a node, as ifupdown2 applies Proxmox's EVPN config:
# vrf_tdemo (table 1001) with its L3VNI 10001 (vrfbr_tdemo + vrfvx_tdemo), and the vnet tdemo0
# on L2VNI 11001, the subnet's gateway 192.0.2.1 with the same MAC on every node.
GW_MAC=02:de:e0:00:01:01
tdemo_zone() { evpn_zone "$1" "$2" tdemo 1001 10001 11001 192.0.2.1/24 "$GW_MAC"; }

# evpn_zone NODE VTEP ZONE TABLE L3VNI L2VNI GATEWAY MAC: what ifupdown2 makes of an EVPN zone
# ZONE and its VNet ZONE0: the VRF vrf_ZONE (TABLE), the L3VNI (Proxmox: vrfbr_ZONE + vrfvx_ZONE)
# and the VNet's bridge, which is the subnet's gateway with the same address and MAC on every
# node, with its L2VNI's VXLAN port.
evpn_zone() {
  local n=$1 vtep=$2 zone=$3 table=$4 l3vni=$5 l2vni=$6 gateway=$7 mac=$8 dev
  local vrf=vrf_$zone vnet=${zone}0
  ip -n "$n" link add "$vrf" type vrf table "$table"
  ip -n "$n" link set "$vrf" up
  ip -n "$n" link add "vrfbr_$zone" type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set "vrfbr_$zone" master "$vrf"
  ip -n "$n" link add "vrfvx_$zone" type vxlan id "$l3vni" local "$vtep" dstport 4789 nolearning
  ip -n "$n" link set "vrfvx_$zone" master "vrfbr_$zone"
  ip -n "$n" link add "$vnet" type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set "$vnet" address "$mac" master "$vrf"
  ip -n "$n" addr add "$gateway" dev "$vnet"
  ip -n "$n" link add "vxlan_$vnet" type vxlan id "$l2vni" local "$vtep" dstport 4789 nolearning
  ip -n "$n" link set "vxlan_$vnet" master "$vnet"
  for dev in "vrfvx_$zone" "vxlan_$vnet"; do
    ip netns exec "$n" bridge link set dev "$dev" neigh_suppress on learning off
  done
  for dev in "vrfbr_$zone" "vrfvx_$zone" "$vnet" "vxlan_$vnet"; do ip -n "$n" link set "$dev" up; done
}
