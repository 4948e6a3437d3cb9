#!/usr/bin/env bash
# deevnet.net.frr_local_stanza on the lab node, end to end: the module writes frr.conf.local
# (the tenant default route of use case 1, with the lab's names) after `vtysh -C` accepted it,
# the SDN apply (Proxmox's 1.3.0 merge + frr-reload.py) loads it into the running FRR, and the
# kernel gets vrf_tdemo's default route. A file Proxmox's merge would break is reported by the
# module's health check, and the merge output really is rejected by vtysh. The node is put
# back in the incident state at the end.
. "$LAB_DIR/lib/testlib.sh"

copy_module frr_local_stanza

out=$("$LAB" run bash -s <<'GUEST'
set -u
field() { python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }
args='{"path": "/etc/frr/frr.conf.local", "asn": 65020, "validate": "vtysh -C -f %s", "stanzas": [
  {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 5 deny 0.0.0.0/0"},
  {"header": "ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31"},
  {"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]}'
first=$(frr_local_stanza - <<<"$args")
second=$(frr_local_stanza - <<<"$args")
echo "first=$(field "$first" 'r.get("changed"), r.get("lint"), r.get("msg")')"
echo "second_changed=$(field "$second" 'r.get("changed")')"
echo "mode=$(stat -c '%a %U %G' /etc/frr/frr.conf.local)"

lab-sdn-apply >/tmp/frr_local_stanza.apply 2>&1; echo "apply_rc=$?"
for _ in $(seq 30); do
  ip route show vrf vrf_tdemo default | grep -q 'via 10.20.50.1' && break
  sleep 1
done
echo "kernel_default=$(ip route show vrf vrf_tdemo default | head -n 1)"
echo "merged_route=$(grep -c '^ ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default$' /etc/frr/frr.conf)"
running=$(vtysh -c 'show running-config')
echo "running_route=$(grep -c '^ ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default$' <<<"$running")"
echo "running_prefix_list=$(grep -c '^ip prefix-list LEAK-SUBNET-ONLY seq 10 permit 0.0.0.0/0 le 31$' <<<"$running")"

# The spec's E3: an indented exit-vrf. The health check names it; the merge really breaks.
printf 'vrf vrf_tdemo\n ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default\n exit-vrf\n' >/tmp/broken.local
health=$(frr_local_stanza - <<<'{"path": "/tmp/broken.local"}')
echo "health=$(field "$health" '",".join("%s:%s" % (f["line"], f["rule"]) for f in r.get("lint", []))')"
lab-sdn-apply --generated /etc/deevnet-lab/frr.conf.generated --local /tmp/broken.local --print >/tmp/broken.merged 2>&1
vtysh -C -f /tmp/broken.merged >/tmp/broken.vtysh 2>&1; echo "broken_vtysh_rc=$?"

lab-reset-faults >/dev/null 2>&1; echo "reset_rc=$?"
GUEST
)
sed 's/^/  | /' <<<"$out"
check "first run writes the file, lint clean" grep -q "^first=(True, \[\], " <<<"$out"
check "second run changes nothing" test "$(figure second_changed "$out")" = False
check "new file is 0640 root:frr" test "$(figure mode "$out")" = "640 root frr"
check "SDN apply (merge + frr-reload.py) succeeds" is_eq "$(figure apply_rc "$out")" 0
check "merged frr.conf carries the route once" is_eq "$(figure merged_route "$out")" 1
check "running FRR has the route in vrf_tdemo" is_eq "$(figure running_route "$out")" 1
check "running FRR has the prefix-list entry" is_eq "$(figure running_prefix_list "$out")" 1
check "kernel: vrf_tdemo default via 10.20.50.1" grep -q "via 10.20.50.1" <<<"$(figure kernel_default "$out")"
check "health check names E3's lines and rules" \
  test "$(figure health "$out")" = "1:unterminated-block,3:exit-vrf,3:indented-terminator"
check "the merge of that file is rejected by vtysh" test "$(figure broken_vtysh_rc "$out")" != 0
check "node back in the incident state" is_eq "$(figure reset_rc "$out")" 0
finish
