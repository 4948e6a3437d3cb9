#!/usr/bin/env bash
# deevnet.net.egress_probe's isolation and multi-probe form on the lab node (real VRFs, 802.1Q,
# a VLAN-aware bridge), each case passing while the lab is separated and failing, for the named
# reason, once the separation is broken:
#   A. two tenants on one exit node: tdemo and a second tenant tacme (VRF vrf_tacme, table
#      1002, VNet tacme0 10.20.130.1/24, its own leaked default, SNAT and return route) probed
#      in one run; each reaches the internet, the other tenant and a management host are
#      blocked (blocked_by reported); a route leak between the two VRFs makes tdemo's probe fail,
#      answered by 10.20.130.250;
#   B. a management host behind the node: a route in vrf_tdemo to 10.20.99.0/24 by vmbr0 makes
#      the management host answer (answered_by 10.20.99.5, the packets on vmbr0); tacme, in the
#      same run, still passes;
#   C. a VLAN workload on vmbr1 (VLAN 210), its router off the node (netns lab-vrtr, a tagged
#      member of VLAN 210) routing to a far host (netns lab-far, 203.0.113.50): a full-size DF
#      echo passes with replies; with the far hop 4 bytes short and the router's
#      fragmentation-needed dropped, it fails (silently dropped); with it sent, it passes and
#      reports the short MTU;
#   D. IPv6 in tdemo (2001:db8:129::/64 on tdemo0, transit 2001:db8:50::/64, internet
#      2001:db8:113::8, management 2001:db8:99::5): with the VRF's IPv6 default the internet
#      answers and the management host is blocked; without it lookups fall through to main and
#      the management host answers through vmbr0.
# The management hosts know the way back to the tenants' subnets (via the node): a leaked
# packet gets its answer, as the worst case. The fixed state (forwarding on vmbr0.50, the VRF
# default) is reached as in egress_probe.sh; lab-reset-faults puts both faults back afterwards.
# Everything else the test adds it removes (trap on exit), then compares the node with what it
# was before.
. "$LAB_DIR/lib/testlib.sh"

# Built on this host, whose glibc is not newer than the guest's.
(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p egress_probe)
"$LAB" copy "$REPO_ROOT/target/release/egress_probe" /usr/local/bin/egress_probe

# Guest-side helpers, sent ahead of each step's commands:
#   probe NAME JSON   runs the module (run_module, lib/testlib.sh) and prints NAME_rc,
#                     NAME_verdict, NAME_msg, and per probe P (its name, / read as _) and
#                     target I: NAME_P_verdict, NAME_P_msg, NAME_P_tI_{passed,sent,received,
#                     blocked_by,answered_by,frag_needed_mtu,error,left_by}
#   leftovers         prints leftovers=N: probe links (dvp*), probe namespaces, the workloads'
#                     addresses or routes anywhere on the node
#   snapshot          what the node holds (links, namespaces, addresses, routes, rules, nft,
#                     forwarding), for the comparison before/after
GUEST_HELPER="$GUEST_RUN_MODULE"$(cat <<'EOF'

probe_figures=$(cat <<'PY'
def flat(value):
    return "none" if value is None else str(value).replace(chr(10), " | ")
out("verdict", r.get("verdict", "refused"))
out("msg", flat(r.get("msg", "")))
for p in r.get("probes", []):
    n = p["name"].replace("/", "_")
    out(f"{n}_verdict", p["verdict"])
    out(f"{n}_msg", flat(p.get("msg")))
    for i, t in enumerate(p["targets"]):
        for key in ("passed", "sent", "received", "blocked_by", "answered_by", "frag_needed_mtu", "error"):
            out(f"{n}_t{i}_{key}", flat(t.get(key)))
        out(f"{n}_t{i}_left_by", ",".join(t.get("left_by") or []) or "none")
PY
)
probe() { run_module egress_probe "$1" "$2" "$probe_figures"; }
WORKLOADS='10\.20\.129\.250|10\.20\.130\.250|10\.20\.210\.250|2001:db8:129::250'
leftovers() {
  local n=0
  n=$((n + $(ip -o link | grep -c ' dvp' || true)))
  n=$((n + $(ip netns list | grep -c dvp || true)))
  n=$((n + $(ip -o addr | grep -Ec "$WORKLOADS" || true)))
  n=$((n + $(ip route show table all | grep -Ec "$WORKLOADS" || true)))
  n=$((n + $(ip -6 route show table all | grep -Ec "$WORKLOADS" || true)))
  echo "leftovers=$n"
}
snapshot() {
  ip -o link | awk '{print $2}' | sort
  ip netns list | sort
  ip -o addr | awk '{print $2, $3, $4}' | sort
  ip route show table all | grep -v 'proto kernel' | sort
  ip -6 route show table all | grep -v 'proto kernel' | sort
  ip rule; ip -6 rule
  nft list ruleset | sed 's/counter packets [0-9]* bytes [0-9]*/counter/'
  sysctl -a 2>/dev/null | grep -E '^net\.ipv6\.conf\.[^.]+\.(forwarding|disable_ipv6)' | grep -v dvp
  for ns in mgmt5 transit internet; do
    ip -n "$ns" -o addr | awk '{print $2, $3, $4}'; ip -n "$ns" route; ip -n "$ns" -6 route
    ip netns exec "$ns" sysctl net.ipv6.conf.all.forwarding
  done
}
EOF
)

