"""The role on a node being prepared, with its default settings, through Ansible with the installed
collection: a check run shows the whole plan (the sysctl.d and frr.conf.local diffs, the assertions a
real run would make) and ends with one list of what is missing; a real run refuses before any
change; every run ends with one summary block.

The node is a network namespace of the test's own (the node fixture), every file the role writes is
in tmp_path. The role's SDN setting is left at its default (fail): this machine has no /etc/pve, so
sdn_check's default running configuration does not exist, which is exactly a node without an applied
SDN (plain Debian with FRR, or Proxmox before its SDN is applied). This kernel has no VRF support, so
every tenant VRF is missing, and the module says why."""
from __future__ import annotations

import textwrap

from conftest import VENV_BIN

ROLE = "deevnet.net.proxmox_node_network"
SUMMARY_TASK = "What this run changed on the node and what it proved"
EXIT = """\
transit_interface: vmbr0.50
transit_gateway: 10.20.50.1
management_interface: vmbr0
management_probes: [10.20.99.5]
tenants: [{name: tdemo}]
"""


def role_play(node, tmp_path, egress: str, extra_vars: str = ""):
    """The role on the node, its SDN setting at the default, every file in tmp_path (sysctl.d's
    folders the node's, through module_defaults), and an FRR apply command that fails loudly should
    it run."""
    (tmp_path / "frr.conf.local").write_text("")
    site = tmp_path / "site.yml"
    site.write_text(textwrap.dedent(f"""\
        - hosts: localhost
          connection: local
          gather_facts: false
          module_defaults:
            deevnet.net.sysctl_forwarding:
              sysctl_dirs: [{node.etc}, {node.usr}]
          vars:
            proxmox_node_network_frr_local_path: {tmp_path / "frr.conf.local"}
            proxmox_node_network_frr_owner_record: {tmp_path / "owners.json"}
            proxmox_node_network_sysctl_path: {node.conf}
            proxmox_node_network_frr_apply_command: ["false"]
        """) + textwrap.indent(textwrap.dedent(extra_vars), "    ")
        + "    proxmox_node_network_tenant_egress:\n" + textwrap.indent(textwrap.dedent(egress), "      ")
        + f"  roles:\n    - {ROLE}\n")
    return site


def run(node, env, site, *args):
    return node.run(env, str(VENV_BIN / "ansible-playbook"), str(site), "--tags", "tenant-egress", *args)


def flat(text: str) -> str:
    """Ansible's output on one line: wrapped warnings and results joined, quotes' escapes kept."""
    return " ".join(text.split())


def test_the_default_sdn_setting_on_a_node_without_an_applied_sdn_warns_with_the_real_choices(node, ansible_env,
                                                                                            tmp_path):
    proc = run(node, ansible_env, role_play(node, tmp_path, EXIT), "--check", "--diff")
    out = flat(proc.stdout + proc.stderr)
    assert "create it first" not in out and "give another running_config" not in out, out
    assert ("[WARNING]: proxmox_node_network_sdn is fail, but the cluster's SDN is not applied on this node "
            "(/etc/pve/sdn/.running-config does not exist: no SDN was ever applied, or this is not a Proxmox VE "
            "node), so the plan comes from the inventory alone") in out, out
    assert "set proxmox_node_network_sdn: ignore" in out and "apply the SDN in Proxmox" in out, out
    # The SDN is no reason to stop: the run went on to the end.
    assert SUMMARY_TASK in out, out


def test_discover_without_an_applied_sdn_fails_before_any_change_naming_the_choices(node, ansible_env, tmp_path):
    site = role_play(node, tmp_path, EXIT.replace("tenants: [{name: tdemo}]", "tenants: discover"))
    proc = run(node, ansible_env, site)
    assert proc.returncode != 0, proc.stdout
    out = flat(proc.stdout)
    assert ("proxmox_node_network_tenant_egress.tenants is discover, which takes the tenants from the cluster's SDN, "
            "but the SDN is not applied on this node") in out, out
    assert "create it" not in out, out
    assert not node.conf.exists() and node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0"


