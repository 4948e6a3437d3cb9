#!/usr/bin/env bash
# deevnet.net.egress_probe on the lab node (real VRF, real SNAT, the incident's topology): in
# each of the mission's three states its verdict agrees with what `lab-probe` measures inside
# the real workload tdemo-1 and with tcpdump on the management bridge vmbr0:
#   1. both faults: no reply comes back (replies arrive on vmbr0.50 and are not forwarded),
#      and management-bound tenant packets leave by vmbr0 untranslated;
#   2. forwarding fixed only: replies come back, the leak by vmbr0 stays;
#   3. both fixed: every target answers, nothing on vmbr0; the verdict passes.
# After every run nothing of the probe remains (no dvprobe link, no named namespace, no
# address or route of the workload), also after kill -9 mid-probe followed by a second run.
# Bad input is refused, leaving nothing. The runner puts both faults back afterwards.
. "$LAB_DIR/lib/testlib.sh"

# Built on this host, whose glibc is not newer than the guest's.
(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p egress_probe)
"$LAB" copy "$REPO_ROOT/target/release/egress_probe" /usr/local/bin/egress_probe

PINGS=3

# Guest-side helpers, sent ahead of each state's commands:
#   probe NAME JSON   runs the module (run_module, lib/testlib.sh), prints NAME_rc, NAME_verdict, NAME_received (of the
#                     first target), NAME_vmbr0 (probe packets that left by vmbr0),
#                     NAME_transit_replies (replies seen arriving on vmbr0.50), NAME_msg
#   leftovers         prints leftovers=N: dvprobe links, dvprobe namespaces, the workload's
#                     address or routes anywhere on the node
GUEST_HELPER="$GUEST_RUN_MODULE"$(cat <<'EOF'

probe_figures=$(cat <<'PY'
interfaces = {i["name"]: i for i in r.get("interfaces", [])}
out("verdict", r.get("verdict", "refused"))
out("changed", str(r.get("changed")).lower())
if r.get("targets"):
    out("received", r["targets"][0]["received"])
out("vmbr0", interfaces.get("vmbr0", {}).get("packets", "none"))
out("transit_replies", interfaces.get("vmbr0.50", {}).get("replies", "none"))
out("transit_translated", str(interfaces.get("vmbr0.50", {}).get("translated")).lower())
out("msg", r.get("msg", "").replace(chr(10), " | "))
PY
)
probe() { run_module egress_probe "$1" "$2" "$probe_figures"; }
leftovers() {
  local n=0
  n=$((n + $(ip -o link | grep -c dvprobe || true)))
  n=$((n + $(ip netns list | grep -c dvprobe || true)))
  n=$((n + $(ip -o addr | grep -c '10\.20\.129\.250' || true)))
  n=$((n + $(ip route show table all | grep -c '10\.20\.129\.250' || true)))
  echo "leftovers=$n"
}
EOF
)

MISSION="{\"vrf\": \"vrf_tdemo\", \"address\": \"10.20.129.250/24\", \"count\": $PINGS, \"timeout\": 2,
  \"expect_egress_interface\": \"vmbr0.50\",
  \"targets\": [{\"address\": \"203.0.113.8\"}, {\"address\": \"10.20.99.5\", \"expect\": \"none\"}]}"

# state_checks NAME OUTPUT: the module's figures against the workload's and tcpdump's.
state_checks() {
  local out=$2
  check "$1: module's replies = tdemo-1's ping replies ($(figure ping_received "$out"))" \
    is_eq "$(figure m_received "$out")" "$(figure ping_received "$out")"
  check "$1: module's packets on vmbr0 = tcpdump's tenant packets on vmbr0 ($(figure tenant_packets_on_vmbr0 "$out"))" \
    is_eq "$(figure m_vmbr0 "$out")" "$(figure tenant_packets_on_vmbr0 "$out")"
  check "$1: changed is false" test "$(figure m_changed "$out")" = false
  check "$1: nothing of the probe remains" is_eq "$(figure leftovers "$out")" 0
}

run_state() {
  "$LAB" run bash -s <<GUEST
$GUEST_HELPER
$1
lab-probe internet $PINGS
lab-probe leak $PINGS
probe m '$MISSION'
leftovers
GUEST
}

