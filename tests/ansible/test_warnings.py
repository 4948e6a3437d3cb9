"""Real Ansible warnings (issue 28): check-mode findings of the assertion modules and the role's old
variable names reach the user as Ansible's own [WARNING] and [DEPRECATION WARNING] lines on stderr
(what AWX shows as warning events, what deprecation_warnings=False silences), not as green `ok`
debug output on stdout.

This kernel has no VRF: the modules run on the default VRF (the main table) in a namespace of the
test's own, and the role's check-mode run gets its plan (what the plan filter would make of a
node's tenants, with the default VRF standing in for the tenant's) as an extra variable, which
outranks the role's set_fact."""
from __future__ import annotations

import re
import textwrap

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import ROOT, VENV_BIN, filter_plugin, local_playbook
from test_egress_probe import vnet_node  # noqa: F401 (the fixture)
from test_role_probe_step import probe_part, role_run

PREFIX = "[WARNING]: would still be wrong unless a task before this one fixes it (check mode): "
NO_DEFAULT = "default: table main has no IPv4 default route; expected default via 10.20.50.1"
ROLE = "deevnet.net.proxmox_node_network"
role_deprecations = filter_plugin("role_deprecations")


def playbook(node, env, path, *args):
    return node.run(env, str(VENV_BIN / "ansible-playbook"), str(path), *args)


def one_line(text: str) -> str:
    """stderr with Ansible's line wrapping undone (it wraps long warnings at the terminal width)."""
    return " ".join(text.split())


ASSERT_NO_DEFAULT = """\
- name: The default VRF has its default
  deevnet.net.vrf_route_assert:
    vrf: default
    default_via: 10.20.50.1
    check_mode_findings: {policy}
"""