# Everything the test adds, taken away again (each step tolerates what is already gone). The
# fixed state itself (sysctl.d file, frr.conf.local) goes with the runner's lab-reset-faults.
TEARDOWN=$(cat <<'EOF'
ip route del 10.20.130.0/24 dev tacme0 vrf vrf_tdemo 2>/dev/null || true
ip route del 10.20.99.0/24 dev vmbr0 vrf vrf_tdemo 2>/dev/null || true
ip -n mgmt5 route del 10.20.129.0/24 via 10.20.99.22 2>/dev/null || true
ip -n mgmt5 route del 10.20.130.0/24 via 10.20.99.22 2>/dev/null || true
for handle in $(nft -a list chain ip deevnet_lab_nat postrouting | sed -n 's/.*comment "egress-isolation.*# handle \([0-9]*\)$/\1/p'); do
  nft delete rule ip deevnet_lab_nat postrouting handle "$handle"
done
ip link del tacme0 2>/dev/null || true
ip link del vrf_tacme 2>/dev/null || true
ip route flush table 1002 2>/dev/null || true
ip -6 route flush table 1002 2>/dev/null || true
for ns in tacme-1 lab-vrtr lab-far; do ip netns del "$ns" 2>/dev/null || true; done
# IPv6 (D)
ip -6 route del default vrf vrf_tdemo 2>/dev/null || true
ip -6 route del 2001:db8:129::/64 dev tdemo0 2>/dev/null || true
[ -f /tmp/egi-main-v6-default ] && { ip -6 route del default via 2001:db8:50::1 dev vmbr0.50 2>/dev/null || true; rm -f /tmp/egi-main-v6-default; }
ip addr del 2001:db8:129::1/64 dev tdemo0 2>/dev/null || true
ip addr del 2001:db8:50::22/64 dev vmbr0.50 2>/dev/null || true
ip addr del 2001:db8:99::22/64 dev vmbr0 2>/dev/null || true
ip -n transit route del 2001:db8:129::/64 via 2001:db8:50::22 2>/dev/null || true
ip -n transit addr del 2001:db8:50::1/64 dev eth0.50 2>/dev/null || true
ip -n transit addr del 2001:db8:113::1/64 dev inet0 2>/dev/null || true
ip -n internet route del default via 2001:db8:113::1 2>/dev/null || true
ip -n internet addr del 2001:db8:113::8/64 dev eth0 2>/dev/null || true
ip -n mgmt5 route del 2001:db8:129::/64 via 2001:db8:99::22 2>/dev/null || true
ip -n mgmt5 addr del 2001:db8:99::5/64 dev eth0 2>/dev/null || true
[ -f /tmp/egi-transit-v6fwd ] && { ip netns exec transit sysctl -qw net.ipv6.conf.all.forwarding="$(cat /tmp/egi-transit-v6fwd)"; rm -f /tmp/egi-transit-v6fwd; }
# The node's IPv6 sysctls as they were: `all` first (it sets every interface), then each one.
[ -f /tmp/egi-v6-sysctl ] && { sysctl -e -q -p /tmp/egi-v6-sysctl >/dev/null 2>&1 || true; rm -f /tmp/egi-v6-sysctl; }
true
EOF
)

teardown() {
  "$LAB" run bash -s <<GUEST || echo "  (teardown failed: see above)"
$TEARDOWN
GUEST
}
trap teardown EXIT

