#!/usr/bin/env bash
# The guest-side helper every module test uses (lib/testlib.sh, GUEST_RUN_MODULE): it runs the
# module on its arguments file as Ansible does, reports the exit status, and prints the figures
# the test asks for from the JSON result. Runs on the host, no VM needed: a stand-in module
# prints a fixed result and exits 3.
set -euo pipefail
LAB_DIR=${LAB_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
LAB=${LAB:-unused}
. "$LAB_DIR/lib/testlib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
cat >"$work/bin/stand_in" <<'EOF'
#!/bin/sh
cp "$1" "${1%.json}.seen"
printf '%s\n' '{"failed": true, "changed": false, "msg": "first\nsecond", "checks": [{"name": "a", "ok": false}]}'
exit 3
EOF
chmod +x "$work/bin/stand_in"

figures='for i, line in enumerate(r["msg"].splitlines()):
    out(f"msg{i}", line)
out("failed_checks", ",".join(c["name"] for c in r["checks"] if not c["ok"]))
out("keys", json.dumps(sorted(r)))'
out=$(PATH="$work/bin:$PATH" TMPDIR=$work bash -c "$GUEST_RUN_MODULE
run_module stand_in one '{\"vrf\": \"vrf_tdemo\"}' '$figures'")
sed 's/^/  | /' <<<"$out"

check "the module's exit status" test "$(figure one_rc "$out")" = 3
check "each figure under the run's name" \
  test "$(figure one_msg0 "$out"),$(figure one_msg1 "$out"),$(figure one_failed_checks "$out")" = "first,second,a"
check "the figures see the whole result (json too)" test "$(figure one_keys "$out")" = '["changed", "checks", "failed", "msg"]'
check "the module got its arguments in a file" test "$(cat "$work/stand_in-one.seen")" = '{"vrf": "vrf_tdemo"}'
check "its result is kept beside it" grep -q '"failed": true' "$work/stand_in-one.out"
check "nothing but the figures and the status is printed" is_eq "$(wc -l <<<"$out")" 5
finish
