"""The collection as its users consume it: a project of theirs that installs the built tarball
and calls every module, from a playbook and from a role of their own, passes
`ansible-lint --profile production` with no rule skipped (issue "The collection as its users
consume it": the modules were redirected to one shared action plugin, so ansible-lint told users
to write `deevnet.net.binary_module`, which then failed)."""
from __future__ import annotations

import subprocess
import textwrap

from conftest import VENV_BIN, _tarball

TASKS = """\
- name: Forwarding on the transit interface, persisted
  deevnet.net.sysctl_forwarding:
    interfaces: [vmbr0.50]
- name: The tenant VRF's leaked default in frr.conf.local
  deevnet.net.frr_local_stanza:
    stanzas:
      - header: vrf vrf_tdemo
        lines:
          - ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default
- name: Tenant traffic leaves by the transit interface
  deevnet.net.vrf_route_assert:
    vrfs:
      - name: vrf_tdemo
        default_via: 10.20.50.1
        default_dev: vmbr0.50
- name: The QinQ uplink keeps both tags
  deevnet.net.qinq_check:
    bond: bond0
    uplink_vlan: 40
    bridge: vmbr1
    vlans: "199-299"
- name: The node's SDN intent and its drift
  deevnet.net.sdn_check:
    drift: warn
- name: The fabric's BGP sessions and EVPN VNIs
  deevnet.net.bgp_evpn_assert:
    fabric_ipv6_only: true
    peers:
      - peer: bgpv6
        address_families: [ipv6_unicast, l2vpn_evpn]
    vnis:
      - vni: 10100
- name: The transit router decides what the transit network may reach
  deevnet.net.transit_router_check:
    transit_interface: eth0.40.199
    transit_network: 198.51.100.0/24
    uplink: eth1
    loadbalancer_ranges: [10.96.100.0/28]
    vpc_ranges: [10.202.0.0/16]
    private_ranges: [10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16]
- name: Take the node's lock for a guarded change
  deevnet.net.change_guard:
    state: locked
    run_id: fabric-change-20261207T141500Z-a1b2
    holder: ops@ctl1
"""


def test_a_users_project_that_calls_every_module_passes_production_lint(tmp_path):
    project = tmp_path / "project"
    collections = project / "collections"
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "ANSIBLE_COLLECTIONS_PATH": str(collections)}
    subprocess.run([VENV_BIN / "ansible-galaxy", "collection", "install", "--force", "-p", collections, _tarball()],
                   check=True, capture_output=True, env=env)
    (project / "site.yml").write_text("---\n- name: Tenant egress on the exit nodes\n  hosts: proxmox\n"
                                      "  gather_facts: false\n  tasks:\n" + textwrap.indent(TASKS, "    "))
    role = project / "roles" / "tenant_network"
    (role / "tasks").mkdir(parents=True)
    (role / "tasks" / "main.yml").write_text("---\n" + TASKS)
    (role / "meta").mkdir()
    (role / "meta" / "main.yml").write_text(textwrap.dedent("""\
        ---
        galaxy_info:
          author: an operator
          description: Tenant networking of our Proxmox nodes
          license: GPL-3.0-or-later
          min_ansible_version: "2.15"
          platforms:
            - name: Debian
              versions: [bookworm]
        dependencies: []
        """))
    (project / "roles.yml").write_text("---\n- name: Our nodes\n  hosts: proxmox\n  gather_facts: false\n"
                                       "  roles:\n    - role: tenant_network\n")
    (project / ".ansible-lint").write_text("---\nprofile: production\n")
    (project / "ansible.cfg").write_text("[defaults]\ncollections_path = ./collections\n")
    proc = subprocess.run([VENV_BIN / "ansible-lint", "--offline", "--profile", "production"], cwd=project,
                          capture_output=True, text=True, env=env)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "fqcn" not in output, output
    assert "Profile 'production' was required, and it passed" in output, output
