"""The role's interface as users meet it: `ansible-doc -t role` shows the real defaults, variables
carry the role's prefix, the old names still work for one release with a notice, and a node that
only has a QinQ uplink needs no tenant-egress settings.

This machine's kernel has no VRF and no bond: the role's first module task fails on them, which
is enough to see which variables reached it (the message names the VRF or the bond)."""
from __future__ import annotations

import subprocess
import textwrap

from conftest import VENV_BIN

ROLE = "deevnet.net.proxmox_node_network"


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


def play(tmp_path, variables: str, tags: str):
    playbook = tmp_path / "site.yml"
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
    assert "[DEPRECATED] deevnet.net.proxmox_node_network: proxmox_tenant_egress will stop being read" in proc.stdout, \
        proc.stdout
    assert "vrf_tdemo" in proc.stdout, proc.stdout


def test_a_qinq_only_node_needs_no_tenant_egress_settings(node, ansible_env, tmp_path):
    playbook, tags = play(tmp_path, textwrap.dedent("""\
        proxmox_node_network_qinq_uplink:
          bond: bond0
          uplink_vlan: 40
          bridge: vmbr1
          vlans: "199-299"
          zone_mtu: 8996
        """), "tenant-egress,qinq-uplink")
    proc = run(node, ansible_env, playbook, tags)
    assert "missing required arguments" not in proc.stdout, proc.stdout
    assert "vrf_" not in proc.stdout, "no tenant-egress task may run"
    assert "bond0" in proc.stdout, proc.stdout

