#!/usr/bin/env bash
# deevnet.net.sdn_check on the lab node hv02, whose SDN is written in Proxmox's files
# (guest/sdn/ -> /etc/pve/sdn, /etc/network/interfaces, interfaces.d/sdn by lab-sdn-ifaces) and
# whose kernel has real VRFs: the node as provisioned gives its zone, its tenant and no drift;
# each form of drift is made, named with its fix, then cleared by that fix:
#   A  the catch-all on an exit node            fix: the reload advice (the VRF's post-up deletes it)
#   B  a VNet bridge without its gateway        fix: the reload advice
#   C  a pending change (a zone in zones.cfg, not applied)   fix: pvesh set /cluster/sdn
#   D  a node not reloaded (.running-config newer than interfaces.d/sdn #version)  fix: the reload advice
#      and, once reloaded, the added zone is up in the kernel with no drift (VRF table auto: 1002)
#   E  IPv4 VXLAN devices after the VTEP moved to IPv6 (interfaces.d/sdn regenerated, the
#      kernel not re-created)                    fix: the reload advice
# The reload advice (collection/plugins/plugin_utils/reload_advice.txt) previews with
# `ifreload -a --no-act`: the checks below find that in each fix. In the lab, `pvesh set
# /cluster/sdn` is `lab-sdn-ifaces commit` and Proxmox's interface reload is
# `lab-sdn-ifaces apply` (or `reload`: write + apply); see guest/lab-sdn-ifaces. The runner's
# lab-reset-faults puts the SDN files back and reloads; the IPv6 address E adds, this test removes.
. "$LAB_DIR/lib/testlib.sh"

# Built on this host, whose glibc is not newer than the guest's.
(cd "$REPO_ROOT" && cargo build --release --locked --quiet -p sdn_check)
"$LAB" copy "$REPO_ROOT/target/release/sdn_check" /usr/local/bin/sdn_check