PROBE_RUN='"count": 2, "timeout": 2, "forbidden_interfaces": ["vmbr0"]'
tenant() { # NAME VRF ADDRESS TARGETS...: one entry of probes
  local name=$1 vrf=$2 address=$3
  shift 3
  local IFS=,
  echo "{\"name\": \"$name\", \"vrf\": \"$vrf\", \"address\": \"$address\",
    \"expect_egress_interface\": \"vmbr0.50\", \"targets\": [$*]}"
}
reply() { echo "{\"address\": \"$1\"}"; }
blocked() { echo "{\"address\": \"$1\", \"expect\": \"blocked\"}"; }
TWO_TENANTS="{$PROBE_RUN, \"probes\": [
  $(tenant tdemo vrf_tdemo 10.20.129.250/24 "$(reply 203.0.113.8)" "$(blocked 10.20.130.250)" "$(blocked 10.20.99.5)"),
  $(tenant tacme vrf_tacme 10.20.130.250/24 "$(reply 203.0.113.8)" "$(blocked 10.20.129.250)" "$(blocked 10.20.99.5)")]}"

show() { sed 's/^/  | /' <<<"$1"; }
f() { figure "$1" "$out"; }

echo "== setup: both faults fixed (as egress_probe.sh's state 3), the second tenant tacme"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
lab-fix-faults
echo "tdemo_default=\$(ip route show vrf vrf_tdemo default)"
echo "rp_filter=\$(sysctl -n net.ipv4.conf.all.rp_filter)/\$(sysctl -n net.ipv4.conf.default.rp_filter)"
snapshot >/tmp/egi-before
# tacme: its VRF and VNet as an SDN zone's, a VM on it (tacme-1, tap102i0), the node's SNAT for
# its subnet, its default leaked from the main table, its subnet leaked back into main (what
# bgp 'import vrf' does for tdemo: the return route of SNATed replies; without it the de-NATed
# reply follows main's default back to the transit, and tacme-1 gets no answer).
ip link add vrf_tacme type vrf table 1002
ip link set vrf_tacme up
ip link add tacme0 type bridge stp_state 0 forward_delay 0
ip link set tacme0 master vrf_tacme
ip addr add 10.20.130.1/24 dev tacme0
ip link set tacme0 up
ip netns add tacme-1
ip link add tap102i0 type veth peer name eth0 netns tacme-1
ip link set tap102i0 master tacme0
ip link set tap102i0 up
ip -n tacme-1 link set lo up
ip -n tacme-1 link set eth0 up
ip -n tacme-1 addr add 10.20.130.10/24 dev eth0
ip -n tacme-1 route add default via 10.20.130.1
ip route add default via 10.20.50.1 dev vmbr0.50 vrf vrf_tacme
ip route add 10.20.130.0/24 dev tacme0
nft add rule ip deevnet_lab_nat postrouting oifname "vmbr0.50" ip saddr 10.20.130.0/24 counter snat to 10.20.50.22 comment '"egress-isolation tacme"'
# The management host knows the way back to both tenants: a leak gets its answer.
ip -n mgmt5 route add 10.20.129.0/24 via 10.20.99.22
ip -n mgmt5 route add 10.20.130.0/24 via 10.20.99.22
echo "tacme_default=\$(ip route show vrf vrf_tacme default)"
echo "tacme_internet=\$(ip netns exec tacme-1 ping -c 2 -W 2 203.0.113.8 >/dev/null 2>&1 && echo yes || echo no)"
GUEST
)
show "$out"
check "setup: vrf_tdemo has its default" grep -q "via 10.20.50.1" <<<"$(f tdemo_default)"
check "setup: tacme's own VM reaches the internet (SNAT and return route in place)" test "$(f tacme_internet)" = yes

echo "== A+B: two tenants, separated"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
probe a1 '$TWO_TENANTS'
leftovers
GUEST
)
show "$out"
check "A: the run passes, both tenants separated" test "$(f a1_rc):$(f a1_verdict)" = "0:passed"
check "A: tdemo reaches the internet by vmbr0.50" test "$(f a1_tdemo_t0_passed):$(f a1_tdemo_t0_left_by)" = "True:vmbr0.50"
check "A: tacme reaches the internet by vmbr0.50" test "$(f a1_tacme_t0_passed):$(f a1_tacme_t0_left_by)" = "True:vmbr0.50"
for p in tdemo tacme; do
  for t in 1 2; do
    check "A: $p target $t blocked, blocked_by reported ($(f "a1_${p}_t${t}_blocked_by"))" \
      test "$(f "a1_${p}_t${t}_passed"):$(f "a1_${p}_t${t}_answered_by")" = "True:none"
    check "A: $p target $t: blocked_by is a way of blocking" \
      grep -Eq '^(icmp .*|no answer|dropped beyond the node)$' <<<"$(f "a1_${p}_t${t}_blocked_by")"
  done