def test_check_mode_findings_are_real_warnings_with_warn(node, ansible_env, tmp_path):
    play = local_playbook(tmp_path / "warn.yml", ASSERT_NO_DEFAULT.format(policy="warn"))
    proc = playbook(node, ansible_env, play, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert PREFIX + NO_DEFAULT in one_line(proc.stderr), proc.stderr
    assert "would still be wrong" not in proc.stdout, "the finding is a warning, not task output"
    # Outside check mode the assertion fails, whatever check_mode_findings says.
    proc = playbook(node, ansible_env, play)
    assert proc.returncode != 0 and NO_DEFAULT in proc.stdout, proc.stdout
    assert "would still be wrong" not in proc.stderr, proc.stderr


def test_check_mode_findings_fail_by_default(node, ansible_env, tmp_path):
    play = local_playbook(tmp_path / "fail.yml", ASSERT_NO_DEFAULT.format(policy="fail"))
    proc = playbook(node, ansible_env, play, "--check")
    assert proc.returncode != 0 and NO_DEFAULT in proc.stdout, proc.stdout
    assert "would still be wrong" not in proc.stderr, proc.stderr


def test_egress_probe_findings_are_real_warnings_in_check_mode(vnet_node, ansible_env, tmp_path):  # noqa: F811
    play = local_playbook(tmp_path / "probe.yml", """\
        - name: The tenant reaches a host that does not answer
          deevnet.net.egress_probe:
            vrf: default
            address: 10.20.129.250/24
            targets: [{address: 198.51.100.9}]
            count: 1
            timeout: 1
            check_mode_findings: warn
          register: probe
        - name: The full result is there
          ansible.builtin.assert:
            that: [probe.verdict == 'failed', probe is not failed]
        """)
    proc = playbook(vnet_node, ansible_env, play, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert PREFIX + "198.51.100.9" in one_line(proc.stderr), proc.stderr


def test_a_check_mode_run_of_the_role_prints_its_findings_as_warnings(vnet_node, ansible_env, tmp_path):  # noqa: F811
    """The role's own tasks in check mode (tasks/tenant_egress.yml): the final assertion and the
    egress probe find what a real run would still have to fix; both come back as [WARNING] lines
    on stderr, the run succeeds, and no debug task repeats them on stdout."""
    parts = {"route_assertions": [{"name": "default", "default_via": "10.20.50.1"}],
             "egress_probe": probe_part([{"address": "198.51.100.9"}], {})}
    proc = role_run(vnet_node, ansible_env, tmp_path, parts, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stderr = one_line(proc.stderr)
    assert PREFIX + NO_DEFAULT in stderr, proc.stderr
    # The role's one probe run names each finding's tenant first.
    assert PREFIX + "tdemo: 198.51.100.9" in stderr, proc.stderr
    assert "would still be wrong" not in proc.stdout, proc.stdout
    # The summary task reports the failed verdict without failing the check run.
    assert "tdemo: failed; egress 0/1 targets answered; isolation: no isolation target" in proc.stdout, proc.stdout
    assert "failed=0" in proc.stdout and "ignored=0" in proc.stdout, proc.stdout


OLD_NAME = """\
proxmox_tenant_egress:
  transit_interface: vmbr0.50
  transit_gateway: 10.20.50.1
  management_interface: vmbr0
  tenants:
    - name: tdemo
"""


def role_play(tmp_path, variables: str):
    site = tmp_path / "site.yml"
    # No Proxmox SDN here: the role's SDN comparison is off (tested in test_node_plan.py).
    site.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  vars:\n"
                    + "    proxmox_node_network_sdn: ignore\n"
                    + textwrap.indent(variables, "    ") + f"  roles:\n    - {ROLE}\n")
    return site


def test_an_old_variable_name_is_a_real_deprecation(node, ansible_env, tmp_path):
    site = role_play(tmp_path, OLD_NAME)
    proc = playbook(node, ansible_env, site, "--tags", "tenant-egress")
    stderr = one_line(proc.stderr)
    assert ("[DEPRECATION WARNING]: deevnet.net.proxmox_node_network: the variable proxmox_tenant_egress is "
            "deprecated and is read only until deevnet.net 0.2.0; rename it to proxmox_node_network_tenant_egress"
            ) in stderr, proc.stderr
    assert "version 0.2.0" in stderr, proc.stderr  # Ansible's own words: removed from deevnet.net 0.2.0
    assert stderr.count("[DEPRECATION WARNING]") == 1, proc.stderr  # once, and nothing about `vars`
    assert "DEPRECATED" not in proc.stdout, proc.stdout
    assert "vrf_tdemo" in proc.stdout, "the old name still fills the new one"
    # Ansible's switch for deprecations silences it.
    quiet = playbook(node, dict(ansible_env, ANSIBLE_DEPRECATION_WARNINGS="0"), site, "--tags", "tenant-egress")
    assert "proxmox_tenant_egress" not in quiet.stderr, quiet.stderr


RENAMED = [{"old": "proxmox_tenant_egress", "new": "proxmox_node_network_tenant_egress", "removed_in": "0.2.0",
            "by": ROLE, "set": True},
           {"old": "proxmox_qinq_uplink", "new": "proxmox_node_network_qinq_uplink", "removed_in": "0.2.0",
            "by": ROLE, "set": False}]


def test_each_old_name_set_is_one_deprecation_naming_role_release_and_successor():
    """The filter deevnet.net.renamed_variables, as plain functions: the old names set, and their
    deprecations (what the role reports in its first task)."""
    assert role_deprecations.renamed_variable_deprecations(RENAMED) == [{
        "msg": ("deevnet.net.proxmox_node_network: the variable proxmox_tenant_egress is deprecated and is read only "
                "until deevnet.net 0.2.0; rename it to proxmox_node_network_tenant_egress"),
        "version": "0.2.0"}]
    assert role_deprecations.renamed_variable_deprecations([{**entry, "set": False} for entry in RENAMED]) == []
    assert role_deprecations.renamed_variables([{**RENAMED[0], "set": False}]) == []
    # Set for another host of the play only (its inventory): still reported, once.
    unset = [{**entry, "set": False} for entry in RENAMED]
    hostvars = {"h1": {"ansible_host": "h1"}, "h2": {"proxmox_qinq_uplink": {}}}
    assert role_deprecations.renamed_variables(unset, hostvars, ["h1", "h2"]) == ["proxmox_qinq_uplink"]
    assert role_deprecations.renamed_variables(unset, hostvars, ["h1"]) == []


def test_each_renamed_variable_of_the_role_is_removed_in_a_later_release():
    """What pylint's deprecation check does for a literal version, for the role's data: every
    removed_in is a version after the collection's own, and its old name is documented."""
    from ansible.module_utils.compat.version import LooseVersion

    version = yaml.safe_load((ROOT / "galaxy.yml").read_text())["version"]
    role = ROOT / "roles" / "proxmox_node_network"
    renamed = yaml.safe_load((role / "vars" / "main.yml").read_text())["__proxmox_node_network_renamed_variables"]
    options = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert renamed
    for entry in renamed:
        assert LooseVersion(str(entry["removed_in"])) > LooseVersion(version), entry
        assert entry["old"] in options and entry["new"] in options, entry


def test_a_renamed_variable_entry_without_its_keys_is_refused_naming_them():
    with pytest.raises(AnsibleFilterError, match=r"lacks removed_in, set; each entry needs old, new, removed_in"):
        role_deprecations.renamed_variable_deprecations([{"old": "a", "new": "b", "by": ROLE}])
    with pytest.raises(AnsibleFilterError, match="must be a list"):
        role_deprecations.renamed_variable_deprecations("proxmox_tenant_egress")


def test_an_old_name_on_several_hosts_is_one_deprecation_per_run(node, ansible_env, tmp_path):
    """Three hosts, the old name in the inventory of the second and third: the role's first task
    reports it once for the run, on every ansible-core (and runs whatever --tags selects)."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(textwrap.dedent("""\
        all:
          vars: {ansible_connection: local, ansible_python_interpreter: auto_silent}
          hosts:
            h1: {}
        """) + "".join(f"    {host}:\n" + textwrap.indent(OLD_NAME, "      ") for host in ("h2", "h3")))
    site = tmp_path / "site.yml"
    site.write_text(f"- hosts: all\n  gather_facts: false\n  vars:\n    proxmox_node_network_sdn: ignore\n"
                    f"  roles:\n    - {ROLE}\n")
    proc = playbook(node, ansible_env, site, "-i", str(inventory), "--tags", "no-section")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stderr = one_line(proc.stderr)
    assert stderr.count("[DEPRECATION WARNING]") == 1, proc.stderr
    assert "the variable proxmox_tenant_egress is deprecated" in stderr, proc.stderr


def test_the_module_transport_reads_no_role_s_variable():
    """The transport every module runs through (plugin_utils, the action plugins) is generic: it
    names no variable of a role of the collection (a role reports its own deprecations)."""
    role_variables = set()
    for role in (ROOT / "roles").iterdir():
        for part in ("vars/main.yml", "defaults/main.yml"):
            if (role / part).is_file():
                role_variables |= set(yaml.safe_load((role / part).read_text()) or {})
        specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
        for spec in specs.values():
            role_variables |= set(spec.get("options") or {})
    assert role_variables, "the roles' variables were read"
    transport = sorted((ROOT / "collection" / "plugins" / "plugin_utils").glob("*.py")) + sorted(
        (ROOT / "collection" / "plugins" / "action").glob("*.py"))
    named = {f"{path.name}: {name}" for path in transport
             for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text())
             if name in role_variables or name.startswith("__deevnet_net_")}
    assert named == set()


def test_the_new_name_gets_no_deprecation(node, ansible_env, tmp_path):
    site = role_play(tmp_path, OLD_NAME.replace("proxmox_tenant_egress", "proxmox_node_network_tenant_egress"))
    proc = playbook(node, ansible_env, site, "--tags", "tenant-egress")
    assert "vrf_tdemo" in proc.stdout, proc.stdout
    assert "DEPRECATION" not in proc.stderr, proc.stderr


def test_an_old_variable_name_is_validated_like_the_new_one(node, ansible_env, tmp_path):
    site = role_play(tmp_path, OLD_NAME.replace("  tenants:", "  leak: sideways\n  tenants:"))
    proc = playbook(node, ansible_env, site, "--tags", "tenant-egress")
    assert proc.returncode != 0
    # The role's plan checks the variable's keys as Ansible would (it is declared raw, so that a
    # misspelt key gets one short line rather than the whole argument spec).
    assert "value of leak must be one of: static, import, got: sideways" in proc.stdout, proc.stdout
    assert "vrf_tdemo" not in proc.stdout, "nothing may run on an invalid variable"


PROBED = """\
proxmox_node_network_tenant_egress:
  transit_interface: vmbr0.50
  transit_gateway: 10.20.50.1
  management_interface: vmbr0
  tenants:
    - name: tdemo
      probe: {address: "{{ probe_address }}", targets: [{address: 203.0.113.8}]}
    - name: tother
      probe: {address: 10.20.130.250/24, targets: "{{ probe_targets }}"}
probe_address: 10.20.129.250/24
probe_targets: [{address: 203.0.113.9, proto: tcp, port: 443}]
"""


def collection_deprecations(stderr: str) -> list[str]:
    """Each [DEPRECATION WARNING] of the run that is not the role's own announced rename (the
    collection's code must cause none: ansible-core 2.21 reports what breaks in 2.25 this way)."""
    blocks = one_line(stderr).split("[DEPRECATION WARNING]")[1:]
    return [block[:400] for block in blocks if "rename it to proxmox_node_network_" not in block]


def test_the_role_with_probed_tenants_causes_no_deprecation(node, ansible_env, tmp_path):
    """The plan of tenants with a `probe` (values templated from other variables, as inventories
    have them), through the role with Ansible's deprecation warnings on: none may come from the
    collection (the plan's validator deep-copying Ansible's lazy containers made ansible-core
    2.21 report 'Instantiating filter PluginLoader with aliases', removed in 2.25). This kernel
    has no VRF, so the run stops at the VRF check, after the plan."""
    site = role_play(tmp_path, PROBED)
    env = dict(ansible_env, ANSIBLE_DEPRECATION_WARNINGS="1")
    proc = playbook(node, env, site, "--tags", "tenant-egress", "--check")
    assert "The node's shape is complete" in proc.stdout, proc.stdout
    assert "vrf_tdemo" in proc.stdout, "the plan was made and reached the VRF check"
    assert collection_deprecations(proc.stderr) == [], proc.stderr


def test_the_plan_filter_on_templated_tenants_causes_no_deprecation(node, ansible_env, tmp_path):
    play = local_playbook(tmp_path / "plan.yml", """\
        - name: The plan of probed tenants
          vars:
            probe_address: 10.20.129.250/24
            settings:
              transit_interface: vmbr0.50
              transit_gateway: 10.20.50.1
              management_interface: vmbr0
              tenants: [{name: tdemo, probe: {address: "{{ probe_address }}", targets: [{address: 203.0.113.8}]}}]
          ansible.builtin.debug:
            msg: "{{ (settings | deevnet.net.tenant_egress_plan).egress_probe.probes | length }} probe(s)"
        """)
    proc = playbook(node, dict(ansible_env, ANSIBLE_DEPRECATION_WARNINGS="1"), play)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 probe(s)" in proc.stdout, proc.stdout
    assert collection_deprecations(proc.stderr) == [], proc.stderr
