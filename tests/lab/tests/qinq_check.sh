#!/usr/bin/env bash
# deevnet.net.qinq_check on the lab node's QinQ stack, a kernel with bonding, 802.1Q and VLAN
# filtering: bond0 (active-backup over the veths qinq_a, qinq_b) -> bond0.40 -> vmbr1
# (VLAN-aware, 199-299), a trunk port added here, and the peer namespace sending on inner VLAN
# 201. The module runs as Ansible runs it (an arguments file):
#   A. as provisioned: txvlan is on on both veth slaves (a veth's default), the only failures;
#   B. fix_txvlan in check mode: would switch both, changes nothing, shows the diff;
#   C. fix_txvlan: switches both off for real, every check passes; D. again: changed false;
#   then one fault at a time, each caught by its own check and put back:
#   E. the peer's frames without their inner tag (its MAC learned in VLAN 1);
#   F. txvlan on for the backup slave only (and fixed alone);
#   G. the zone bridge's MTU one byte short; H. VLAN filtering off; I. VLAN 250 missing on
#      the uplink port; J. bad input, with txvlan on: refused, nothing changed.
# What this test changes it puts back (trap), including txvlan on both slaves as provisioned.
. "$LAB_DIR/lib/testlib.sh"

# Built on this host, whose glibc is not newer than the guest's.
(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p qinq_check)
"$LAB" copy "$REPO_ROOT/target/release/qinq_check" /usr/local/bin/qinq_check

restore() {
  "$LAB" run bash -s <<'GUEST' >/dev/null 2>&1 || true
ip link del qtrunk0 2>/dev/null
ip link set vmbr1 mtu 1500
ip link set vmbr1 type bridge vlan_filtering 1
bridge vlan add dev bond0.40 vid 199-299
for slave in qinq_a qinq_b; do ethtool -K "$slave" txvlan on; done
[ -f /tmp/qq-ipv6 ] && sysctl -qw net.ipv6.conf.vmbr1.disable_ipv6="$(cat /tmp/qq-ipv6)"
lab-qinq-peer tagged
GUEST
}
trap restore EXIT

# Guest-side helper sent ahead of each step: `qq NAME JSON` runs the module (run_module, lib/testlib.sh) and prints
# NAME_rc, _failed, _changed, _failed_checks, _slaves, _fdb_vlan1, _uplink_allows, _diffs and
# each line of msg as NAME_msgI; `learn MODE` sets the peer's mode, flushes vmbr1's fdb and
# lets the peer send.
GUEST_HELPER="$GUEST_RUN_MODULE"$(cat <<'EOF'

qq_figures=$(cat <<'PY'
out("failed", str(r.get("failed", False)).lower())
out("changed", str(r.get("changed")).lower())
out("failed_checks", ",".join(c["name"] for c in r.get("checks", []) if not c["ok"]) or "none")
slaves = []
for s in r.get("slaves", []):
    slaves.append(":".join([s["name"], str(s["role"]), str(s["driver"]),
                            "on" if s["enabled"] else "off"] + (["changed"] if s["changed"] else [])))
out("slaves", ",".join(slaves) or "none")
out("fdb_vlan1", ",".join(f"{e['mac']}@{e['vlan']}" for e in r.get("fdb_vlan1", [])) or "none")
out("uplink_allows", (r.get("mtu") or {}).get("uplink_allows"))
out("diffs", len(r.get("diff", [])))
for i, line in enumerate(r.get("msg", "").splitlines()):
    out(f"msg{i}", line)
PY
)
qq() { run_module qinq_check "$1" "$2" "$qq_figures"; }
txvlan() { ethtool -k "$1" | sed -n 's/^tx-vlan-offload: //p'; }
# Mode first, then flush, then send: frames of the old mode still in flight (an ARP probe
# answered on the inner-tag device) must not be what the bridge learns.
learn() {
  lab-qinq-peer "$1" >/dev/null
  ip link set dev vmbr1 type bridge fdb_flush
  lab-qinq-peer send
}
EOF
)

