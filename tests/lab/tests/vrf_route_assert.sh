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
#   E. IPv6 destinations, before and after an IPv6 default in the VRF;
#   F. an undeclared VRF (vrf_tnew, table 1002): reported by undeclared_vrfs=warn and =fail, and
#      settle_timeout waiting for its default, added 3 s after the module starts;
#   G. IPv6 defaults (ipv6_default_dev) in vrf_tdemo and in the default VRF, and the default VRF
#      with an IPv6 default but no IPv4 one (the main table's default removed for one run);
#   H. asymmetric_returns: all.rp_filter=2 over vmbr0.50's 0, then both 0.
# A, B and D also run no_fall_through with forbidden_interfaces=[vmbr0] (no hand-picked address)
# and undeclared_vrfs=fail with no VRF declared (vrf_tdemo itself is then undeclared).
# The runner puts both faults back afterwards (lab-reset-faults); what E to H change, they undo.
. "$LAB_DIR/lib/testlib.sh"

# Built on this host, whose glibc is not newer than the guest's.
(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p vrf_route_assert)
"$LAB" copy "$REPO_ROOT/target/release/vrf_route_assert" /usr/local/bin/vrf_route_assert

# Guest-side helper, sent ahead of each state's commands: `vra NAME JSON` runs the module (run_module, lib/testlib.sh) and
# prints NAME_rc, NAME_failed, NAME_changed, NAME_lines and NAME_msgI (each line of msg).
GUEST_HELPER="$GUEST_RUN_MODULE"$(cat <<'EOF'

vra_figures=$(cat <<'PY'
lines = r.get("msg", "").splitlines()
out("failed", str(r.get("failed", False)).lower())
out("changed", str(r.get("changed")).lower())
out("lines", len(lines))
for i, line in enumerate(lines):
    out(f"msg{i}", line)
for i, warning in enumerate(r.get("warnings", [])):
    out(f"warning{i}", warning)
leaks = [f"{leak['name']}/{leak['family']}/{leak['leaves_by']['dev']}" for leak in r.get("leaking_vrfs", [])]
out("leaking", ",".join(leaks) or "none")
out("attempts", r.get("attempts"))
out("settled_ms", int(r.get("settled_after", -1) * 1000))
for check in r.get("checks", []):
    if check["check"].startswith("lookup 10.20.99.1"):
        out("generated", check["msg"])
for vrf in r.get("vrfs", []):
    out("catch_all", str(vrf["unreachable_catch_all"]).lower())
    out("defaults", json.dumps(vrf["defaults"], sort_keys=True))
PY
)
vra() { run_module vrf_route_assert "$1" "$2" "$vra_figures"; }
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
# No hand-picked addresses: one lookup per prefix connected on vmbr0, pinned to the VRF.
GUARDED='{"vrfs": [{"name": "vrf_tdemo", "no_fall_through": true, "forbidden_interfaces": ["vmbr0"],
  "forwarding": false}]}'
UNDECLARED_ONLY='{"undeclared_vrfs": "fail"}'
GENERATED_LEAK="vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via dev vmbr0 (table main: fall-through), expected not dev vmbr0"
NO_FALL_THROUGH_LEAK="vrf_tdemo: table 1001 has no IPv4 default route and no catch-all (unreachable, blackhole or prohibit default), so its lookups fall through to the main table and leave by the main table's default via 10.20.50.1 dev vmbr0.50; give the VRF a default route (such as the leaked transit default) or the catch-all (ip route add vrf vrf_tdemo unreachable default metric 4278198272)"
NO_FORWARDING="vrf_tdemo: vmbr0.50 has IPv4 forwarding off (net.ipv4.conf.vmbr0/50.forwarding = 0), expected 1: tenant traffic leaves by it and replies coming back by it are not forwarded"

echo "== A: both faults (as provisioned)"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
vra a '$MISSION'
vra adhoc '{"vrf": "vrf_tdemo", "dst": "10.20.99.5", "dev": "vmbr0.50", "not_dev": "vmbr0"}'
vra aguard '$GUARDED'
vra aundeclared '$UNDECLARED_ONLY'
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
check "no_fall_through names where the lookups leave" msg_has aguard "$NO_FALL_THROUGH_LEAK" "$out"
check "forbidden_interfaces: the generated lookup of vmbr0's prefix leaves by vmbr0" msg_has aguard "$GENERATED_LEAK" "$out"
check "two findings, nothing hand-picked" is_eq "$(figure aguard_lines "$out")" 2
check "undeclared_vrfs=fail: vrf_tdemo, undeclared, leaks" test "$(figure aundeclared_failed "$out"):$(figure aundeclared_leaking "$out")" = "true:vrf_tdemo/IPv4/vmbr0.50"