guest_script=$(cat <<'EOF'
figures=$(cat <<'PY'
# An empty list prints as "none": the host's figure() reads an empty value as missing.
join = lambda items: ",".join(items) or "none"
out("failed", str(r.get("failed", False)).lower())
out("zones", ",".join(f"{z['name']}:{z['type']}:{z['vrf']}:{z['l3vni']}:{z['exit_node']}:{z['vtep']}:{z['mtu']}" for z in r.get("zones", [])))
out("vnets", ",".join(f"{v['name']}:{v['vni']}:" + "+".join(f"{s['cidr']}/{s['gateway']}/{s['snat']}" for s in v["subnets"]) for z in r.get("zones", []) for v in z["vnets"]))
out("tenants", ",".join(f"{t['name']}:{t['vrf']}:{t['l3vni_bridge']}:{t['exit_node']}" for t in r.get("tenants", [])))
out("version", f"{r.get('version', {}).get('running')}/{r.get('version', {}).get('applied')}")
out("pending", join(f"{p['kind']}:{p['id']}:{p['change']}" for p in r.get("pending", [])))
out("drift_objects", join(sorted({d["object"] for d in r.get("drift", [])})))
for i, d in enumerate(r.get("drift", [])):
    out(f"drift{i}", f"{d['object']} | {d['declared']} | {d['found']} | {d['fix']}")
out("msg", r.get("msg", "").replace("\n", " / "))
PY
)
sc() { run_module sdn_check "$1" '{"_ansible_check_mode": true}' "$figures"; }
catch_all="unreachable default metric 4278198272"

sc applied

# A: the catch-all on an exit node
ip route add vrf vrf_tdemo $catch_all
sc catchall
lab-sdn-ifaces apply >/dev/null
sc catchall_fixed

# B: the gateway address gone from the VNet bridge
ip addr del 10.20.129.1/24 dev tdemo0
sc gateway
lab-sdn-ifaces apply >/dev/null
sc gateway_fixed

# C: a zone added in the .cfg files, not applied
cat >>/etc/pve/sdn/zones.cfg <<'CFG'
evpn: tdemo2
	controller evpnctl
	vrf-vxlan 10002
	exitnodes hv02
	ipam pve
	mac BC:24:11:4E:7A:02

CFG
printf 'vnet: tdemo2v0\n\tzone tdemo2\n\ttag 11002\n\n' >>/etc/pve/sdn/vnets.cfg
printf 'subnet: tdemo2-10.20.130.0-24\n\tvnet tdemo2v0\n\tgateway 10.20.130.1\n\tsnat 1\n\n' >>/etc/pve/sdn/subnets.cfg
sc pending
lab-sdn-ifaces commit >/dev/null

# D: applied cluster-wide, this node not reloaded
sc not_reloaded
lab-sdn-ifaces reload >/dev/null
sc reloaded
echo "tdemo2_table=$(ip -j -d link show vrf_tdemo2 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["linkinfo"]["info_data"]["table"])')"
echo "tdemo2_gateway=$(ip -4 -br addr show dev tdemo2v0 | awk '{print $3}') $(ip -j link show tdemo2v0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["master"])')"

# E: the underlay moves to IPv6; interfaces.d/sdn regenerated, the kernel's devices not re-created
ip addr add 2001:db8:51::22/64 dev vmbr0.51 nodad
sed -i 's|address 10.20.51.22/24|address 2001:db8:51::22/64|' /etc/network/interfaces
sed -i 's|peers .*|peers 2001:db8:51::21,2001:db8:51::22,2001:db8:51::23|' /etc/pve/sdn/controllers.cfg
lab-sdn-ifaces commit >/dev/null
lab-sdn-ifaces write
sc ipv6_vtep
lab-sdn-ifaces apply >/dev/null
sc ipv6_vtep_fixed
echo "vxlan_local=$(ip -d link show vxlan_tdemo0 | grep -o 'local [^ ]*')"
ip addr del 2001:db8:51::22/64 dev vmbr0.51
EOF
)
out=$("$LAB" run bash -s <<<"$GUEST_RUN_MODULE
$guest_script")
sed 's/^/  | /' <<<"$out"
f() { figure "$1" "$out"; }

check "as provisioned: sdn_check passes (rc 0)" test "$(f applied_rc):$(f applied_failed)" = 0:false
check "as provisioned: zone tdemo, EVPN, vrf_tdemo, L3VNI 10001, exit node, VTEP 10.20.51.22, MTU 1450" \
  test "$(f applied_zones)" = "tdemo:evpn:vrf_tdemo:10001:True:10.20.51.22:1450"
check "as provisioned: VNet tdemo0, VNI 11001, 10.20.129.0/24 gateway .1 with SNAT" \
  test "$(f applied_vnets)" = "tdemo0:11001:10.20.129.0/24/10.20.129.1/True"
check "as provisioned: tenant tdemo (vrf_tdemo, vrfbr_tdemo, exit node)" test "$(f applied_tenants)" = "tdemo:vrf_tdemo:vrfbr_tdemo:True"
check "as provisioned: version running 1, applied 1; nothing pending; no drift" \
  test "$(f applied_version)|$(f applied_pending)|$(f applied_drift_objects)" = "1/1|none|none"

check "A: the catch-all on the exit node fails, named, fix removes it" \
  bash -c '[ "$1" = 1:true ] && [[ $2 == vrf_tdemo*"catch-all"*"ip route del vrf vrf_tdemo unreachable default metric 4278198272"* ]]' _ \
  "$(f catchall_rc):$(f catchall_failed)" "$(f catchall_drift0)"
check "A: cleared by the fix (the VRF's post-up on reload)" test "$(f catchall_fixed_rc):$(f catchall_fixed_drift_objects)" = "0:none"

check "B: the gateway missing on tdemo0 fails, named with its fix" \
  bash -c '[ "$1" = 1:true ] && [[ $2 == tdemo0*"10.20.129.1/24"*"ifreload -a --no-act"*"deevnet.net.fabric_change"* ]]' _ \
  "$(f gateway_rc):$(f gateway_failed)" "$(f gateway_drift0)"
check "B: cleared by ifreload" test "$(f gateway_fixed_rc):$(f gateway_fixed_drift_objects)" = "0:none"

check "C: the zone added in zones.cfg, not applied, is pending: zone, vnet, subnet added" \
  test "$(f pending_rc):$(f pending_pending)" = "1:zone:tdemo2:added,vnet:tdemo2v0:added,subnet:tdemo2-10.20.130.0-24:added"
check "C: its finding names the fix pvesh set /cluster/sdn" grep -q 'pvesh set /cluster/sdn' <<<"$(grep '^pending_drift' <<<"$out")"

check "D: after the apply, the node not reloaded (running 2, applied 1) fails with the reload advice" \
  bash -c '[ "$1" = 1:2/1:none ] && grep -q "ifreload -a --no-act.*deevnet.net.fabric_change" <<<"$2"' _ \
  "$(f not_reloaded_rc):$(f not_reloaded_version):$(f not_reloaded_pending)" "$(grep '^not_reloaded_drift' <<<"$out")"
check "D: cleared by the reload: two zones, two tenants, no drift" \
  test "$(f reloaded_rc)|$(f reloaded_version)|$(f reloaded_tenants)|$(f reloaded_drift_objects)" = \
  "0|2/2|tdemo:vrf_tdemo:vrfbr_tdemo:True,tdemo2:vrf_tdemo2:vrfbr_tdemo2:True|none"
check "D: the added zone is up in the kernel: vrf_tdemo2 table 1002 (vrf-table auto), tdemo2v0 10.20.130.1/24 in it" \
  test "$(f tdemo2_table) $(f tdemo2_gateway)" = "1002 10.20.130.1/24 vrf_tdemo2"

check "E: IPv4 VXLAN devices under an IPv6 VTEP fail: vrfvx/vxlan devices of both zones named" \
  test "$(f ipv6_vtep_rc):$(f ipv6_vtep_drift_objects)" = "1:vrfvx_tdemo,vrfvx_tdemo2,vxlan_tdemo0,vxlan_tdemo2v0"
check "E: each says IPv6 declared, IPv4 found, re-create with the reload advice" \
  bash -c '[[ $1 == *"2001:db8:51::22"*"(IPv6)"*"10.20.51.22"*"(IPv4)"*"ifreload -a --no-act"*"deevnet.net.fabric_change"* ]]' _ "$(f ipv6_vtep_drift0)"
check "E: cleared by ifreload (the devices re-created with the IPv6 local address)" \
  test "$(f ipv6_vtep_fixed_rc):$(f ipv6_vtep_fixed_drift_objects):$(f vxlan_local)" = "0:none:local 2001:db8:51::22"

finish