done
check "A: nothing of the probes remains" is_eq "$(f leftovers)" 0

echo "== A: a route leak between the two VRFs"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
ip route add 10.20.130.0/24 dev tacme0 vrf vrf_tdemo
ip route add 10.20.129.0/24 dev tdemo0 vrf vrf_tacme
probe a2 '$TWO_TENANTS'
ip route del 10.20.130.0/24 dev tacme0 vrf vrf_tdemo
ip route del 10.20.129.0/24 dev tdemo0 vrf vrf_tacme
leftovers
GUEST
)
show "$out"
check "A leak: the run fails" test "$(f a2_rc):$(f a2_verdict)" = "1:failed"
check "A leak: tdemo's blocked target was answered by 10.20.130.250" \
  test "$(f a2_tdemo_t1_passed):$(f a2_tdemo_t1_answered_by)" = "False:10.20.130.250"
check "A leak: tacme's blocked target was answered by 10.20.129.250" \
  test "$(f a2_tacme_t1_passed):$(f a2_tacme_t1_answered_by)" = "False:10.20.129.250"
check "A leak: tdemo's message starts with its name and names the missing isolation" \
  grep -q "^tdemo: 10.20.130.250 icmp: answered by 10.20.130.250 (.*) though it must be blocked: the isolation is missing" <<<"$(f a2_tdemo_msg)"
check "A leak: the internet and the management host are still as expected" \
  test "$(f a2_tdemo_t0_passed):$(f a2_tdemo_t2_passed):$(f a2_tacme_t0_passed):$(f a2_tacme_t2_passed)" = "True:True:True:True"
check "A leak: nothing of the probes remains" is_eq "$(f leftovers)" 0

echo "== B: a route in vrf_tdemo to the management subnet by vmbr0"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
ip route add 10.20.99.0/24 dev vmbr0 vrf vrf_tdemo
probe b1 '$TWO_TENANTS'
ip route del 10.20.99.0/24 dev vmbr0 vrf vrf_tdemo
leftovers
GUEST
)
show "$out"
check "B leak: the run fails" test "$(f b1_rc):$(f b1_verdict)" = "1:failed"
check "B leak: tdemo's management target was answered by 10.20.99.5, its probes left by vmbr0" \
  test "$(f b1_tdemo_t2_passed):$(f b1_tdemo_t2_answered_by):$(f b1_tdemo_t2_left_by)" = "False:10.20.99.5:vmbr0"
check "B leak: the message names the answer and the untranslated packets on vmbr0" \
  bash -c '[[ $1 == "tdemo: 10.20.99.5 icmp: answered by 10.20.99.5 "*"tenant packets left by vmbr0 untranslated"* ]]' _ "$(f b1_tdemo_msg)"
check "B leak: tacme, not leaking, still passes in the same run" test "$(f b1_tacme_verdict)" = passed
check "B leak: nothing of the probes remains" is_eq "$(f leftovers)" 0

echo "== C: a VLAN workload on vmbr1 (VLAN 210), its router off the node"
# lab-vrtr: eth0 a port of vmbr1 carrying VLAN 210 tagged (eth0.210 10.20.210.1), far0 to
# lab-far's 203.0.113.50 (/28). No IPv6 in either: its chatter would teach vmbr1 their MACs.
VLAN_PROBE="{\"count\": 2, \"timeout\": 2, \"probes\": [{\"name\": \"tvlan\", \"bridge\": \"vmbr1\", \"vlan\": 210,
  \"address\": \"10.20.210.250/24\", \"gateway\": \"10.20.210.1\",
  \"targets\": [{\"address\": \"203.0.113.50\"}, {\"address\": \"203.0.113.50\", \"size\": \"mtu\"}]}]}"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
for ns in lab-vrtr lab-far; do
  ip netns add \$ns
  ip netns exec \$ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n \$ns link set lo up
