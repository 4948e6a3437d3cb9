#!/usr/bin/env bash
# deevnet.net.change_guard's switch where systemd is PID 1, as on a Proxmox node: the lab VM.
# The switch is a transient systemd timer and service, the boot unit is written and enabled.
# - run r1: armed (12 s), the file changed, never confirmed: the timer restores it and runs the
#   reload within the timeout and 10 s, and its units are gone after;
# - run r2: armed, then confirmed: its timer is stopped, the change stays;
# - run r3: armed, its timer gone as after a reboot (transient units do not outlive one): the
#   boot unit itself (systemctl start) restores it and records it `booted`.
# Every path is in a folder of the test's; the boot unit is disabled and removed at the end.
. "$LAB_DIR/lib/testlib.sh"

copy_module change_guard

out=$("$LAB" run bash -s <<'GUEST'
set -u
field() { python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }
d=$(mktemp -d /root/change-guard.XXXXXX)
mkdir "$d/etc"
conf=$d/etc/a.conf
printf '#!/bin/sh\necho reloaded >>%s/reload.log\n' "$d" >"$d/reload"
chmod 755 "$d/reload"
guard() { printf '{"state_dir": "%s/state", %s}' "$d" "$1" >"$d/args.json"; change_guard "$d/args.json"; }
arm() {
  guard "\"state\": \"armed\", \"run_id\": \"$1\", \"timeout\": $2, \"paths\": [\"$conf\"],
    \"reload\": [{\"paths\": [\"$conf\"], \"argv\": [\"$d/reload\"]}]"
}
record() { field "$(cat "$d/state/runs/$1/switch.json")" "$2"; }
# RUN locked and armed for TIMEOUT s; prints its unit.
arm_unit() {
  guard "\"state\": \"locked\", \"run_id\": \"$1\"" >/dev/null
  field "$(arm "$1" "$2")" 'r["switch"]["unit"]'
}
echo "pid1=$(cat /proc/1/comm)"

# r1: never confirmed.
echo old >"$conf"
guard '"state": "locked", "run_id": "r1"' >/dev/null
armed=$(arm r1 12)
armed_at=$(date +%s)
unit=$(field "$armed" 'r["switch"]["unit"]')
echo "r1_timer=$(field "$armed" 'r["switch"]["timer"]')"
echo "r1_unit_active=$(systemctl is-active "$unit.timer")"
echo "boot_unit=$(systemctl is-enabled deevnet-change-guard-boot.service)"
echo new >"$conf"
# One process polls the record (a Python start per poll costs a second under TCG).
python3 - "$d/state/runs/r1/switch.json" "$armed_at" <<'PY'
import json, sys, time
path, armed_at = sys.argv[1], int(sys.argv[2])
while time.time() < armed_at + 40:
    try:
        if json.load(open(path)).get("state") == "expired":
            break
    except (OSError, ValueError):
        pass
    time.sleep(0.2)
print(f"r1_after={int(time.time()) - armed_at}")
PY
echo "r1_state=$(record r1 'r["state"]')"
echo "r1_file=$(cat "$conf")"
echo "r1_reloads=$(grep -c reloaded "$d/reload.log" 2>/dev/null || echo 0)"
sleep 1
echo "r1_units_after=$(systemctl is-active "$unit.timer" "$unit.service" | sort -u | tr '\n' ,)"
guard '"state": "unlocked", "run_id": "r1"' >/dev/null

# r2: confirmed.
unit=$(arm_unit r2 300)
echo "r2_armed_unit=$unit"
echo newer >"$conf"
confirmed=$(guard '"state": "confirmed", "run_id": "r2"')
echo "r2_changed=$(field "$confirmed" 'r["changed"]')"
echo "r2_state=$(record r2 'r["state"]')"
echo "r2_unit=$(systemctl is-active "$unit.timer")"
echo "r2_file=$(cat "$conf")"
guard '"state": "unlocked", "run_id": "r2"' >/dev/null

# r3: its timer gone as after a reboot; the boot unit restores it.
unit=$(arm_unit r3 300)
echo "r3_armed_unit=$unit"
echo newest >"$conf"
systemctl stop "$unit.timer"
systemctl start deevnet-change-guard-boot.service; echo "boot_rc=$?"
echo "r3_state=$(record r3 'r["state"]')"
echo "r3_file=$(cat "$conf")"

systemctl disable --quiet deevnet-change-guard-boot.service
rm -f /etc/systemd/system/deevnet-change-guard-boot.service
systemctl daemon-reload
rm -rf "$d"
GUEST
)
sed 's/^/  | /' <<<"$out"
check "systemd is PID 1 in the VM" test "$(figure pid1 "$out")" = systemd
check "r1: the switch is a systemd timer, active" \
  test "$(figure r1_timer "$out"),$(figure r1_unit_active "$out")" = "systemd,active"
check "the boot unit is enabled" test "$(figure boot_unit "$out")" = enabled
check "r1: expired by its timer" test "$(figure r1_state "$out")" = expired
check "r1: restored within the timeout and 10 s" \
  is_le "$(figure r1_after "$out")" 22
check "r1: the file back" test "$(figure r1_file "$out")" = old
check "r1: the reload ran once" is_eq "$(figure r1_reloads "$out")" 1
check "r1: its timer and service gone after" test "$(figure r1_units_after "$out")" = "inactive,"
check "r2: confirmed, its timer stopped, the change kept" test "$(figure r2_changed "$out"),$(figure r2_state "$out"),\
$(figure r2_unit "$out"),$(figure r2_file "$out")" = "True,confirmed,inactive,newer"
check "r2 and r3 armed with their own units" \
  test "$(figure r2_armed_unit "$out"),$(figure r3_armed_unit "$out")" = "deevnet-change-guard-r2,deevnet-change-guard-r3"
check "r3: the boot unit ran" is_eq "$(figure boot_rc "$out")" 0
check "r3: restored at boot" test "$(figure r3_state "$out"),$(figure r3_file "$out")" = "booted,newer"
finish
