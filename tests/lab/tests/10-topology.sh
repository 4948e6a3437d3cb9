#!/usr/bin/env bash
# The provisioned node has the mission's names and addresses, FRR runs the exit-node config,
# and nothing from the VM has a way out: the only NIC is QEMU's restricted user-mode one.
. "$LAB_DIR/lib/testlib.sh"

out=$("$LAB" run bash -s <<'GUEST'
addr() { ip -4 -br addr show dev "$1" | awk '{print $3}'; }
ns_addr() { ip -n "$1" -4 -br addr show | awk -v d="$2" '$1 ~ "^"d {print $3}'; }
echo "vmbr0=$(addr vmbr0)"
echo "vmbr0_50=$(addr vmbr0.50)"
echo "vmbr0_50_vlan=$(ip -d link show vmbr0.50 | grep -o 'vlan protocol 802.1Q id [0-9]*')"
echo "vmbr0_51_vlan=$(ip -d link show vmbr0.51 | grep -o 'vlan protocol 802.1Q id [0-9]*')"
echo "tdemo0=$(addr tdemo0)"
echo "tdemo0_master=$(ip -j link show tdemo0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["master"])')"
echo "vrf_table=$(ip -j -d link show vrf_tdemo | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["linkinfo"]["info_data"]["table"])')"
echo "mgmt1=$(ns_addr mgmt1 eth0)"
echo "mgmt5=$(ns_addr mgmt5 eth0)"
echo "transit=$(ns_addr transit eth0.50)"
echo "internet=$(ns_addr internet eth0)"
echo "workload=$(ns_addr tdemo-1 eth0)"
echo "main_default=$(ip route show default)"
echo "snat_rule=$(nft list chain ip deevnet_lab_nat postrouting | grep -o 'oifname "vmbr0.50".*snat to 10.20.50.22')"
echo "node_pings_mgmt5=$(ping -c 1 -W 2 10.20.99.5 >/dev/null && echo ok || echo failed)"
echo "node_pings_internet=$(ping -c 1 -W 2 203.0.113.8 >/dev/null && echo ok || echo failed)"
running=$(vtysh -c 'show running-config')
echo "frr_vni=$(grep -c '^ vni 10001$' <<<"$running")"
echo "frr_vrf_router=$(grep -c '^router bgp 65020 vrf vrf_tdemo$' <<<"$running")"
echo "frr_default_originate=$(grep -c '^  default-originate ipv4$' <<<"$running")"
echo "frr_daemons=$(for d in zebra bgpd staticd; do pgrep -x "$d" >/dev/null && echo -n "$d "; done)"
echo "nics=$(ls /sys/class/net | while read -r n; do [ -e "/sys/class/net/$n/device" ] && echo "$n"; done | paste -sd,)"
GUEST
)
sed 's/^/  | /' <<<"$out"
check "vmbr0 is 10.20.99.22/24" test "$(figure vmbr0 "$out")" = 10.20.99.22/24
check "vmbr0.50 is 10.20.50.22/24, VLAN 50" test "$(figure vmbr0_50 "$out") $(figure vmbr0_50_vlan "$out")" = "10.20.50.22/24 vlan protocol 802.1Q id 50"
check "vmbr0.51 is VLAN 51" test "$(figure vmbr0_51_vlan "$out")" = "vlan protocol 802.1Q id 51"
check "tdemo0 is 10.20.129.1/24 in vrf_tdemo" test "$(figure tdemo0 "$out") $(figure tdemo0_master "$out")" = "10.20.129.1/24 vrf_tdemo"
check "vrf_tdemo uses table 1001" is_eq "$(figure vrf_table "$out")" 1001
check "management hosts at .1 and .5" test "$(figure mgmt1 "$out") $(figure mgmt5 "$out")" = "10.20.99.1/24 10.20.99.5/24"
check "transit router at 10.20.50.1" test "$(figure transit "$out")" = 10.20.50.1/24
check "internet host at 203.0.113.8 (TEST-NET-3)" test "$(figure internet "$out")" = 203.0.113.8/24
check "workload tdemo-1 at 10.20.129.10" test "$(figure workload "$out")" = 10.20.129.10/24
check "node default via the transit router" grep -q "via 10.20.50.1 dev vmbr0.50" <<<"$(figure main_default "$out")"
check "SNAT rule on vmbr0.50 to 10.20.50.22" test "$(figure snat_rule "$out")" != MISSING
check "node reaches a management host" test "$(figure node_pings_mgmt5 "$out")" = ok
check "node reaches the internet host" test "$(figure node_pings_internet "$out")" = ok
check "FRR: vrf vrf_tdemo has vni 10001" is_eq "$(figure frr_vni "$out")" 1
check "FRR: router bgp 65020 vrf vrf_tdemo" is_eq "$(figure frr_vrf_router "$out")" 1
check "FRR: default-originate ipv4 (exit node)" is_eq "$(figure frr_default_originate "$out")" 1
check "FRR: zebra, bgpd, staticd running" test "$(figure frr_daemons "$out")" = "zebra bgpd staticd "
check "one physical NIC only (QEMU user-mode, restrict=on)" is_eq "$(figure nics "$out" | tr ',' '\n' | wc -l)" 1
check "every QEMU netdev has restrict=on" \
  bash -c "tr '\0' ' ' </proc/$(cat "$LAB_RUN_DIR/qemu.pid")/cmdline | grep -o -- '-netdev [^ ]*' | grep -v -c restrict=on | grep -qx 0"

finish
