"""The role's closing block and its list of what is missing (collection/plugins/filter/node_summary.py),
without a node: from registered results by hand (the modules' documented keys) and a plan from the
plan filter, what a real run says it changed and proved, what a check run says a real run would
change and assert, and one list of what is missing, each tenant without its VRF with the fixes."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from conftest import filter_plugin

node_plan = filter_plugin("node_plan")
node_summary = filter_plugin("node_summary")

EXIT = {"transit_interface": "vmbr0.50", "transit_gateway": "10.20.50.1", "management_interface": "vmbr0",
        "management_probes": ["10.20.99.5"], "tenants": [{"name": "tdemo"}, {"name": "acme", "vrf": "vrf_x"}]}
PLAN = node_plan.tenant_egress_plan(EXIT)
APPLY = ["perl", "-MPVE::Network::SDN", "-e", "PVE::Network::SDN::generate_frr_config(1)"]
SKIPPED = {"skipped": True, "changed": False}


def vrf_check(vrf, ok, msg):
    return {"vrf": vrf, "check": "vrf", "ok": ok, "expected": {"kind": "vrf"}, "actual": None, "msg": msg}


# vrf_route_assert on the plan's declared_vrfs, as the role registers it (failed_when: false).
ONE_MISSING = {"changed": False, "failed": False, "checks": [
    vrf_check("vrf_tdemo", True, "vrf_tdemo: VRF with table 1001, ifindex 9"),
    vrf_check("vrf_x", False, "vrf_x: the tenant has no VRF on this node (no interface named vrf_x)")],
    "msg": "vrf_x: the tenant has no VRF on this node (no interface named vrf_x)"}
ALL_THERE = {"changed": False, "failed": False, "checks": ONE_MISSING["checks"][:1], "msg": "all 1 checks passed"}

VRF_X_MISSING = (
    "tenant acme: vrf_x: the tenant has no VRF on this node (no interface named vrf_x); fix: apply the SDN in "
    "Proxmox, so that the node creates the zone's VRF (Datacenter > SDN > Apply); set the tenant's vrf: key "
    "(proxmox_node_network_tenant_egress.tenants[1].vrf) when its VRF has another name; on a node without Proxmox's "
    "SDN, define the VRF in its network configuration; a kernel without VRF support (no CONFIG_NET_VRF) can have "
    "none: boot one that has it")


def test_each_tenant_without_its_vrf_is_named_with_the_fixes_and_the_real_run_s_refusal():
    missing = node_summary.tenant_vrfs_missing(ONE_MISSING, PLAN)
    assert missing["lines"] == [VRF_X_MISSING]
    assert missing["failure"] == (
        "1 declared tenant(s) lack their VRF on this node; nothing was changed:\n" + VRF_X_MISSING)
    assert node_summary.tenant_vrfs_missing(ALL_THERE, PLAN) == {"lines": [], "failure": ""}
    assert node_summary.tenant_vrfs_missing(SKIPPED, PLAN) == {"lines": [], "failure": ""}


def test_a_discovered_tenant_s_vrf_is_the_sdn_s_so_no_vrf_key_is_suggested():
    plan = {**PLAN, "sdn": {**PLAN["sdn"], "tenants_from": "sdn"}}
    line = node_summary.tenant_vrfs_missing(ONE_MISSING, plan)["lines"][0]
    assert "vrf: key" not in line and "apply the SDN in Proxmox" in line, line


def test_a_vrf_check_that_could_not_ask_the_kernel_fails_with_its_message():
    with pytest.raises(AnsibleFilterError, match=r"^the tenants' VRFs could not be checked "
                                                 r"\(deevnet.net.vrf_route_assert\): cannot open a netlink socket"):
        node_summary.tenant_vrfs_missing({"failed": False, "msg": "cannot open a netlink socket"}, PLAN)


def check_results(**overrides):
    """A check run on a node being prepared: nothing there yet, every write would change."""
    results = {
        "vrfs": ONE_MISSING,
        "sysctl": {"changed": True, "msg": "/etc/sysctl.d/90-deevnet-tenant-fabric.conf would be written"},
        "frr_local": {"changed": True, "msg": "2 added; lint clean"},
        "frr_applied": SKIPPED, "frr_reapplied": SKIPPED, "frr_reapply_due": False,
        "assertion": {"changed": False, "checks": ONE_MISSING["checks"], "msg": "check mode: ..."},
        "reassertion": SKIPPED, "control_plane": SKIPPED, "egress_probe": SKIPPED,
    }
    return {**results, **overrides}


def test_check_mode_shows_what_would_change_what_would_be_asserted_and_one_list_of_what_is_missing():
    plan = {**PLAN, "sdn": {**PLAN["sdn"], "mode": "fail", "absent": "not applied here"}}
    summary = node_summary.tenant_egress_summary(check_results(), plan, check_mode=True, apply_command=APPLY)
    assert summary["lines"] == [
        "node: exit node (transit vmbr0.50); tenants: tdemo (vrf_tdemo), acme (vrf_x); SDN: not applied on this node",
        "check mode: nothing was changed; a real run would change: forwarding (/etc/sysctl.d/90-deevnet-tenant-"
        "fabric.conf would be written); frr.conf.local (2 added; lint clean); FRR applied (perl -MPVE::Network::SDN "
        "-e PVE::Network::SDN::generate_frr_config(1))",
        "would assert: vrf_tdemo: default via 10.20.50.1, 1 management lookup(s) and every prefix connected on vmbr0 "
        "never by vmbr0",
        "would assert: vrf_x: default via 10.20.50.1, 1 management lookup(s) and every prefix connected on vmbr0 "
        "never by vmbr0",
        "would assert: no undeclared VRF falls through (undeclared_vrfs: fail)",
        "not true yet: 1 finding(s), the warnings above (what a real run, after its changes, must make true)",
        "a real run would stop before any change: 1 tenant(s) without their VRF",
        "missing: " + VRF_X_MISSING,
        "missing: the cluster's SDN, not applied here",
    ]
    assert summary["missing"] == [VRF_X_MISSING, "the cluster's SDN, not applied here"]
    assert summary["failed"] is True


def test_check_mode_with_nothing_missing_does_not_fail_and_says_a_second_frr_apply():
    results = check_results(vrfs=ALL_THERE, sysctl={"changed": False, "msg": "unchanged"},
                            frr_local={"changed": False, "msg": "2 unchanged; lint clean"}, frr_reapply_due=True,
                            assertion={"checks": ALL_THERE["checks"]})
    summary = node_summary.tenant_egress_summary(results, PLAN, check_mode=True, apply_command=APPLY)
    assert summary["failed"] is False and summary["missing"] == []
    assert summary["lines"][0].endswith("SDN: not read (proxmox_node_network_sdn: ignore)")
    assert summary["lines"][1] == (
        "check mode: nothing was changed; a real run would change: FRR applied again (perl -MPVE::Network::SDN -e "
        "PVE::Network::SDN::generate_frr_config(1)): the kernel lacks a default frr.conf.local implies")
    assert not any(line.startswith(("not true yet", "missing")) for line in summary["lines"]), summary


def test_a_real_run_says_what_changed_and_what_was_proven():
    results = {
        "vrfs": ALL_THERE,
        "sysctl": {"changed": True, "msg": "/etc/sysctl.d/90-deevnet-tenant-fabric.conf written; 3 runtime value(s) set"},
        "frr_local": {"changed": True, "msg": "2 added; lint clean"},
        "frr_applied": {"changed": True, "rc": 0}, "frr_reapplied": SKIPPED,
        "assertion": {"changed": False, "msg": "all 9 checks passed in 2 VRFs; no undeclared VRF falls through"},
        "reassertion": SKIPPED,
        "control_plane": {"changed": False, "findings": [], "msg": "core session Established"},
        "egress_probe": {"changed": False, "verdict": "passed", "probes": [{"name": "tdemo"}]},
    }
    summary = node_summary.tenant_egress_summary(results, PLAN, apply_command=APPLY)
    assert summary["lines"][1:] == [
        "changed: forwarding (/etc/sysctl.d/90-deevnet-tenant-fabric.conf written; 3 runtime value(s) set); "
        "frr.conf.local (2 added; lint clean); FRR applied",
        "proven: routes: all 9 checks passed in 2 VRFs; no undeclared VRF falls through; control plane: core session "
        "Established; probes: passed (1 probe(s))",
    ]
    assert summary["failed"] is False
    # Nothing to do: the second run of a converged node.
    unchanged = {**results, "sysctl": {"changed": False}, "frr_local": {"changed": False}, "frr_applied": SKIPPED,
                 "control_plane": SKIPPED, "egress_probe": SKIPPED}
    lines = node_summary.tenant_egress_summary(unchanged, PLAN)["lines"]
    assert lines[1] == "changed: nothing"
    assert lines[2] == ("proven: routes: all 9 checks passed in 2 VRFs; no undeclared VRF falls through; control "
                        "plane: not asserted (no core_peer); probes: none (no tenant has a probe)")
    # After FRR was applied again, the second assertion is the proof.
    again = {**results, "frr_applied": SKIPPED, "frr_reapplied": {"changed": True},
             "reassertion": {"msg": "all 9 checks passed in 2 VRFs after 1.5 s (4 attempts)"}}
    lines = node_summary.tenant_egress_summary(again, PLAN)["lines"]
    assert "FRR applied again (the kernel lacked a default frr.conf.local implies)" in lines[1]
    assert lines[2].startswith("proven: routes: all 9 checks passed in 2 VRFs after 1.5 s (4 attempts);")


def test_a_first_assertion_frr_applied_again_repaired_is_no_failure():
    """The role's first route assertion keeps its module's verdict (its failure is judged after the
    FRR re-apply decision); when FRR was applied again and the second assertion passed, the run
    failed nowhere, and a second assertion that failed is the one named."""
    lost = {"changed": False, "failed": True, "checks": [], "msg": "vrf_tdemo: no default route\nmore"}
    results = {"vrfs": {"checks": [{"check": "vrf", "vrf": "vrf_tdemo", "ok": True}]},
               "sysctl": {"changed": False}, "frr_local": {"changed": False}, "frr_applied": SKIPPED,
               "frr_reapplied": {"changed": True}, "assertion": lost,
               "reassertion": {"msg": "all 9 checks passed in 2 VRFs after 1.5 s (4 attempts)"},
               "control_plane": SKIPPED, "egress_probe": SKIPPED}
    lines = node_summary.tenant_egress_summary(results, PLAN)["lines"]
    assert not [line for line in lines if line.startswith("failed:")], lines
    still = {**results, "reassertion": {**lost, "msg": "vrf_tdemo: still no default route"}}
    lines = node_summary.tenant_egress_summary(still, PLAN)["lines"]
    assert "failed: the route assertion after the second FRR apply (vrf_tdemo: still no default route)" in lines, lines
    # Without a second assertion, the first one's failure is the run's.
    alone = {**results, "frr_reapplied": SKIPPED, "reassertion": SKIPPED}
    lines = node_summary.tenant_egress_summary(alone, PLAN)["lines"]
    assert "failed: the route assertion (vrf_tdemo: no default route)" in lines, lines


def test_the_installed_filters_are_the_collection_s(ansible_env, tmp_path):
    """Both filters by their collection names, through Ansible (the role calls them so)."""
    import subprocess

    from conftest import VENV_BIN, local_playbook
    play = local_playbook(tmp_path / "summary.yml", """\
        - name: The summary of a check run with nothing done
          ansible.builtin.assert:
            that:
              - (skipped | deevnet.net.tenant_vrfs_missing(plan)).lines == []
              - "({'vrfs': skipped} | deevnet.net.tenant_egress_summary(plan, check_mode=true)).failed == false"
          vars:
            skipped: {skipped: true}
            plan: {tenants: [], route_assertions: [], sdn: {mode: ignore}}
        """)
    proc = subprocess.run([VENV_BIN / "ansible-playbook", str(play)], env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_real_run_that_failed_half_way_says_what_it_changed_before_and_what_failed():
    """The role prints the block after a failure too (its `always`)."""
    results = {
        "vrfs": ALL_THERE,
        "sysctl": {"changed": True, "msg": "/etc/sysctl.d/90-deevnet-tenant-fabric.conf written; 3 runtime value(s) set"},
        "frr_local": {"changed": True, "msg": "2 added; lint clean"},
        "frr_applied": {"changed": True, "rc": 0},
        "assertion": {"changed": False, "failed": True,
                      "msg": "vrf_tdemo: table 1001 has no IPv4 default route; expected default via 10.20.50.1\nmore"},
    }
    summary = node_summary.tenant_egress_summary(results, PLAN)
    assert summary["lines"][1:] == [
        "changed: forwarding (/etc/sysctl.d/90-deevnet-tenant-fabric.conf written; 3 runtime value(s) set); "
        "frr.conf.local (2 added; lint clean); FRR applied",
        "proven: routes: NOT proven (failed, below); control plane: not asserted (no core_peer); probes: none (no "
        "tenant has a probe)",
        "failed: the route assertion (vrf_tdemo: table 1001 has no IPv4 default route; expected default via "
        "10.20.50.1)",
    ]
    assert summary["failed"] is False
    # Stopped on a tenant without its VRF: nothing changed, nothing asserted, the tenant named.
    stopped = node_summary.tenant_egress_summary({"vrfs": ONE_MISSING}, PLAN)
    assert stopped["lines"][1:] == [
        "changed: nothing",
        "proven: routes: not asserted; control plane: not asserted (no core_peer); probes: none (no tenant has a "
        "probe)",
        "stopped before any change: 1 tenant(s) without their VRF",
        "missing: " + VRF_X_MISSING,
    ]
    # A probe whose verdict is not passed failed, though the role's failed_when keeps `failed` false.
    probed = {**results, "assertion": {"msg": "all 9 checks passed"},
              "egress_probe": {"failed": False, "verdict": "failed", "msg": "tdemo: 203.0.113.8 answered"}}
    lines = node_summary.tenant_egress_summary(probed, PLAN)["lines"]
    assert lines[2].endswith("probes: NOT proven (failed, below)") and lines[3] == (
        "failed: the probes (tdemo: 203.0.113.8 answered)"), lines
    # A failed FRR apply is no change, but a failure.
    unapplied = {**results, "frr_applied": {"changed": True, "failed": True, "rc": 1, "msg": "non-zero return code"},
                 "assertion": SKIPPED}
    lines = node_summary.tenant_egress_summary(unapplied, PLAN)["lines"]
    assert lines[1].endswith("frr.conf.local (2 added; lint clean)") and "FRR applied" not in lines[1], lines
    assert lines[3] == "failed: the FRR apply (non-zero return code)", lines