# Setup: IPv6 off on the zone bridge (remembering the value), a trunk port carrying the zone.
out=$("$LAB" run bash -s <<'GUEST'
set -e
cat /proc/sys/net/ipv6/conf/vmbr1/disable_ipv6 >/tmp/qq-ipv6
sysctl -qw net.ipv6.conf.vmbr1.disable_ipv6=1
ip link del qtrunk0 2>/dev/null || true
ip link add qtrunk0 type veth peer name qtrunk1
ip link set qtrunk0 master vmbr1
bridge vlan add dev qtrunk0 vid 199-299
ip link set qtrunk0 up
ip link set qtrunk1 up
echo "peer_mac=$(ip netns exec qinq-peer cat /sys/class/net/pbond/address)"
GUEST
)
peer_mac=$(figure peer_mac "$out")
echo "  peer MAC $peer_mac"

base() { # base [EXTRA JSON MEMBERS]
  printf '{"bond": "bond0", "uplink_vlan": 40, "bridge": "vmbr1", "vlans": "199-299", "zone_mtu": 1496, "trunk_interfaces": ["qtrunk0"], "peers": [{"mac": "%s", "vlan": 201}]%s}' \
    "$peer_mac" "${1:+, $1}"
}

step() { # step NAME COMMANDS: runs COMMANDS in the guest after the helper, prints the figures
  local out
  out=$("$LAB" run bash -s <<<"$GUEST_HELPER
$2")
  sed 's/^/  | /' <<<"$out" >&2
  echo "$out"
}

echo "== A. as provisioned: txvlan on on both veth slaves"
out=$(step A "learn tagged; qq a '$(base)'")
check "A fails" test "$(figure a_failed "$out")" = true
check "A: only the txvlan checks of both slaves fail" \
  test "$(figure a_failed_checks "$out")" = "txvlan:qinq_a,txvlan:qinq_b"
check "A: slaves with role and driver" \
  test "$(figure a_slaves "$out")" = "qinq_a:active:veth:on,qinq_b:backup:veth:on"
check "A: one msg line per failure" test "$(figure a_msg1 "$out")" != MISSING
check "A: the uplink allows 1496" is_eq "$(figure a_uplink_allows "$out")" 1496
check "A: nothing learned in VLAN 1" test "$(figure a_fdb_vlan1 "$out")" = none

echo "== B. fix_txvlan in check mode"
out=$(step B "qq b '$(base '"fix_txvlan": true, "_ansible_check_mode": true, "_ansible_diff": true')'
echo \"b_kernel=\$(txvlan qinq_a),\$(txvlan qinq_b)\"")
check "B would change" test "$(figure b_changed "$out")" = true
check "B passes on the predicted state" test "$(figure b_failed "$out")" = false
check "B shows a diff per slave" is_eq "$(figure b_diffs "$out")" 2
check "B changed nothing in the kernel" test "$(figure b_kernel "$out")" = "on,on"

echo "== C. fix_txvlan; D. again"
out=$(step C "qq c '$(base '"fix_txvlan": true')'
echo \"c_kernel=\$(txvlan qinq_a),\$(txvlan qinq_b)\"
learn tagged
qq d '$(base '"fix_txvlan": true')'")
check "C changed" test "$(figure c_changed "$out")" = true
check "C passes" test "$(figure c_failed_checks "$out")" = none
check "C switched both slaves" \
  test "$(figure c_slaves "$out")" = "qinq_a:active:veth:off:changed,qinq_b:backup:veth:off:changed"
check "C: the kernel has txvlan off on both" test "$(figure c_kernel "$out")" = "off,off"
check "D: changed false" test "$(figure d_changed "$out")" = false
check "D passes" test "$(figure d_failed "$out")" = false

echo "== E. the peer's frames lose their inner tag"
out=$(step E "learn untagged; qq e '$(base)'; learn tagged")
check "E: caught as a lost tag and a peer in the wrong VLAN" \
  test "$(figure e_failed_checks "$out")" = "fdb_vlan1,peer:$peer_mac"
check "E: the peer's MAC in VLAN 1" test "$(figure e_fdb_vlan1 "$out")" = "$peer_mac@1"

echo "== F. txvlan on for the backup slave only"
out=$(step F "ethtool -K qinq_b txvlan on
qq f '$(base)'
qq f2 '$(base '"fix_txvlan": true')'
echo \"f_kernel=\$(txvlan qinq_a),\$(txvlan qinq_b)\"")
check "F: caught on qinq_b only" test "$(figure f_failed_checks "$out")" = "txvlan:qinq_b"
check "F: the backup slave named with its role" grep -q "qinq_b (backup, driver veth): on" <<<"$(figure f_msg0 "$out")"
check "F: the fix switches qinq_b alone" \
  test "$(figure f2_slaves "$out")" = "qinq_a:active:veth:off,qinq_b:backup:veth:off:changed"
check "F: the kernel has txvlan off on both again" test "$(figure f_kernel "$out")" = "off,off"

echo "== G. vmbr1's MTU one byte short"
out=$(step G "ip link set vmbr1 mtu 1495; qq g '$(base)'; ip link set vmbr1 mtu 1500")
check "G: caught on vmbr1 only" test "$(figure g_failed_checks "$out")" = "mtu:vmbr1"
check "G: the message gives the fix" grep -q "found 1495; ip link set vmbr1 mtu 1496" <<<"$(figure g_msg0 "$out")"

echo "== H. VLAN filtering off"
out=$(step H "ip link set vmbr1 type bridge vlan_filtering 0; qq h '$(base)'
ip link set vmbr1 type bridge vlan_filtering 1")
check "H: vlan_filtering fails" grep -q "vlan_filtering" <<<"$(figure h_failed_checks "$out")"
check "H fails" test "$(figure h_failed "$out")" = true

echo "== I. VLAN 250 missing on the uplink port"
out=$(step I "bridge vlan del dev bond0.40 vid 250; learn tagged; qq i '$(base)'
bridge vlan add dev bond0.40 vid 250")
check "I: caught on the uplink only" test "$(figure i_failed_checks "$out")" = "uplink_vlans"
check "I: 250 named as missing, with the command" \
  grep -q "missing 250; bridge vlan add dev bond0.40 vid 250" <<<"$(figure i_msg0 "$out")"

echo "== J. bad input refused, with txvlan on and fix_txvlan: nothing changes"
out=$(step J "ethtool -K qinq_b txvlan on
qq j1 '{\"bond\": \"bond0.40\", \"uplink_vlan\": 40, \"bridge\": \"vmbr1\", \"vlans\": \"199-299\", \"fix_txvlan\": true}'
qq j2 '{\"bond\": \"bond0\", \"uplink_vlan\": 41, \"bridge\": \"vmbr1\", \"vlans\": \"199-299\", \"fix_txvlan\": true}'
qq j3 '{\"bond\": \"bond0\", \"uplink_vlan\": 40, \"bridge\": \"vmbr1\", \"vlans\": \"299-199\", \"fix_txvlan\": true}'
qq j4 '{\"bond\": \"bond0\", \"uplink_vlan\": 40, \"bridge\": \"vmbr1\", \"vlans\": [\"199-299\", 4095], \"fix_txvlan\": true}'
qq j5 '{\"bond\": \"bond0\", \"uplink_vlan\": 40, \"bridge\": \"vmbr1\", \"vlans\": \"199-299\", \"zone_mtu\": 70000, \"fix_txvlan\": true}'
qq j6 '{\"bond\": \"bond0\", \"uplink_vlan\": 40, \"bridge\": \"vmbr 1\", \"vlans\": \"199-299\", \"fix_txvlan\": true}'
echo \"j_kernel=\$(txvlan qinq_b)\"")
check "J: a VLAN device is neither a bond nor a NIC" grep -q "^bond: bond0.40 is a vlan device, neither a bond nor a NIC" <<<"$(figure j1_msg0 "$out")"
check "J: no uplink VLAN device with id 41" grep -q "^uplink_vlan: there is no VLAN device with id 41 on bond0" <<<"$(figure j2_msg0 "$out")"
check "J: a range written backwards" grep -q "^vlans: the range '299-199' is written backwards" <<<"$(figure j3_msg0 "$out")"
check "J: a VLAN outside 1-4094" grep -q "^vlans: VLAN 4095 .* is outside 1-4094" <<<"$(figure j4_msg0 "$out")"
check "J: a zone MTU no hop carries" grep -q "^zone_mtu: 70000 is outside" <<<"$(figure j5_msg0 "$out")"
check "J: an invalid interface name" grep -q "^bridge: 'vmbr 1' is not a valid interface name" <<<"$(figure j6_msg0 "$out")"
for n in 1 2 3 4 5 6; do
  check "J$n failed, changed nothing" test "$(figure "j${n}_failed" "$out"),$(figure "j${n}_changed" "$out")" = "true,none"
done
check "J: txvlan still on on qinq_b" test "$(figure j_kernel "$out")" = on

finish
