"""deevnet.net.qinq_check's documentation holds to what the binary accepts, and ansible-doc
shows it with an example per check. The module's behaviour is tested in Rust (recorded data,
namespaces) and in the lab VM (tests/lab/tests/qinq_check.sh): this machine's kernel has no
bonding, 802.1Q or bridge VLAN filtering."""
from __future__ import annotations

import subprocess

from conftest import VENV_BIN, assert_documentation_matches_binary


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("qinq_check", ansible_env)


def test_ansible_doc_shows_an_example_per_check(ansible_env):
    text = subprocess.run([VENV_BIN / "ansible-doc", "deevnet.net.qinq_check"], env=ansible_env,
                          capture_output=True, text=True, check=True).stdout
    for needed in ("fix_txvlan: true", "zone_mtu: 8996", "trunk_interfaces:", "peers:",
                   "ansible hv02 -b -m deevnet.net.qinq_check", "fdb_vlan1", "uplink_vlans",
                   "guest_mtu:<port>", "qm set <vmid> --net<n>", "guest_mtu.ports"):
        assert needed in text, needed
