#!/usr/bin/env bash
# Benchmark, not a timed test (runs only with LAB_BENCH=1): LAB_BENCH_VRFS (1,000) VRFs of 100
# routes each (a leaked default, the unreachable catch-all and 98 prefixes), asserted in one run
# of vrf_route_assert (every default check plus one lookup per VRF), beside
# `ip -j route show vrf X` run once per VRF. Prints the times; the checks are only that the
# module ran every check and passed. The VRFs live in a namespace of their own, so that the
# node's FRR and networkd do not chase 1,000 links (under TCG that took minutes), and deleting
# the namespace removes them all.
#
# Measured in the lab VM under TCG (2 shared cores), 1,000 VRFs x 100 routes, 4,000 checks:
#   vrf_route_assert, one process                      11.3 s
#   ip -j route show vrf X, once per VRF (1,000 runs)  136.6 s
#   (setting the VRFs up: 159 s)
. "$LAB_DIR/lib/testlib.sh"

if [ "${LAB_BENCH:-0}" != 1 ]; then
  echo "  skipped: set LAB_BENCH=1 to run the VRF scale benchmark"
  exit 77
fi
VRFS=${LAB_BENCH_VRFS:-1000}

(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p vrf_route_assert)
"$LAB" copy "$REPO_ROOT/target/release/vrf_route_assert" /usr/local/bin/vrf_route_assert

out=$("$LAB" run bash -s <<GUEST
set -euo pipefail
VRFS=$VRFS
NS=vra-bench
FIRST_TABLE=5001
ip netns del \$NS 2>/dev/null || true
ip netns add \$NS
trap 'ip netns del \$NS' EXIT
# The uplink stands in for vmbr0.50, with the transit gateway 10.20.50.1 on its subnet.
ip -n \$NS link set lo up
ip -n \$NS link add uplink type veth peer name uplink-peer
ip -n \$NS addr add 10.20.50.22/24 dev uplink
ip -n \$NS link set uplink up
ip -n \$NS link set uplink-peer up
ip netns exec \$NS sysctl -qw net.ipv4.conf.uplink.forwarding=1

started=\$(date +%s)
for i in \$(seq 1 \$VRFS); do
  v=\$(printf 'vrf_b%04d' \$i)
  t=\$((FIRST_TABLE + i - 1))
  echo "link add \$v type vrf table \$t"
  echo "link set \$v up"
  echo "route add default via 10.20.50.1 dev uplink table \$t"
  echo "route add unreachable default metric 4278198272 table \$t"
  for j in \$(seq 0 97); do echo "route add 172.16.\$j.0/24 via 10.20.50.1 dev uplink table \$t"; done
done | ip -n \$NS -batch -
echo "setup_seconds=\$((\$(date +%s) - started))"
echo "routes_in_vrf_tables=\$(for v in vrf_b0001 \$(printf 'vrf_b%04d' \$VRFS); do ip -n \$NS route show vrf \$v | wc -l; done | paste -sd,)"

python3 - "\$VRFS" >/tmp/vra-bench.json <<'PY'
import json, sys
n = int(sys.argv[1])
print(json.dumps({"vrfs": [
    {"name": f"vrf_b{i:04d}", "default_via": "10.20.50.1", "default_dev": "uplink",
     "lookups": [{"dst": f"172.16.{i % 98}.9", "via": "10.20.50.1", "dev": "uplink"}]}
    for i in range(1, n + 1)]}))
PY

ms() { echo \$((\$(date +%s%N) / 1000000)); }
t0=\$(ms)
rc=0
ip netns exec \$NS vrf_route_assert /tmp/vra-bench.json >/tmp/vra-bench.out || rc=\$?
echo "module_ms=\$((\$(ms) - t0))"
echo "module_rc=\$rc"
python3 -c 'import json; r=json.load(open("/tmp/vra-bench.out")); print("module_checks=%d" % len(r.get("checks", []))); print("module_msg=" + r.get("msg", "").splitlines()[0])'

t0=\$(ms)
ip netns exec \$NS bash -c "for i in \\\$(seq 1 \$VRFS); do ip -j route show vrf \\\$(printf 'vrf_b%04d' \\\$i) >/dev/null; done"
echo "ip_route_show_loop_ms=\$((\$(ms) - t0))"
GUEST
)
sed 's/^/  | /' <<<"$out"
check "the module ran and passed" is_eq "$(figure module_rc "$out")" 0
check "vrf, default, one lookup and forwarding for each of the $VRFS VRFs" \
  is_eq "$(figure module_checks "$out")" $((VRFS * 4))
check "each VRF table holds 100 routes" test "$(figure routes_in_vrf_tables "$out")" = "100,100"
echo "  benchmark: $VRFS VRFs x 100 routes: vrf_route_assert $(figure module_ms "$out") ms in one process," \
  "ip -j route show vrf X once per VRF $(figure ip_route_show_loop_ms "$out") ms"

finish
