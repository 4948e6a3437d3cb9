"""The role's interface as users meet it: `ansible-doc -t role` shows the real defaults, variables
carry the role's prefix, the old names still work for one release with a notice, and a node that
only has a QinQ uplink needs no tenant-egress settings.

This machine's kernel has no VRF and no bond: the role's first module task fails on them, which
is enough to see which variables reached it (the message names the VRF or the bond)."""
from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import yaml

from conftest import ROOT, VENV_BIN

ROLE = "deevnet.net.proxmox_node_network"
ROLE_DIR = ROOT / "roles" / "proxmox_node_network"


def test_ansible_doc_shows_the_real_defaults(ansible_env):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "role", ROLE], env=ansible_env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = proc.stdout
    for default in ("default: exact", "default: /etc/sysctl.d/90-deevnet-tenant-fabric.conf",
                    "default: /etc/frr/frr.conf.local", "PVE::Network::SDN::generate_frr_config(1)"):
        assert default in doc, (default, doc)
    for option in ("proxmox_node_network_tenant_egress", "proxmox_node_network_qinq_uplink"):
        assert option in doc


# This machine is no Proxmox node: the plays that check which variables reach the modules leave the
# cluster's SDN out (tests/ansible/test_node_plan.py covers what the role does with it).
NO_SDN = "proxmox_node_network_sdn: ignore\n"


def play(tmp_path, variables: str, tags: str, sdn: str = NO_SDN):
    playbook = tmp_path / "site.yml"
    variables = sdn + variables
    playbook.write_text(textwrap.dedent("""\
        - hosts: localhost
          connection: local
          gather_facts: false
          vars:
        {variables}
          roles:
            - {role}
        """).format(variables=textwrap.indent(textwrap.dedent(variables), "    "), role=ROLE))
    return playbook, tags


TENANT = """\
transit_interface: vmbr0.50
transit_gateway: 10.20.50.1
management_interface: vmbr0
tenants:
  - name: tdemo
"""


def run(node, ansible_env, playbook, tags):
    return node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(playbook), "--tags", tags)