echo "== B: the unreachable catch-all alone; a VRF that does not exist"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
ip route add vrf vrf_tdemo unreachable default metric 4278198272
vra b '$MISSION'
vra bguard '$GUARDED'
vra bundeclared '$UNDECLARED_ONLY'
ip route del vrf vrf_tdemo unreachable default metric 4278198272
vra missing '{"vrf": "vrf_tnone", "dst": "203.0.113.8"}'
GUEST
)
sed 's/^/  | /' <<<"$out"
check "the catch-all is reported" test "$(figure b_catch_all "$out")" = true
check "the catch-all is no usable default" msg_has b "vrf_tdemo: table 1001 has only the catch-all (unreachable default metric 4278198272), no usable IPv4 default; expected default via 10.20.50.1 dev vmbr0.50" "$out"
check "10.20.99.5 is unreachable, no longer leaking" msg_has b "vrf_tdemo: 10.20.99.5 is unreachable (an unreachable route matched), expected dev vmbr0.50" "$out"
check "with the catch-all, nothing falls through and vmbr0's prefix is unreachable" \
  test "$(figure bguard_rc "$out"):$(figure bguard_generated "$out")" = "0:vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) is unreachable (an unreachable route matched)"
check "an undeclared VRF with the catch-all is no leak" \
  test "$(figure bundeclared_rc "$out"):$(figure bundeclared_leaking "$out"):$(figure bundeclared_msg0 "$out")" = "0:none:no undeclared VRF falls through"
check "a missing VRF: the tenant has no VRF on this node" \
  test "$(figure missing_msg0 "$out")" = "vrf_tnone: the tenant has no VRF on this node (no interface named vrf_tnone)"

echo "== C: the leaked default through frr.conf.local and the SDN apply; forwarding still 0"
out=$("$LAB" run bash -s <<GUEST
set -e
$GUEST_HELPER
lab-fix-faults vrf-default
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
vra dguard '$GUARDED'
vra dcheck '{"_ansible_check_mode": true, "vrfs": [{"name": "vrf_tdemo", "default_via": "10.20.50.1", "default_dev": "vmbr0.50", "lookups": [{"dst": "10.20.99.5", "dev": "vmbr0.50", "not_dev": "vmbr0"}]}]}'
GUEST
)
sed 's/^/  | /' <<<"$out"
check "every check passes" test "$(figure d_rc "$out"):$(figure d_failed "$out")" = "0:false"
check "changed is false" test "$(figure d_changed "$out")" = false
check "the fixed state: vmbr0's prefix is reached by the transit interface" \
  test "$(figure dguard_rc "$out"):$(figure dguard_generated "$out")" = "0:vrf_tdemo: 10.20.99.1 (in 10.20.99.0/24, connected on vmbr0) resolves via 10.20.50.1 dev vmbr0.50 (table 1001)"
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

echo "== F: an undeclared VRF; settle_timeout waiting for its default"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
ip link add vrf_tnew type vrf table 1002
ip link set vrf_tnew up
DECLARED='{"vrfs": [{"name": "vrf_tdemo", "forwarding": false}], "undeclared_vrfs": "UNDECLARED"}'
vra fwarn "\${DECLARED/UNDECLARED/warn}"
vra ffail "\${DECLARED/UNDECLARED/fail}"
(sleep 3; ip route add vrf vrf_tnew default via 10.20.50.1 dev vmbr0.50) &
vra fsettle '{"vrfs": [{"name": "vrf_tnew", "default_via": "10.20.50.1", "no_fall_through": true,
  "forwarding": false}], "settle_timeout": 60}'
wait
vra fnow '{"vrfs": [{"name": "vrf_tdemo", "forwarding": false}], "undeclared_vrfs": "fail"}'
ip link del vrf_tnew
GUEST
)
sed 's/^/  | /' <<<"$out"
LEAK_TNEW="vrf_tnew: undeclared VRF (not in vrfs): table 1002 has no IPv4 default route and no catch-all (unreachable, blackhole or prohibit default), so its lookups fall through to the main table and leave by the main table's default via 10.20.50.1 dev vmbr0.50; declare it in vrfs with its checks, give it a default route or the catch-all (ip route add vrf vrf_tnew unreachable default metric 4278198272), or set undeclared_vrfs=ignore"
check "undeclared_vrfs=warn: passes and warns naming vrf_tnew" \
  test "$(figure fwarn_rc "$out"):$(figure fwarn_warning0 "$out")" = "0:$LEAK_TNEW"
