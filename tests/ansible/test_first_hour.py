"""An operator's first hour (issue 40), through Ansible with the installed collection: a misspelt
role variable fails in one short line naming the key and the closest valid one; the plan filter
needs no hand-built defaults; module_defaults reaches every module through group/deevnet.net.all;
ansible-doc's REQUIREMENTS read as a list of phrases.

The role runs in a network namespace of the test's own (the node fixture): nothing on this
machine is changed."""
from __future__ import annotations

import json
import subprocess
import textwrap

import yaml

from conftest import ROOT, VENV_BIN, local_playbook

ROLE = "deevnet.net.proxmox_node_network"
MODULES = sorted(path.stem for path in (ROOT / "collection" / "plugins" / "modules").glob("*.py"))


def playbook(node, env, path, *args):
    return node.run(env, str(VENV_BIN / "ansible-playbook"), str(path), *args)


def role_play(tmp_path, egress: str):
    site = tmp_path / "site.yml"
    site.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  vars:\n"
                    "    proxmox_node_network_sdn: ignore\n"
                    "    proxmox_node_network_tenant_egress:\n" + textwrap.indent(textwrap.dedent(egress), "      ")
                    + f"  roles:\n    - {ROLE}\n")
    return site


def fatal_line(stdout: str) -> str:
    """The failed task's result as Ansible prints it: `fatal: [localhost]: FAILED! => {...}`."""
    return next(line for line in stdout.splitlines() if line.startswith("fatal: "))


TYPO = """\
transit_interface: vmbr0.50
transit_gatway: 10.20.50.1
management_interface: vmbr0
tenants: [{name: tdemo}]
"""


def test_a_misspelt_role_variable_fails_short_naming_the_key_and_the_closest(node, ansible_env, tmp_path):
    proc = playbook(node, ansible_env, role_play(tmp_path, TYPO), "--tags", "tenant-egress")
    assert proc.returncode != 0, proc.stdout
    said = proc.stdout + proc.stderr
    expected = ("proxmox_node_network_tenant_egress.transit_gatway is not a setting of the role (ansible-doc -t role "
                "deevnet.net.proxmox_node_network); did you mean transit_gateway? rename it")
    assert expected in " ".join(proc.stdout.split()), said
    # Ansible's own check printed the whole argument spec, about 30 KB, around that one line. Now the
    # failure is that line (plus Ansible's framing of a failed task: its origin, the play recap).
    assert len(fatal_line(proc.stdout).encode()) < 2048, said
    assert len(said.encode()) < 4096, f"{len(said.encode())} bytes:\n{said}"
    assert "vrf_tdemo" not in proc.stdout, "nothing may run on an invalid variable"


def test_a_key_like_no_other_lists_the_valid_ones(node, ansible_env, tmp_path):
    proc = playbook(node, ansible_env, role_play(tmp_path, TYPO.replace("transit_gatway", "colour")),
                    "--tags", "tenant-egress")
    assert proc.returncode != 0
    text = " ".join(proc.stdout.split())
    assert "proxmox_node_network_tenant_egress.colour is not a setting of the role" in text, proc.stdout
    assert "remove it, or use one of: asn, core_asn," in text, proc.stdout
    assert len(fatal_line(proc.stdout).encode()) < 2048, proc.stdout


def test_the_plan_filter_takes_the_role_s_defaults_when_none_are_given(ansible_env, tmp_path):
    play = local_playbook(tmp_path / "plan.yml", """\
        - name: The plan without hand-built defaults
          ansible.builtin.set_fact:
            plan: >-
              {{ {'transit_interface': 'vmbr0.50', 'transit_gateway': '10.20.50.1', 'management_interface': 'vmbr0',
                  'tenants': [{'name': 'tdemo', 'probe': {'address': '10.20.129.250/24',
                                                          'targets': [{'address': '203.0.113.8'}]}}]}
                 | deevnet.net.tenant_egress_plan }}
        - name: The role's defaults applied
          ansible.builtin.assert:
            that:
              - plan.tenants[0].vrf == 'vrf_tdemo'
              - plan.tenants[0].leak == 'static'
              - plan.egress_probe.count == 3
              - plan.frr_stanzas[0].lines == ['ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default']
        """)
    proc = subprocess.run([VENV_BIN / "ansible-playbook", str(play)], env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_action_group_all_holds_every_module():
    runtime = yaml.safe_load((ROOT / "collection" / "meta" / "runtime.yml").read_text())
    assert sorted(runtime["action_groups"]["all"]) == MODULES


def test_module_defaults_through_group_all_reach_the_modules(node, ansible_env, tmp_path):
    """sysctl_forwarding gets its path and folders only from module_defaults: group/deevnet.net.all."""
    conf = node.conf
    play = tmp_path / "defaults.yml"
    play.write_text(textwrap.dedent(f"""\
        - hosts: localhost
          connection: local
          gather_facts: false
          module_defaults:
            group/deevnet.net.all:
              path: {conf}
              sysctl_dirs: [{node.etc}, {node.usr}]
          tasks:
            - name: Forwarding, the path from the group's defaults
              deevnet.net.sysctl_forwarding:
                interfaces: [{node.transit}]
                ipv6: false
        """))
    proc = playbook(node, ansible_env, play)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert conf.exists() and "forwarding" in conf.read_text(), proc.stdout


def test_ansible_doc_requirements_read_as_a_list(ansible_env):
    for module in ("sysctl_forwarding", "egress_probe"):
        doc = json.loads(subprocess.run([VENV_BIN / "ansible-doc", "-j", f"deevnet.net.{module}"], env=ansible_env,
                                        capture_output=True, text=True, check=True).stdout)
        requirements = doc[f"deevnet.net.{module}"]["doc"]["requirements"]
        # ansible-doc prints them joined by ", ": an item ending in a period reads "program., On ..."
        assert all(not item.rstrip().endswith(".") for item in requirements), requirements
        text = subprocess.run([VENV_BIN / "ansible-doc", f"deevnet.net.{module}"], env=ansible_env,
                              capture_output=True, text=True, check=True).stdout
        section = " ".join(text.split("REQUIREMENTS:", 1)[1].split("\n\n", 1)[0].split())
        assert "., " not in section, section
        assert "ansible-core 2.15 or later on the controller" in section, section