done
ip link add lab-vrtr-port type veth peer name eth0 netns lab-vrtr
ip link set lab-vrtr-port master vmbr1
bridge vlan del dev lab-vrtr-port vid 1
bridge vlan add dev lab-vrtr-port vid 210
ip link set lab-vrtr-port up
ip -n lab-vrtr link set eth0 up
ip -n lab-vrtr link add link eth0 name eth0.210 type vlan id 210
ip -n lab-vrtr addr add 10.20.210.1/24 dev eth0.210
ip -n lab-vrtr link set eth0.210 up
ip -n lab-vrtr link add far0 type veth peer name eth0 netns lab-far
ip -n lab-vrtr addr add 203.0.113.49/28 dev far0
ip -n lab-vrtr link set far0 up
ip -n lab-far addr add 203.0.113.50/28 dev eth0
ip -n lab-far link set eth0 up
ip -n lab-far route add default via 203.0.113.49
ip netns exec lab-vrtr sysctl -qw net.ipv4.ip_forward=1
echo "vmbr1_mtu=\$(cat /sys/class/net/vmbr1/mtu)"
probe c1 '$VLAN_PROBE'
leftovers
# The far hop 4 bytes short, the router's fragmentation-needed dropped.
short=\$((\$(cat /sys/class/net/vmbr1/mtu) - 4))
echo "short_mtu=\$short"
ip -n lab-vrtr link set far0 mtu \$short
ip -n lab-far link set eth0 mtu \$short
ip netns exec lab-vrtr nft -f - <<'NFT'
table ip egi_quiet {
  chain output {
    type filter hook output priority 0; policy accept;
    icmp type destination-unreachable icmp code frag-needed counter drop
  }
}
NFT
probe c2 '$VLAN_PROBE'
echo "quiet_drops=\$(ip netns exec lab-vrtr nft list table ip egi_quiet | grep -o 'packets [0-9]*' | grep -o '[0-9]*')"
ip netns exec lab-vrtr nft delete table ip egi_quiet
probe c3 '$VLAN_PROBE'
leftovers
GUEST
)
show "$out"
check "C: the VLAN workload reaches the far host by its router" test "$(f c1_tvlan_t0_passed)" = True
check "C: a full-size DF echo ($(f vmbr1_mtu) bytes) is answered" \
  test "$(f c1_tvlan_t1_passed):$(f c1_tvlan_t1_received)" = "True:2"
check "C: the run passes" test "$(f c1_rc):$(f c1_verdict)" = "0:passed"
check "C short, ICMP dropped: the full-size target fails as silently dropped" \
  bash -c '[[ $1 == False && $2 == *"203.0.113.50 icmp"*"got 0/2 replies and no fragmentation-needed came back: silently dropped"* ]]' _ \
  "$(f c2_tvlan_t1_passed)" "$(f c2_tvlan_msg)"
check "C short, ICMP dropped: the router did drop its fragmentation-needed" is_ge "$(f quiet_drops)" 1
check "C short, ICMP dropped: the small echo still passes, the run fails" \
  test "$(f c2_tvlan_t0_passed):$(f c2_rc):$(f c2_verdict)" = "True:1:failed"
check "C short, ICMP sent: passes with frag_needed_mtu $(f short_mtu)" \
  test "$(f c3_tvlan_t1_passed):$(f c3_tvlan_t1_frag_needed_mtu)" = "True:$(f short_mtu)"
check "C short, ICMP sent: the run passes" test "$(f c3_rc):$(f c3_verdict)" = "0:passed"
check "C: nothing of the probes remains" is_eq "$(f leftovers)" 0

echo "== D: IPv6 in tdemo"
DUAL="{$PROBE_RUN, \"probes\": [
  $(tenant tdemo vrf_tdemo 10.20.129.250/24 "$(reply 203.0.113.8)" "$(blocked 10.20.99.5)"),
  $(tenant tdemo/ipv6 vrf_tdemo 2001:db8:129::250/64 "$(reply 2001:db8:113::8)" "$(blocked 2001:db8:99::5)")]}"
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
# What the operator's configuration gives a node (molecule/default's transit_ipv6.yml) and the
# rest of an IPv6 path: forwarding, the transit VLAN, the internet host, a management host that
# knows the way back, the VNet's gateway, the VRF's default leaked from main, the tenant's
# subnet leaked into main (the return route), the upstream's route to it (no NAT66).
sysctl -a 2>/dev/null | grep -E '^net\.ipv6\.conf\.[^.]+\.(forwarding|disable_ipv6) ' | grep -v dvp >/tmp/egi-v6-sysctl
sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.conf.tdemo0.disable_ipv6=0 \
  net.ipv6.conf.vmbr0.disable_ipv6=0 net.ipv6.conf.vmbr0/50.disable_ipv6=0