def test_the_prefixed_name_reaches_the_modules_without_a_notice(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, "proxmox_node_network_tenant_egress:\n" + textwrap.indent(TENANT, "  "),
                          "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    assert "vrf_tdemo" in proc.stdout, proc.stdout
    assert "DEPRECATED" not in proc.stdout


def test_the_old_name_still_works_with_a_deprecation_notice(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, "proxmox_tenant_egress:\n" + textwrap.indent(TENANT, "  "), "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    # A real deprecation on stderr (tests/ansible/test_warnings.py has its wording and switch).
    assert "[DEPRECATION WARNING]" in proc.stderr and "proxmox_tenant_egress" in proc.stderr, proc.stderr
    assert "vrf_tdemo" in proc.stdout, proc.stdout


QINQ = """\
proxmox_node_network_qinq_uplink:
  bond: bond0
  uplink_vlan: 40
  bridge: vmbr1
  vlans: "199-299"
  zone_mtu: 8996
"""


def test_a_qinq_only_node_needs_no_tenant_egress_settings(node, ansible_env, tmp_path):
    # The role's sysctl.d file for the zone bridge goes to the test's folder, not the host's /etc.
    bridge_conf = tmp_path / "90-deevnet-qinq-bridge.conf"
    # No proxmox_node_network_sdn either: without tenant egress the SDN is not read.
    playbook, tags = play(tmp_path, QINQ + f"proxmox_node_network_qinq_sysctl_path: {bridge_conf}\n",
                          "tenant-egress,qinq-uplink", sdn="")
    proc = run(node, ansible_env, playbook, tags)
    assert "missing required arguments" not in proc.stdout, proc.stdout
    assert "vrf_" not in proc.stdout, "no tenant-egress task may run"
    assert "The node's SDN intent and its drift" not in proc.stdout, proc.stdout
    assert "bond0" in proc.stdout, proc.stdout
    # The missing bond0 is refused before anything is written (tests/ansible/test_qinq_uplink_role.py
    # has the refusal, and the files' content).
    assert not bridge_conf.exists(), proc.stdout


def test_the_three_entry_points_are_documented(ansible_env):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "role", ROLE], env=ansible_env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    for entry_point in ("main", "tenant_egress", "qinq_uplink"):
        # ansible-core 2.21 marks the name up (`*main*`), 2.15 does not.
        assert re.search(rf"ENTRY POINT: \*?{entry_point}\*? - ", proc.stdout), proc.stdout
    for option in ("proxmox_node_network_ipv6", "proxmox_node_network_undeclared_vrfs",
                   "proxmox_node_network_settle_timeout", "proxmox_node_network_frr_owner_record"):
        assert option in proc.stdout, option


def test_the_qinq_entry_point_names_its_missing_variable(node, ansible_env, tmp_path):
    playbook = tmp_path / "site.yml"
    playbook.write_text(textwrap.dedent(f"""\
        - hosts: localhost
          connection: local
          gather_facts: false
          tasks:
            - ansible.builtin.include_role:
                name: {ROLE}
                tasks_from: qinq_uplink
        """))
    proc = run(node, ansible_env, playbook, "all")
    assert proc.returncode != 0
    assert "proxmox_node_network_qinq_uplink" in proc.stdout, proc.stdout


def test_an_exit_node_without_a_management_interface_is_told_what_it_lacks(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, textwrap.dedent("""\
        proxmox_node_network_tenant_egress:
          transit_interface: vmbr0.50
          tenants:
            - name: tdemo
            - name: tother
              gateway: 10.20.50.9
        """), "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    assert "an exit node (transit_interface vmbr0.50) needs transit_gateway" in proc.stdout, proc.stdout
    assert "missing for: tdemo)" in proc.stdout, proc.stdout
    assert "management_interface" in proc.stdout



IMPORT_DESIGN = """\
proxmox_node_network_tenant_egress:
  transit_interface: nic5
  leak: import
  core_peer: bgpv6
  fabric_ipv6_only: true
  management_interface: vmbr0
  tenants:
    - name: tdemo
"""


def test_the_import_design_needs_the_asn_and_is_told_so(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, IMPORT_DESIGN, "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    # One message per rule (tests/ansible/test_node_plan.py has each): this one names the variable,
    # why it is needed and the fix.
    assert ("proxmox_node_network_tenant_egress.asn is unset: router bgp stanzas, which must name the ASN of the BGP "
            "router Proxmox generates, are needed for the tenants of the import leak design (tdemo) and for core_peer "
            "(bgpv6); set asn to it") in proc.stdout, proc.stdout
    # No transit gateway is asked for: the import design's default comes from the core over BGP.
    assert "needs transit_gateway" not in proc.stdout, proc.stdout


def test_the_import_design_with_its_asn_reaches_the_modules(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, IMPORT_DESIGN.replace("  leak: import\n", "  leak: import\n  asn: 45689\n"),
                          "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    assert "vrf_tdemo" in proc.stdout, proc.stdout
    assert "needs transit_gateway" not in proc.stdout, proc.stdout


def test_by_default_the_role_reads_the_node_s_sdn_first(node, ansible_env, tmp_path):
    # No SDN on this machine: its first step reads it, one warning names the choices, and the plan
    # goes on from the inventory (this kernel has no VRF: the run then stops on the tenant's VRF).
    playbook, tags = play(tmp_path, "proxmox_node_network_tenant_egress:\n" + textwrap.indent(TENANT, "  "),
                          "tenant-egress", sdn="")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    first, vrfs = (proc.stdout.index(task) for task in (
        "The node's SDN intent, unless proxmox_node_network_sdn is ignore", "Every declared tenant has its VRF"))
    assert first < vrfs, proc.stdout
    assert "set proxmox_node_network_sdn: ignore" in " ".join(proc.stderr.split()), proc.stderr


def test_with_the_sdn_ignored_it_is_not_read(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, "proxmox_node_network_tenant_egress:\n" + textwrap.indent(TENANT, "  "),
                          "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert "The node's SDN intent and its drift" not in proc.stdout, proc.stdout
    assert "vrf_tdemo" in proc.stdout, proc.stdout


def test_discover_without_the_sdn_is_refused_naming_both_variables(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, textwrap.dedent("""\
        proxmox_node_network_tenant_egress:
          management_interface: vmbr0
          tenants: discover
        """), "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    assert ("proxmox_node_network_tenant_egress.tenants is discover but proxmox_node_network_sdn is ignore"
            in proc.stdout), proc.stdout


def test_a_listed_tenant_is_still_validated(node, ansible_env, tmp_path):
    # tenants is raw in the argument spec (a list or discover): the plan validates a listed tenant.
    playbook, tags = play(tmp_path, "proxmox_node_network_tenant_egress:\n"
                          + textwrap.indent(TENANT.replace("  - name: tdemo\n", "  - name: tdemo\n    leak: imported\n"),
                                            "  "), "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    assert "proxmox_node_network_tenant_egress.tenants[0] (tdemo): value of leak must be one of: static, import" \
        in proc.stdout, proc.stdout


# --- the control plane (issue 27): the role's task with the plan's control_plane ------------------

def _control_plane_play(tmp_path, mode: str, settings: dict) -> tuple[Path, Path]:
    """The role's two control-plane tasks (taken from tasks/tenant_egress.yml as they are) in a
    play of their own, with the plan the role computes; bgp_evpn_assert's vtysh is a script of the
    test's that records each run and fails, so a run shows the arguments were valid (the module
    validates them before it runs vtysh) and reached FRR's side."""
    # The steps stand in a block (its `always` holds the summary).
    tasks = [task for top in yaml.safe_load((ROLE_DIR / "tasks" / "tenant_egress.yml").read_text())
             for task in (top.get("block", []) + top.get("always", []) if "block" in top else [top])]
    picked = [task for task in tasks if "deevnet.net.bgp_evpn_assert" in task
              or task.get("name") == "What FRR's control plane showed"]
    assert len(picked) == 2, picked
    calls = tmp_path / "vtysh-calls"
    vtysh = tmp_path / "vtysh"
    vtysh.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\necho '% vtysh of the test: no FRR here' >&2\nexit 1\n")
    vtysh.chmod(0o755)
    defaults = yaml.safe_load((ROLE_DIR / "defaults" / "main.yml").read_text())
    play = [{
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "module_defaults": {"deevnet.net.bgp_evpn_assert": {"vtysh": str(vtysh), "timeout": 5}},
        "vars": {
            "proxmox_node_network_control_plane": mode,
            "proxmox_node_network_control_plane_settle": 0,
            "__proxmox_node_network_plan": "{{ settings | deevnet.net.tenant_egress_plan(defaults, ipv6=true) }}",
            "settings": settings,
            "defaults": defaults["__proxmox_node_network_tenant_egress_defaults"],
        },
        "tasks": picked,
    }]
    playbook = tmp_path / "control-plane.yml"
    playbook.write_text(yaml.safe_dump(play))
    return playbook, calls


ALL_EXIT = {"transit_interface": "nic5", "leak": "import", "asn": 45689, "core_peer": "bgpv6", "core_asn": 65001,
            "management_interface": "vmbr0", "tenants": [{"name": "tdemo"}]}


def test_the_control_plane_task_passes_the_plan_to_the_module_unless_skipped(ansible_env, tmp_path):
    playbook, calls = _control_plane_play(tmp_path, "assert", ALL_EXIT)
    proc = subprocess.run([VENV_BIN / "ansible-playbook", str(playbook)], env=ansible_env, capture_output=True,
                          text=True)
    # The module took the plan's peers and vnis (no argument refused) and asked FRR.
    assert proc.returncode != 0, proc.stdout
    assert "The control plane in FRR" in proc.stdout and "Unsupported parameters" not in proc.stdout, proc.stdout
    assert calls.exists(), proc.stdout
    # skip, or a node whose plan has no control plane (no core_peer): the task skips, vtysh unread.
    for mode, settings in (("skip", ALL_EXIT), ("assert", {**ALL_EXIT, "core_peer": None})):
        calls.unlink(missing_ok=True)
        playbook, calls = _control_plane_play(tmp_path, mode, settings)
        proc = subprocess.run([VENV_BIN / "ansible-playbook", str(playbook)], env=ansible_env, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "skipping: [localhost]" in proc.stdout and not calls.exists(), proc.stdout


def test_the_control_plane_variables_are_documented_and_checked(node, ansible_env, tmp_path):
    proc = subprocess.run([VENV_BIN / "ansible-doc", "-t", "role", ROLE], env=ansible_env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = " ".join(proc.stdout.split())
    for text in ("proxmox_node_network_control_plane", "proxmox_node_network_control_plane_settle", "core_asn",
                 "default: assert", "choices: [assert, warn, skip]"):
        assert text in doc, text
    playbook, tags = play(tmp_path, "proxmox_node_network_control_plane: maybe\nproxmox_node_network_tenant_egress:\n"
                          + textwrap.indent(TENANT, "  "), "tenant-egress")
    proc = run(node, ansible_env, playbook, tags)
    assert proc.returncode != 0
    assert "proxmox_node_network_control_plane" in proc.stdout and "assert, warn, skip" in proc.stdout, proc.stdout


def _names(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(text)))


def _tasks(tasks: list) -> list[dict]:
    """Every task of a task file, those inside blocks included."""
    found = []
    for task in tasks or []:
        found.append(task)
        for key in ("block", "rescue", "always"):
            found += _tasks(task.get(key))
    return found


def test_no_task_judges_its_result_by_a_variable_derived_from_it():
    """A task's failed_when or changed_when may read its own registered result, never a variable of
    vars/main.yml computed from it (evaluated lazily, inside the judgement of the result it reads):
    a decision on a result is a task after it."""
    role_vars = yaml.safe_load((ROLE_DIR / "vars" / "main.yml").read_text()) or {}

    def derived_from(name: str, seen=()) -> set[str]:
        """The names a variable of vars/main.yml is computed from, through the others."""
        names = _names(role_vars.get(name, "")) - {name}
        for other in names & set(role_vars) - set(seen):
            names |= derived_from(other, (*seen, name))
        return names

    offenders = []
    for path in sorted((ROLE_DIR / "tasks").glob("*.yml")):
        for task in _tasks(yaml.safe_load(path.read_text())):
            registered = task.get("register")
            judgement = " ".join(str(task.get(key, "")) for key in ("failed_when", "changed_when"))
            if not registered or not judgement.strip():
                continue
            for name in _names(judgement) & set(role_vars):
                if registered in derived_from(name):
                    offenders.append(f"{path.name}: {task.get('name')}: {name} is computed from {registered}")
    assert offenders == []


def test_a_default_the_unchanged_file_implies_makes_frr_apply_once_more_and_assert_again(node, ansible_env, tmp_path):
    """The FRR repair through the role: the plan's tenant exits on the default VRF (this kernel has
    no VRF), which has no default route. The first run writes frr.conf.local and applies FRR: the
    assertion's failure is the run's. The second finds the file unchanged and the default missing:
    FRR is applied once more, the assertion runs again and its failure is the run's."""
    from test_role_probe_step import role_run

    applied = tmp_path / "applied"
    parts = {"tenants": [{"name": "tdemo", "vrf": "default", "exit": True}],
             "frr_stanzas": [{"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}],
             "route_assertions": [{"name": "default", "default_via": "10.20.50.1"}]}
    extra = ("-e", f'{{"proxmox_node_network_frr_apply_command": ["sh", "-c", "echo applied >> {applied}"], '
                   '"proxmox_node_network_settle_timeout": 0}')

    first = role_run(node, ansible_env, tmp_path, parts, *extra)
    assert first.returncode != 0, first.stdout + first.stderr
    assert applied.exists() and applied.read_text().count("applied") == 1, first.stdout
    assert "failed: the route assertion (default: table main has no IPv4 default route" in first.stdout, first.stdout

    # The same play again, frr.conf.local as the first run left it.
    second = node.run(ansible_env, str(VENV_BIN / "ansible-playbook"), str(tmp_path / "site.yml"),
                      "-e", f"@{tmp_path / 'plan.json'}", "--tags", "tenant-egress", *extra)
    assert second.returncode != 0, second.stdout
    assert applied.read_text().count("applied") == 2, second.stdout
    assert ("failed: the route assertion after the second FRR apply (default: table main has no IPv4 default route"
            in second.stdout), second.stdout
    assert "failed: the route assertion (" not in second.stdout, second.stdout
