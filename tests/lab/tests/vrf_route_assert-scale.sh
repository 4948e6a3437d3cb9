#!/usr/bin/env bash
# Benchmark, not a timed test (runs only with LAB_BENCH=1, it takes minutes under TCG):
# LAB_BENCH_VRFS (1,000) VRFs of 100 routes each (the leaked default, the unreachable
# catch-all and 98 prefixes), asserted in one run of vrf_route_assert (every default check plus
# one lookup per VRF), beside `ip -j route show vrf X` run once per VRF. Prints the times; the
# checks are only that the module ran every check and passed. Removes what it adds.
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
FIRST_TABLE=5001
# vrf_b0001 … (15 bytes at most), tables 5001 …
names() { seq -f 'vrf_b%04g' 1 "\$VRFS"; }
table_of() { echo \$((FIRST_TABLE + 10#\${1#vrf_b} - 1)); }
cleanup() {
  { for v in \$(names); do echo "link del \$v"; echo "route flush table \$(table_of \$v)"; done; } |
    ip -force -batch - 2>/dev/null || true
}
trap cleanup EXIT

started=\$(date +%s)
{
  for v in \$(names); do
    t=\$(table_of \$v)
    echo "link add \$v type vrf table \$t"
    echo "link set \$v up"
    echo "route add default via 10.20.50.1 dev vmbr0.50 table \$t"
    echo "route add unreachable default metric 4278198272 table \$t"
    for j in \$(seq 0 97); do echo "route add 172.16.\$j.0/24 via 10.20.50.1 dev vmbr0.50 table \$t"; done
  done
} | ip -batch -
echo "setup_seconds=\$((\$(date +%s) - started))"
echo "routes_in_vrf_tables=\$(for v in vrf_b0001 \$(names | tail -n1); do ip route show vrf \$v | wc -l; done | paste -sd,)"

python3 - "\$VRFS" >/tmp/vra-bench.json <<'PY'
import json, sys
n = int(sys.argv[1])
print(json.dumps({"vrfs": [
    {"name": f"vrf_b{i:04d}", "default_via": "10.20.50.1", "default_dev": "vmbr0.50",
     "lookups": [{"dst": f"172.16.{i % 98}.9", "via": "10.20.50.1", "dev": "vmbr0.50"}],
     "forwarding": False}
    for i in range(1, n + 1)]}))
PY

ms() { echo \$((\$(date +%s%N) / 1000000)); }
t0=\$(ms)
rc=0
vrf_route_assert /tmp/vra-bench.json >/tmp/vra-bench.out || rc=\$?
echo "module_ms=\$((\$(ms) - t0))"
echo "module_rc=\$rc"
python3 -c 'import json,sys; r=json.load(open("/tmp/vra-bench.out")); print("module_checks=%d" % len(r.get("results", []))); print("module_msg=" + r.get("msg", "").splitlines()[0])'

t0=\$(ms)
for v in \$(names); do ip -j route show vrf "\$v" >/dev/null; done
echo "ip_route_show_loop_ms=\$((\$(ms) - t0))"
GUEST
)
sed 's/^/  | /' <<<"$out"
check "the module ran and passed" is_eq "$(figure module_rc "$out")" 0
check "vrf, default and one lookup for each of the $VRFS VRFs" is_eq "$(figure module_checks "$out")" $((VRFS * 3))
check "each VRF table holds 100 routes" test "$(figure routes_in_vrf_tables "$out")" = "100,100"
echo "  benchmark: $VRFS VRFs x 100 routes: vrf_route_assert $(figure module_ms "$out") ms in one process," \
  "ip -j route show vrf X once per VRF $(figure ip_route_show_loop_ms "$out") ms"

finish
