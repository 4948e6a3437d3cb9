"""The role's probe step as the user meets it (tasks/tenant_egress.yml): one egress_probe run for
the plan's probes, then the summary task (the filter egress_probe_summary), which prints one line
per probe and fails naming whose address answered though it must be blocked.

This kernel has no VRF: the probe runs on the default VRF in a namespace of the test's own (the
fixture vnet_node: a VNet bridge and a far host 203.0.113.8), and the role gets its plan as an
extra variable, which outranks the role's set_fact; the plan's other parts are empty, so the
other steps have nothing to do. The derivation of the isolation targets is test_node_plan.py's."""
from __future__ import annotations

import json
import re
import textwrap

from conftest import VENV_BIN
from test_egress_probe import vnet_node  # noqa: F401 (the fixture)

ROLE = "deevnet.net.proxmox_node_network"
SUMMARY_TASK = "What the probes showed, per tenant"


def probe_part(targets, origins):
    """The plan's egress_probe: one probe from the VNet on the default VRF."""
    return {"probes": [{"name": "tdemo", "vrf": "default", "address": "10.20.129.250/24",
                        "expect_egress_interface": "uplink", "targets": targets}],
            "count": 1, "forbidden_interfaces": [], "origins": {"tdemo": origins}}


def role_run(node, env, tmp_path, plan_parts, *args):
    """The role's tenant-egress tasks on the node with the plan's `plan_parts`, the others empty,
    every file in tmp_path and an FRR apply command that would fail loudly."""
    plan = {
        "exit_node": False, "transit_interface": None, "tenants": [], "declared_vrfs": [],
        "forbidden_interfaces": [], "rp_filter": {}, "frr_stanzas": [], "undeclared_vrfs": "ignore",
        "route_assertions": [], "control_plane": {}, "egress_probe": {},
        "sdn": {"mode": "ignore", "tenants_from": "inventory", "disagreements": [], "drift": [], "failure": "",
                "warnings": []},
        **plan_parts,
    }
    extra = tmp_path / "plan.json"
    extra.write_text(json.dumps({"__proxmox_node_network_plan": plan}))
    site = tmp_path / "site.yml"
    site.write_text(textwrap.dedent(f"""\
        - hosts: localhost
          connection: local
          gather_facts: false
          vars:
            proxmox_node_network_sdn: ignore
            proxmox_node_network_tenant_egress:
              tenants: [{{name: tdemo}}]
            proxmox_node_network_frr_local_path: {tmp_path / "frr.conf.local"}
            proxmox_node_network_frr_owner_record: {tmp_path / "owners.json"}
            proxmox_node_network_sysctl_path: {tmp_path / "90-deevnet-tenant-fabric.conf"}
            proxmox_node_network_frr_apply_command: ["false"]
          roles:
            - {ROLE}
        """))
    (tmp_path / "frr.conf.local").write_text("")
    return node.run(env, str(VENV_BIN / "ansible-playbook"), str(site), "-e", f"@{extra}", "--tags",
                    "tenant-egress", *args)


def run_role(node, env, tmp_path, targets, origins, *args):
    return role_run(node, env, tmp_path, {"egress_probe": probe_part(targets, origins)}, *args)


def test_the_probe_step_prints_each_isolation_target_s_origin_and_how_it_was_blocked(vnet_node, ansible_env,  # noqa: F811
                                                                                    tmp_path):
    # 198.51.100.9: the node has no route to it, so it is refused at the node.
    proc = run_role(vnet_node, ansible_env, tmp_path,
                    [{"address": "203.0.113.8"}, {"address": "198.51.100.9", "expect": "blocked"}],
                    {"198.51.100.9": "tenant tother's workload"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert SUMMARY_TASK in proc.stdout
    assert re.search(r"tdemo: passed; egress 1/1 targets answered; isolation: 198\.51\.100\.9 \(tenant tother's "
                     r"workload\) blocked: icmp \S+-unreachable", proc.stdout), proc.stdout


def test_the_probe_step_fails_naming_whose_address_answered(vnet_node, ansible_env, tmp_path):  # noqa: F811
    # The far host answers: the separation the plan expected is missing.
    proc = run_role(vnet_node, ansible_env, tmp_path,
                    [{"address": "203.0.113.8", "expect": "blocked"}],
                    {"203.0.113.8": "tenant tother's workload"})
    assert proc.returncode != 0, proc.stdout
    out = " ".join(proc.stdout.split())
    assert "tdemo: 203.0.113.8 icmp: answered by 203.0.113.8" in out, proc.stdout
    assert "tdemo: 203.0.113.8 is tenant tother's workload" in out, proc.stdout
    assert "failed=1" in out, proc.stdout
    # In check mode nothing was fixed: the finding is a warning and the run goes on.
    proc = run_role(vnet_node, ansible_env, tmp_path,
                    [{"address": "203.0.113.8", "expect": "blocked"}],
                    {"203.0.113.8": "tenant tother's workload"}, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "203.0.113.8 (tenant tother's workload) NOT blocked: answered by 203.0.113.8" in proc.stdout, proc.stdout