echo "== state 1: both faults (as provisioned)"
out=$(run_state ":")
sed 's/^/  | /' <<<"$out"
state_checks "state 1" "$out"
check "state 1: verdict failed" test "$(figure m_verdict "$out")" = failed
check "state 1: replies came back to vmbr0.50 and were not forwarded" \
  grep -q "0/$PINGS replies (no reply) while traffic left by vmbr0.50 and [0-9]* repl[a-z]* came back to it: replies are not forwarded back" <<<"$(figure m_msg "$out")"
check "state 1: the transit translated the source" test "$(figure m_transit_translated "$out")" = true
check "state 1: the leak is named" grep -q "$PINGS tenant packets left by vmbr0 untranslated" <<<"$(figure m_msg "$out")"

echo "== state 2: forwarding fixed by hand, still no VRF default"
out=$(run_state "lab-fix-faults forwarding")
sed 's/^/  | /' <<<"$out"
state_checks "state 2" "$out"
check "state 2: verdict failed, only for the leak" \
  test "$(figure m_verdict "$out"):$(figure m_msg "$out")" = "failed:$PINGS tenant packets left by vmbr0 untranslated"

echo "== state 3: both fixes"
out=$(run_state "lab-fix-faults vrf-default")
sed 's/^/  | /' <<<"$out"
state_checks "state 3" "$out"
check "state 3: verdict passed" test "$(figure m_verdict "$out")" = passed
check "state 3: all $PINGS answered" is_eq "$(figure m_received "$out")" "$PINGS"

echo "== kill -9 mid-probe, then a second run (state 3 still)"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
printf '%s' '{"vrf": "vrf_tdemo", "address": "10.20.129.250/24", "count": 5, "timeout": 5,
  "targets": [{"address": "198.51.100.9"}]}' >/tmp/egp-slow.json
egress_probe /tmp/egp-slow.json >/dev/null &
pid=\$!
for _ in \$(seq 100); do ip -o link | grep -q "dvprobe\$pid" && break; sleep 0.1; done
echo "started=\$(ip -o link | grep -c "dvprobe\$pid")"
sleep 1
kill -9 \$pid
wait \$pid || true
probe again '$MISSION'
sleep 2
leftovers
GUEST
)
sed 's/^/  | /' <<<"$out"
check "the slow probe was running when killed" is_eq "$(figure started "$out")" 1
check "the second run passes" test "$(figure again_verdict "$out")" = passed
check "nothing of either run remains" is_eq "$(figure leftovers "$out")" 0

echo "== bad input: refused, nothing created"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
probe inuse '{"vrf": "vrf_tdemo", "address": "10.20.129.10/24", "targets": [{"address": "203.0.113.8"}]}'
probe outside '{"vrf": "vrf_tdemo", "address": "10.20.99.250/24", "targets": [{"address": "203.0.113.8"}]}'
probe novrf '{"vrf": "vrf_nope", "address": "10.20.129.250/24", "targets": [{"address": "203.0.113.8"}]}'
probe own '{"vrf": "vrf_tdemo", "address": "10.20.129.250/24", "targets": [{"address": "10.20.99.22"}]}'
probe bcast '{"vrf": "vrf_tdemo", "address": "10.20.129.250/24", "targets": [{"address": "10.20.129.255"}]}'
leftovers
GUEST
)
sed 's/^/  | /' <<<"$out"
check "an address tdemo-1 holds is refused (ARP)" \
  grep -q "^address: 10.20.129.10 is in use on tdemo0 (answered ARP from" <<<"$(figure inuse_msg "$out")"
# vrf_tdemo holds what Proxmox's SDN gives an EVPN zone: the VNet bridge and the L3VNI bridge.
check "an address outside vrf_tdemo's subnets is refused" \
  grep -q "^address: 10.20.99.250 is outside every subnet the VRF vrf_tdemo has connected (tdemo0 10.20.129.0/24, vrfbr_tdemo no IPv4 subnet)" <<<"$(figure outside_msg "$out")"
check "a VRF that does not exist is refused" \
  grep -q "^vrf: vrf_nope does not exist on this node" <<<"$(figure novrf_msg "$out")"
check "the node's own address as target is refused" \
  grep -q "^targets\[0\].address: 10.20.99.22 is the node's own address (on vmbr0)" <<<"$(figure own_msg "$out")"
check "the VNet's broadcast as target is refused" \
  grep -q "^targets\[0\].address: 10.20.129.255 is the broadcast address" <<<"$(figure bcast_msg "$out")"
check "nothing remains after the refusals" is_eq "$(figure leftovers "$out")" 0

finish
