#!/usr/bin/env bash
# QinQ smoke check: the shape of the node's uplink (bond0 active-backup, bond0.40, VLAN-aware
# vmbr1 with 199-299), then where vmbr1 learns the peer's MAC: in VLAN 201 while the peer tags
# correctly, in VLAN 1 (the uplink's PVID) once the peer drops its inner tag.
. "$LAB_DIR/lib/testlib.sh"

out=$("$LAB" run bash -s <<'GUEST'
set -e
echo "bond_mode=$(sed -n 's/^Bonding Mode: //p' /proc/net/bonding/bond0)"
echo "bond_slaves=$(sed -n 's/^Slave Interface: //p' /proc/net/bonding/bond0 | paste -sd,)"
echo "bond0_40=$(ip -j -d link show bond0.40 | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]["linkinfo"]["info_data"]; print(d["protocol"], d["id"])')"
echo "vmbr1_vlan_filtering=$(ip -j -d link show vmbr1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["linkinfo"]["info_data"]["vlan_filtering"])')"
# VLANs of the uplink port, consecutive ones written as ranges (199-299).
echo "uplink_vids=$(bridge -j vlan show dev bond0.40 | python3 -c '
import json, sys
vids, ranges = [], []
for port in json.load(sys.stdin):
    for v in port["vlans"]:
        vids += range(v["vlan"], v.get("vlanEnd", v["vlan"]) + 1)
for vid in sorted(vids):
    if ranges and ranges[-1][1] == vid - 1:
        ranges[-1][1] = vid
    else:
        ranges.append([vid, vid])
print(",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges))')"
peer_mac=$(ip netns exec qinq-peer cat /sys/class/net/pbond/address)
echo "peer_mac=$peer_mac"
# VLANs in which vmbr1 has learned the peer's MAC on the uplink, after a flush and fresh traffic.
learned_vlans() {
  lab-qinq-peer "$1" >/dev/null
  ip link set dev vmbr1 type bridge fdb_flush
  lab-qinq-peer send
  bridge -j fdb show br vmbr1 | python3 -c '
import json, sys
mac = sys.argv[1]
vlans = sorted({e.get("vlan", 0) for e in json.load(sys.stdin)
                if e["mac"] == mac and e.get("ifname") == "bond0.40" and "permanent" not in e.get("state", "")})
print(",".join(map(str, vlans)) or "none")' "$peer_mac"
}
echo "learned_tagged=$(learned_vlans tagged)"
echo "learned_untagged=$(learned_vlans untagged)"
echo "learned_tagged_again=$(learned_vlans tagged)"
GUEST
)
sed 's/^/  | /' <<<"$out"
check "bond0 is active-backup" grep -q "active-backup" <<<"$(figure bond_mode "$out")"
check "bond0 has two slaves" test "$(figure bond_slaves "$out")" = "qinq_a,qinq_b"
check "bond0.40 is 802.1Q id 40" test "$(figure bond0_40 "$out")" = "802.1Q 40"
check "vmbr1 is VLAN-aware" is_eq "$(figure vmbr1_vlan_filtering "$out")" 1
check "uplink carries 199-299 (and PVID 1)" test "$(figure uplink_vids "$out")" = "1,199-299"
check "peer MAC learned in VLAN 201 when tagged" test "$(figure learned_tagged "$out")" = 201
check "peer MAC learned in VLAN 1 when the inner tag is dropped" test "$(figure learned_untagged "$out")" = 1
check "back in VLAN 201 when tagging again" test "$(figure learned_tagged_again "$out")" = 201

finish