ip netns exec transit sysctl -n net.ipv6.conf.all.forwarding >/tmp/egi-transit-v6fwd
ip netns exec transit sysctl -qw net.ipv6.conf.all.forwarding=1
ip addr add 2001:db8:50::22/64 dev vmbr0.50 nodad
ip -n transit addr add 2001:db8:50::1/64 dev eth0.50 nodad
ip -n transit addr add 2001:db8:113::1/64 dev inet0 nodad
ip -n internet addr add 2001:db8:113::8/64 dev eth0 nodad
ip -n internet route add default via 2001:db8:113::1
ip -n transit route add 2001:db8:129::/64 via 2001:db8:50::22
ip addr add 2001:db8:99::22/64 dev vmbr0 nodad
ip -n mgmt5 addr add 2001:db8:99::5/64 dev eth0 nodad
ip -n mgmt5 route add 2001:db8:129::/64 via 2001:db8:99::22
if [ -z "\$(ip -6 route show default)" ]; then
  ip -6 route add default via 2001:db8:50::1 dev vmbr0.50 && touch /tmp/egi-main-v6-default
fi
ip addr add 2001:db8:129::1/64 dev tdemo0 nodad
ip -6 route add 2001:db8:129::/64 dev tdemo0
ip -6 route add default via 2001:db8:50::1 dev vmbr0.50 vrf vrf_tdemo
echo "v6_default=\$(ip -6 route show vrf vrf_tdemo default)"
probe d1 '$DUAL'
leftovers
ip -6 route del default vrf vrf_tdemo
probe d2 '$DUAL'
leftovers
GUEST
)
show "$out"
check "D: the VRF has its IPv6 default" grep -q "via 2001:db8:50::1 dev vmbr0.50" <<<"$(f v6_default)"
check "D: the dual-stack run passes" test "$(f d1_rc):$(f d1_verdict)" = "0:passed"
check "D: IPv6 reaches the internet by vmbr0.50" \
  test "$(f d1_tdemo_ipv6_t0_passed):$(f d1_tdemo_ipv6_t0_left_by)" = "True:vmbr0.50"
check "D: the IPv6 management host is blocked ($(f d1_tdemo_ipv6_t1_blocked_by))" \
  test "$(f d1_tdemo_ipv6_t1_passed):$(f d1_tdemo_ipv6_t1_answered_by)" = "True:none"
check "D no IPv6 default: the run fails, the IPv4 probe still passes" \
  test "$(f d2_rc):$(f d2_verdict):$(f d2_tdemo_verdict)" = "1:failed:passed"
check "D no IPv6 default: the management host answered through vmbr0" \
  test "$(f d2_tdemo_ipv6_t1_passed):$(f d2_tdemo_ipv6_t1_answered_by):$(f d2_tdemo_ipv6_t1_left_by)" = "False:2001:db8:99::5:vmbr0"
check "D no IPv6 default: the message names the answer and the untranslated packets on vmbr0" \
  bash -c '[[ $1 == "tdemo/ipv6: 2001:db8:99::5 icmp: answered by 2001:db8:99::5 "*"tenant packets left by vmbr0 untranslated"* ]]' _ "$(f d2_tdemo_ipv6_msg)"
check "D: nothing of the probes remains" is_eq "$(f leftovers)" 0

echo "== teardown: the node as before"
trap - EXIT
out=$("$LAB" run bash -s <<GUEST
$GUEST_HELPER
$TEARDOWN
snapshot >/tmp/egi-after
diff /tmp/egi-before /tmp/egi-after | sed 's/^/diff: /' | head -40
echo "differences=\$(diff /tmp/egi-before /tmp/egi-after | grep -c '^[<>]')"
rm -f /tmp/egi-before /tmp/egi-after
GUEST
)
show "$out"
check "everything the test added is gone (links, namespaces, addresses, routes, nft, sysctl)" \
  is_eq "$(f differences)" 0

finish
