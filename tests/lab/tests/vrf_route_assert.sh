#!/usr/bin/env bash
# deevnet.net.vrf_route_assert on the lab node, a kernel with real VRFs: the module run as
# Ansible runs it (an arguments file) catches both faults of the mission, names the
# fall-through, and passes once each is fixed:
#   A. as provisioned: no default and no catch-all in vrf_tdemo (lookups fall through to main,
#      management-bound traffic leaves by vmbr0) and vmbr0.50 forwarding 0;
#   B. the catch-all alone: reported, not taken for a default, lookups unreachable;
#      a VRF that does not exist;
#   C. the leaked default `0.0.0.0/0 via 10.20.50.1 nexthop-vrf default` (frr.conf.local
#      through the SDN apply): only the forwarding of vmbr0.50 is left;
#   D. forwarding fixed too: every check passes, in check mode as well;
#   E. IPv6 destinations, before and after an IPv6 default in the VRF.
# The runner puts both faults back afterwards (lab-reset-faults); what E adds, E removes.
. "$LAB_DIR/lib/testlib.sh"

# Built on this host, whose glibc is not newer than the guest's.
(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p vrf_route_assert)
"$LAB" copy "$REPO_ROOT/target/release/vrf_route_assert" /usr/local/bin/vrf_route_assert

# Guest-side helper, sent ahead of each state's commands: `vra NAME JSON` runs the module and
# prints NAME_rc, NAME_failed, NAME_changed, NAME_lines and NAME_msgI (each line of msg).
GUEST_HELPER=$(cat <<'EOF'
vra() {
  printf '%s' "$2" >"/tmp/vra-$1.json"
  local rc=0
  vrf_route_assert "/tmp/vra-$1.json" >"/tmp/vra-$1.out" || rc=$?
  echo "$1_rc=$rc"
  python3 - "$1" "/tmp/vra-$1.out" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
result = json.load(open(path))
lines = result.get("msg", "").splitlines()
print(f"{name}_failed={str(result.get('failed', False)).lower()}")
print(f"{name}_changed={str(result.get('changed')).lower()}")
print(f"{name}_lines={len(lines)}")
for i, line in enumerate(lines):
    print(f"{name}_msg{i}={line}")
for vrf in result.get("vrfs", []):
    print(f"{name}_catch_all={str(vrf['unreachable_catch_all']).lower()}")
    print(f"{name}_defaults={json.dumps(vrf['defaults'], sort_keys=True)}")
PY
}
EOF
)

# The mission's checks, as a playbook would give them.
MISSION='{"vrfs": [{"name": "vrf_tdemo", "default_via": "10.20.50.1", "default_dev": "vmbr0.50",
  "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "not_dev": "vmbr0"},
              {"dst": "203.0.113.8", "via": "10.20.50.1"}]}]}'

# msg_has NAME LINE OUTPUT: LINE is one of the lines of NAME's msg.
msg_has() { grep -E "^$1_msg[0-9]+=" <<<"$3" | cut -d= -f2- | grep -Fxq -- "$2"; }

FALL_THROUGH_DEFAULT="vrf_tdemo: table 1001 has no IPv4 default route and no unreachable catch-all, so lookups fall through to the main table; expected default via 10.20.50.1 dev vmbr0.50"
FALL_THROUGH_MGMT="vrf_tdemo: 10.20.99.5 resolves via dev vmbr0 (table main: fall-through), expected dev vmbr0.50, not dev vmbr0"
FALL_THROUGH_INTERNET="vrf_tdemo: 203.0.113.8 resolves via 10.20.50.1 dev vmbr0.50 (table main: fall-through), expected an answer from table 1001 (the VRF's own)"
NO_FORWARDING="vrf_tdemo: vmbr0.50 has IPv4 forwarding off (net.ipv4.conf.vmbr0/50.forwarding = 0), expected 1: tenant traffic leaves by it and replies coming back by it are not forwarded"

echo "== A: both faults (as provisioned)"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
vra a '$MISSION'
vra adhoc '{"vrf": "vrf_tdemo", "dst": "10.20.99.5", "dev": "vmbr0.50", "not_dev": "vmbr0"}'
GUEST
)
sed 's/^/  | /' <<<"$out"
check "the task fails" test "$(figure a_failed "$out")" = true
check "changed is false" test "$(figure a_changed "$out")" = false
check "fault 2: no default and no catch-all, named as fall-through" msg_has a "$FALL_THROUGH_DEFAULT" "$out"
check "fault 2: 10.20.99.5 leaves by vmbr0 from table main (fall-through)" msg_has a "$FALL_THROUGH_MGMT" "$out"
check "fault 2: the internet resolves from table main (fall-through)" msg_has a "$FALL_THROUGH_INTERNET" "$out"
check "fault 1: vmbr0.50 does not forward" msg_has a "$NO_FORWARDING" "$out"
check "four findings" is_eq "$(figure a_lines "$out")" 4
check "the ad-hoc short form names the fall-through" test "$(figure adhoc_msg0 "$out")" = "$FALL_THROUGH_MGMT"