def test_a_check_run_shows_the_whole_plan_and_ends_with_one_list_of_what_is_missing(node, ansible_env, tmp_path):
    proc = run(node, ansible_env, role_play(node, tmp_path, EXIT), "--check", "--diff")
    out = flat(proc.stdout)
    # Nothing failed before the end: the missing VRF did not stop the plan.
    fatal = [line for line in proc.stdout.splitlines() if line.startswith("fatal: ")]
    assert len(fatal) == 1, proc.stdout
    assert SUMMARY_TASK in proc.stdout.split(fatal[0])[0].rsplit("TASK [", 1)[1], proc.stdout
    # The diffs: forwarding in sysctl.d, the tenant's leaked default in frr.conf.local.
    assert "+net.ipv4.conf.all.forwarding = 1" in out, proc.stdout
    assert "+vrf vrf_tdemo" in out and "+ ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default" in out, proc.stdout
    # The summary: what a real run would change and assert, then one list of what is missing.
    summary = out.split(SUMMARY_TASK, 1)[1]
    for expected in (
        "node: exit node (transit vmbr0.50); tenants: tdemo (vrf_tdemo); SDN: not applied on this node",
        "check mode: nothing was changed; a real run would change: forwarding (",
        "frr.conf.local (",
        "FRR applied (false)",
        "would assert: vrf_tdemo: default via 10.20.50.1, 1 management lookup(s) and every prefix connected on vmbr0 "
        "never by vmbr0",
        "would assert: no undeclared VRF falls through (undeclared_vrfs: fail)",
        "a real run would stop before any change: 1 tenant(s) without their VRF",
        "missing: tenant tdemo: vrf_tdemo: the tenant has no VRF on this node (no interface named vrf_tdemo); this "
        "kernel cannot have VRFs:",
        "fix: apply the SDN in Proxmox, so that the node creates the zone's VRF",
        "set the tenant's vrf: key (proxmox_node_network_tenant_egress.tenants[0].vrf)",
        "missing: the cluster's SDN, not applied on this node (/etc/pve/sdn/.running-config does not exist); apply "
        "it in Proxmox, or, on a node without Proxmox's SDN, set proxmox_node_network_sdn: ignore",
    ):
        assert expected in summary, f"{expected!r} not in:\n{proc.stdout}"
    # Nothing changed on the node.
    assert not node.conf.exists() and (tmp_path / "frr.conf.local").read_text() == ""
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0"


def test_a_real_run_on_a_node_without_the_tenant_s_vrf_changes_nothing_and_names_the_fixes(node, ansible_env,
                                                                                         tmp_path):
    proc = run(node, ansible_env, role_play(node, tmp_path, EXIT))
    assert proc.returncode != 0, proc.stdout
    out = flat(proc.stdout)
    assert "TASK [deevnet.net.proxmox_node_network : No declared tenant lacks its VRF" in out, proc.stdout
    assert ("1 declared tenant(s) lack their VRF on this node; nothing was changed:\\ntenant tdemo: vrf_tdemo: the "
            "tenant has no VRF on this node (no interface named vrf_tdemo)") in out, proc.stdout
    assert "set the tenant's vrf: key" in out, proc.stdout
    # The summary follows the failure: nothing changed, nothing asserted, why it stopped.
    summary = out.split(SUMMARY_TASK, 1)[1].replace('", "', "; ")
    assert ("changed: nothing; proven: routes: not asserted; control plane: not asserted (no core_peer); probes: "
            "none (no tenant has a probe); stopped before any change: 1 tenant(s) without their VRF; missing: tenant "
            "tdemo: vrf_tdemo") in summary, proc.stdout
    assert "failed=1" in out, proc.stdout
    assert not node.conf.exists() and (tmp_path / "frr.conf.local").read_text() == ""
    assert node.proc(f"net/ipv4/conf/{node.transit}/forwarding") == "0"


def test_every_real_run_ends_with_what_changed_and_what_was_proven(node, ansible_env, tmp_path):
    """An exit node with no tenant yet (this kernel has no VRF): forwarding is the one change."""
    site = role_play(node, tmp_path, EXIT.replace("tenants: [{name: tdemo}]", "tenants: []"),
                     "proxmox_node_network_undeclared_vrfs: ignore\n")
    proc = run(node, ansible_env, site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = flat(proc.stdout).split(SUMMARY_TASK, 1)[1]
    assert "node: exit node (transit vmbr0.50); tenants: none; SDN: not applied on this node" in summary, summary
    assert f"changed: forwarding ({node.conf} written" in summary, summary
    assert "proven: routes: all 0 checks passed in 0 VRFs; control plane: not asserted (no core_peer)" in summary, summary
    assert "missing: the cluster's SDN, not applied on this node" in summary, summary
    proc = run(node, ansible_env, site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "changed: nothing; proven: routes:" in flat(proc.stdout).replace('", "', "; "), proc.stdout
