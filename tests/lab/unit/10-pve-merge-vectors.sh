#!/usr/bin/env bash
# The lab's SDN apply must merge frr.conf.local exactly as Proxmox's 1.3.0 code does: compare
# its output, byte for byte, with what Proxmox's own merge produced: the vectors of
# modules/frr_local_stanza/tests/data/pve-merge (docs/proxmox-frr-merge.md B.6, B.8), the one copy
# in the repository. Runs on the host, no VM needed.
set -euo pipefail
LAB_DIR=${LAB_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
vectors=${PVE_MERGE_VECTORS:-$LAB_DIR/../../modules/frr_local_stanza/tests/data/pve-merge}
merge=$LAB_DIR/guest/lab-sdn-apply
[ -d "$vectors" ] || { echo "  FAIL  no vectors at $vectors"; exit 1; }

failed=0 passed=0
expect_same() {
  local what=$1 generated=$2 local_file=$3 expected=$4
  if diff -u "$expected" <("$merge" --generated "$generated" --local "$local_file" --print) >/tmp/lab-merge-diff.$$; then
    passed=$((passed + 1)); echo "  ok    $what"
  else
    failed=$((failed + 1)); echo "  FAIL  $what"; head -n 20 /tmp/lab-merge-diff.$$
  fi
  rm -f /tmp/lab-merge-diff.$$
}

# Case A (not an exit node): Proxmox's generated config is the merge of an empty local file.
case_a=$vectors/edge/base.130.out
expect_same "no local file: generated config unchanged" "$case_a" /dev/null "$case_a"
expect_same "case A, exit-vrf variant" "$case_a" "$vectors/frr.conf.local.exit-vrf" "$vectors/merged_1.3.0_caseA.conf"
expect_same "case A, portable variant" "$case_a" "$vectors/frr.conf.local.portable" "$vectors/merged_1.3.0_caseA.conf"
for edge in e1a e3 e6 e10; do
  expect_same "edge $edge" "$case_a" "$vectors/edge/$edge.conf" "$vectors/edge/$edge.130.out"
done

# Case B (exit node): its generated config is the merged one without the local file's lines.
case_b=$(mktemp)
grep -v -e '^ ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default$' -e '^  import vrf default$' \
  -e '^ip prefix-list LEAK-SUBNET-ONLY' "$vectors/merged_1.3.0_caseB.conf" |
  sed '/^  import vrf vrf_evpn$/{n;/^  neighbor VTEP activate$/d}' >"$case_b"
expect_same "case B (exit node), exit-vrf variant" "$case_b" "$vectors/frr.conf.local.exit-vrf" "$vectors/merged_1.3.0_caseB.conf"
expect_same "case B (exit node), portable variant" "$case_b" "$vectors/frr.conf.local.portable" "$vectors/merged_1.3.0_caseB.conf"
rm -f "$case_b"

# E2: an empty stanza for a generated vrf makes Proxmox's generation fail: so must the lab's.
if "$merge" --generated "$case_a" --local "$vectors/edge/e2.conf" --print >/dev/null 2>&1; then
  failed=$((failed + 1)); echo "  FAIL  edge e2 (empty generated vrf stanza) must fail"
else
  passed=$((passed + 1)); echo "  ok    edge e2 (empty generated vrf stanza) fails"
fi

echo "  $passed checks passed, $failed failed"
[ "$failed" -eq 0 ]