echo "== B: the unreachable catch-all alone; a VRF that does not exist"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
ip route add vrf vrf_tdemo unreachable default metric 4278198272
vra b '$MISSION'
ip route del vrf vrf_tdemo unreachable default metric 4278198272
vra missing '{"vrf": "vrf_tnone", "dst": "203.0.113.8"}'
GUEST
)
sed 's/^/  | /' <<<"$out"
check "the catch-all is reported" test "$(figure b_catch_all "$out")" = true
check "the catch-all is no usable default" msg_has b "vrf_tdemo: table 1001 has only the catch-all (unreachable default metric 4278198272), no usable IPv4 default; expected default via 10.20.50.1 dev vmbr0.50" "$out"
check "10.20.99.5 is unreachable, no longer leaking" msg_has b "vrf_tdemo: 10.20.99.5 is unreachable (an unreachable route matched), expected dev vmbr0.50" "$out"
check "a missing VRF: the tenant has no VRF on this node" \
  test "$(figure missing_msg0 "$out")" = "vrf_tnone: the tenant has no VRF on this node (no interface named vrf_tnone)"

echo "== C: the leaked default through frr.conf.local and the SDN apply; forwarding still 0"
out=$("$LAB" run bash -s <<GUEST
set -e
$GUEST_HELPER
cat >/etc/frr/frr.conf.local <<'LOCAL'
vrf vrf_tdemo
 ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default
exit
LOCAL
lab-sdn-apply >/dev/null
# zebra installs the route asynchronously.
for _ in \$(seq 30); do [ -n "\$(ip route show vrf vrf_tdemo default)" ] && break; sleep 1; done
vra c '$MISSION'
GUEST
)
sed 's/^/  | /' <<<"$out"
check "only the forwarding of vmbr0.50 is left" test "$(figure c_lines "$out"):$(figure c_msg0 "$out")" = "1:$NO_FORWARDING"
check "the leaked default is reported" \
  grep -q '"dev": "vmbr0.50", "family": "IPv4", "gateway": "10.20.50.1"' <<<"$(figure c_defaults "$out")"

echo "== D: forwarding fixed as well"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
echo 1 >/proc/sys/net/ipv4/conf/vmbr0.50/forwarding
vra d '$MISSION'
vra dcheck '{"_ansible_check_mode": true, "vrfs": [{"name": "vrf_tdemo", "default_via": "10.20.50.1", "default_dev": "vmbr0.50", "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "not_dev": "vmbr0"}]}]}'
GUEST
)
sed 's/^/  | /' <<<"$out"
check "every check passes" test "$(figure d_rc "$out"):$(figure d_failed "$out")" = "0:false"
check "changed is false" test "$(figure d_changed "$out")" = false
check "check mode runs the checks fully" test "$(figure dcheck_rc "$out"):$(figure dcheck_msg0 "$out")" = "0:all 4 checks passed in 1 VRF"

echo "== E: IPv6 destinations"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
V6='{"vrfs": [{"name": "vrf_tdemo", "lookups": [{"dst": "2001:db8:77::1", "dev": "vmbr0.50", "not_dev": "vmbr0"}]}]}'
forwarding_before=\$(cat /proc/sys/net/ipv6/conf/vmbr0.50/forwarding)
echo 0 >/proc/sys/net/ipv6/conf/vmbr0.50/forwarding
vra e1 "\$V6"
ip -6 route add vrf vrf_tdemo default dev vmbr0.50
vra e2 "\$V6"
echo 1 >/proc/sys/net/ipv6/conf/vmbr0.50/forwarding
vra e3 "\$V6"
ip -6 route del vrf vrf_tdemo default dev vmbr0.50
echo "\$forwarding_before" >/proc/sys/net/ipv6/conf/vmbr0.50/forwarding
GUEST
)
sed 's/^/  | /' <<<"$out"
check "without an IPv6 route in the VRF, the lookup fails" \
  grep -Eq "^vrf_tdemo: 2001:db8:77::1 .*, expected dev vmbr0.50$" <<<"$(figure e1_msg0 "$out")"
check "with one, it resolves from table 1001 and IPv6 forwarding is checked" \
  test "$(figure e2_lines "$out"):$(figure e2_msg0 "$out")" = "1:vrf_tdemo: vmbr0.50 has IPv6 forwarding off (net.ipv6.conf.vmbr0/50.forwarding = 0), expected 1: tenant traffic leaves by it and replies coming back by it are not forwarded"
check "and passes once vmbr0.50 forwards IPv6" test "$(figure e3_rc "$out")" = 0

finish