check "and its result says so" test "$(figure fwarn_msg0 "$out")" = "all 1 checks passed in 1 VRF; undeclared VRFs falling through, see the warnings: vrf_tnew (IPv4)"
check "undeclared_vrfs=fail: fails naming vrf_tnew" \
  test "$(figure ffail_failed "$out"):$(figure ffail_msg0 "$out"):$(figure ffail_leaking "$out")" = "true:$LEAK_TNEW:vrf_tnew/IPv4/vmbr0.50"
check "settle_timeout: passes once the default arrives" test "$(figure fsettle_rc "$out")" = 0
check "after about 3 s" is_ge "$(figure fsettle_settled_ms "$out")" 2500
check "in several attempts" is_ge "$(figure fsettle_attempts "$out")" 3
check "with its default, vrf_tnew is no leak" test "$(figure fnow_leaking "$out")" = none

echo "== G: IPv6 defaults, in vrf_tdemo and in the default VRF"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
V6='{"vrfs": [{"name": "vrf_tdemo", "ipv6_default_dev": "vmbr0.50", "forwarding": false},
  {"name": "default", "ipv6_default_dev": "vmbr0.50"}]}'
vra g1 "\$V6"
ip -6 route add vrf vrf_tdemo default dev vmbr0.50
ip -6 route add default dev vmbr0.50
vra g2 "\$V6"
# The all-exit fabric's first trap: only the IPv6 default arrived.
ip route del default via 10.20.50.1 dev vmbr0.50
vra g3 '{"vrfs": [{"name": "default", "ipv6_default_dev": "vmbr0.50"}]}'
ip route add default via 10.20.50.1 dev vmbr0.50
ip -6 route del vrf vrf_tdemo default dev vmbr0.50
ip -6 route del default dev vmbr0.50
GUEST
)
sed 's/^/  | /' <<<"$out"
check "no IPv6 default in vrf_tdemo: falls through" msg_has g1 "vrf_tdemo: table 1001 has no IPv6 default route and no unreachable catch-all, so lookups fall through to the main table; expected default dev vmbr0.50" "$out"
check "no IPv6 default in the default VRF" msg_has g1 "default: table main has no IPv6 default route; expected default dev vmbr0.50" "$out"
check "the default VRF's IPv4 default is there" is_eq "$(figure g1_lines "$out")" 2
check "with both IPv6 defaults, every check passes" test "$(figure g2_rc "$out")" = 0
check "an IPv6 default without the IPv4 one: the IPv6-only activation is named" \
  test "$(figure g3_msg0 "$out")" = "default: table main has no usable IPv4 default but has the IPv6 default dev vmbr0.50 metric 1024: the fabric activates only IPv6 (its BGP peers are activated only in address-family ipv6 unicast), so no IPv4 default is learned; activate the peers in address-family ipv4 unicast (in frr.conf.local: router bgp ASN / address-family ipv4 unicast / neighbor PEER activate / exit-address-family) or define the fabric dual-stack"

echo "== H: asymmetric returns: the effective rp_filter of vmbr0.50"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
RETURNS='{"vrfs": [{"name": "vrf_tdemo", "default_dev": "vmbr0.50", "asymmetric_returns": true}]}'
all_before=\$(cat /proc/sys/net/ipv4/conf/all/rp_filter)
own_before=\$(cat /proc/sys/net/ipv4/conf/vmbr0.50/rp_filter)
echo 0 >/proc/sys/net/ipv4/conf/vmbr0.50/rp_filter
echo 2 >/proc/sys/net/ipv4/conf/all/rp_filter
vra h1 "\$RETURNS"
echo 0 >/proc/sys/net/ipv4/conf/all/rp_filter
vra h2 "\$RETURNS"
echo "\$all_before" >/proc/sys/net/ipv4/conf/all/rp_filter
echo "\$own_before" >/proc/sys/net/ipv4/conf/vmbr0.50/rp_filter
GUEST
)
sed 's/^/  | /' <<<"$out"
check "all=2 wins over vmbr0.50=0: returns are dropped" \
  grep -q "^vrf_tdemo: vmbr0.50 drops asymmetric returns: effective rp_filter 2 (the larger of net.ipv4.conf.all.rp_filter = 2, net.ipv4.conf.vmbr0/50.rp_filter = 0), expected 0" <<<"$(figure h1_msg0 "$out")"
check "both 0: every check passes" test "$(figure h2_rc "$out")" = 0

finish
