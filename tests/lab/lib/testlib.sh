# shellcheck shell=bash
# Helpers for lab tests (bash). Source it: . "$LAB_DIR/lib/testlib.sh"
# A test is any executable tests/lab/tests/*.sh; it runs on the host with LAB, LAB_DIR,
# REPO_ROOT, LAB_SSH, LAB_SSH_PORT, LAB_SSH_KEY set, and exits non-zero on failure.
set -euo pipefail

: "${LAB:?run tests through 'tests/lab/lab test' (LAB is not set)}"
checks_failed=0
checks_passed=0

# check DESCRIPTION COMMAND...: runs COMMAND, records and prints the result, never aborts.
check() {
  local what=$1
  shift
  if "$@"; then
    checks_passed=$((checks_passed + 1)); echo "  ok    $what"
  else
    checks_failed=$((checks_failed + 1)); echo "  FAIL  $what"
  fi
}

# figure KEY TEXT: the value of the line KEY=VALUE in TEXT (the guest prints its figures so).
figure() {
  local value
  value=$(grep -m1 "^$1=" <<<"$2" | cut -d= -f2-) || true
  [ -n "$value" ] || { echo "  (no figure '$1' in the guest's output)" >&2; echo MISSING; return; }
  echo "$value"
}

# Integer comparisons that fail (rather than abort) on a missing or non-numeric figure.
is_eq() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -eq "$2" ]; }
is_ge() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
is_le() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -le "$2" ]; }

# copy_module NAME: the release binary of module NAME into the guest's PATH, or the test fails.
copy_module() {
  local binary=$REPO_ROOT/target/release/$1
  if [ ! -x "$binary" ]; then
    echo "  FAIL  $binary is missing: run make release-binaries (make test builds it)"
    exit 1
  fi
  "$LAB" copy "$binary" "/usr/local/bin/$1"
}

finish() {
  echo "  $checks_passed checks passed, $checks_failed failed"
  [ "$checks_failed" -eq 0 ]
}

# Guest-side helper, sent ahead of a test's guest commands (`"$LAB" run bash -s` with
# "$GUEST_RUN_MODULE" first): `run_module MODULE NAME JSON FIGURES` runs the module binary
# MODULE (copied into the guest's PATH) on JSON as its arguments file, as Ansible runs it, and
# prints NAME_rc=<its exit status>, then what the Python FIGURES prints: it gets `r`, the
# module's JSON result, and `out(KEY, VALUE)`, which prints NAME_KEY=VALUE. Its files are
# MODULE-NAME.json and MODULE-NAME.out in $TMPDIR (/tmp unless set).
GUEST_RUN_MODULE=$(cat <<'EOF'
run_module() {
  local module=$1 name=$2 rc=0 files=${TMPDIR:-/tmp}/$1-$2
  printf '%s' "$3" >"$files.json"
  "$module" "$files.json" >"$files.out" || rc=$?
  echo "${name}_rc=$rc"
  python3 - "$name" "$files.out" "$4" <<'PY'
import json, sys
name, path, figures = sys.argv[1:4]
r = json.load(open(path))
def out(key, value):
    print(f"{name}_{key}={value}")
exec(figures)
PY
}
EOF
)
