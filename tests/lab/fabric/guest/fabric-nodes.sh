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
# its own sysctls and runs FRR. :O: a throw-away overlay on the shared node rootfs.
start_containers() {
  local c
  for c; do
    podman run -d --name "$c" --hostname "$c" --network none --privileged --ulimit nofile=1024:1024 \
      --rootfs "$NODE_ROOTFS:O" python3 -c "$NODE_INIT" >/dev/null
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
tdemo_zone() {
  local n=$1 vtep=$2 dev
  ip -n "$n" link add vrf_tdemo type vrf table 1001
  ip -n "$n" link set vrf_tdemo up
  # The zone's L3VNI (Proxmox: vrfbr_<zone> + vrfvx_<zone>).
  ip -n "$n" link add vrfbr_tdemo type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set vrfbr_tdemo master vrf_tdemo
  ip -n "$n" link add vrfvx_tdemo type vxlan id 10001 local "$vtep" dstport 4789 nolearning
  ip -n "$n" link set vrfvx_tdemo master vrfbr_tdemo
  # The vnet: its bridge is the subnet's gateway, the same address and MAC on every node.
  ip -n "$n" link add tdemo0 type bridge stp_state 0 forward_delay 0
  ip -n "$n" link set tdemo0 address "$GW_MAC" master vrf_tdemo
  ip -n "$n" addr add 192.0.2.1/24 dev tdemo0
  ip -n "$n" link add vxlan_tdemo0 type vxlan id 11001 local "$vtep" dstport 4789 nolearning
  ip -n "$n" link set vxlan_tdemo0 master tdemo0
  for dev in vrfvx_tdemo vxlan_tdemo0; do
    ip netns exec "$n" bridge link set dev "$dev" neigh_suppress on learning off
  done
  for dev in vrfbr_tdemo vrfvx_tdemo tdemo0 vxlan_tdemo0; do ip -n "$n" link set "$dev" up; done
}
