#!/usr/bin/env bash
# The mission's decision record, replayed on the lab node:
#   1. both faults: the workload's ping to the internet is 100% lost while the SNAT counter climbs;
#   2. forwarding fixed by hand, no VRF default: tenant packets to 10.20.99.5 show up on the
#      management bridge vmbr0, unSNATed;
#   3. both fixes (sysctl.d file + frr.conf.local through the SDN apply): ping, TCP and DNS-like
#      UDP succeed inside the workload namespace, and vmbr0 sees zero tenant-sourced packets.
# The fixes are applied with plain shell here; the project's modules will do it later.
. "$LAB_DIR/lib/testlib.sh"

PINGS=3

echo "== state 1: both faults (as provisioned)"
out=$("$LAB" run "lab-probe state; lab-probe internet $PINGS")
sed 's/^/  | /' <<<"$out"
check "vmbr0.50 forwarding is 0" is_eq "$(figure vmbr0_50_forwarding "$out")" 0
check "vrf_tdemo has no default route" is_eq "$(figure vrf_default_routes "$out")" 0
check "vrf_tdemo has no unreachable catch-all" is_eq "$(figure vrf_unreachable_routes "$out")" 0
check "workload ping to 203.0.113.8: 100% loss" is_eq "$(figure ping_loss_percent "$out")" 100
check "SNAT counter climbed by one per ping flow" is_ge "$(figure snat_counter_delta "$out")" "$PINGS"

echo "== state 2: forwarding fixed by hand, still no VRF default"
out=$("$LAB" run bash -s <<GUEST
set -e
lab-fix-faults forwarding
lab-probe state
lab-probe leak $PINGS
GUEST
)
sed 's/^/  | /' <<<"$out"
check "vmbr0.50 forwarding is 1" is_eq "$(figure vmbr0_50_forwarding "$out")" 1
check "tenant packets leak onto vmbr0 unSNATed (>= $PINGS)" \
  is_ge "$(figure tenant_packets_on_vmbr0 "$out")" "$PINGS"

echo "== state 3: both fixes (VRF default through frr.conf.local and the SDN apply)"
out=$("$LAB" run bash -s <<GUEST
set -e
lab-fix-faults --verbose vrf-default
echo "folded_vrf_block=\$(awk '/^vrf vrf_tdemo\$/,/^exit-vrf\$/' /etc/frr/frr.conf | paste -sd'|')"
lab-probe state
lab-probe internet $PINGS
lab-probe leak $PINGS
GUEST
)
sed 's/^/  | /' <<<"$out"
check "SDN apply folded the stanza into the generated vrf block" \
  test "$(figure folded_vrf_block "$out")" = "vrf vrf_tdemo| vni 10001| ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default|exit-vrf"
check "vrf_tdemo default via 10.20.50.1 on vmbr0.50" \
  grep -q "via 10.20.50.1 dev vmbr0.50" <<<"$(figure vrf_default_route "$out")"
check "workload ping to 203.0.113.8: all $PINGS answered" is_eq "$(figure ping_received "$out")" "$PINGS"
check "workload TCP connection to 203.0.113.8:443 answered" test "$(figure tcp_443 "$out")" = ok
check "workload DNS-like query to 203.0.113.8:53 answered" test "$(figure udp_53 "$out")" = ok
check "zero tenant-sourced packets on vmbr0" is_eq "$(figure tenant_packets_on_vmbr0 "$out")" 0

finish
