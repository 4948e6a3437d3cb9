"""deevnet.net.qinq_probe's documentation holds to what the binary accepts, and ansible-doc
shows the pair test as it is run: the receiver started first in the background. The module's
behaviour is tested in Rust (modules/qinq_probe/tests/it: two hosts and a switch in network
namespaces, the tagging emulated with tcx eBPF programs), which also holds its result keys to
RETURN: this machine's kernel has no 802.1Q devices, bonding or bridge VLAN filtering."""
from __future__ import annotations

import subprocess

from conftest import VENV_BIN, assert_documentation_matches_binary


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("qinq_probe", ansible_env)


def test_ansible_doc_shows_the_receiver_started_before_the_sender(ansible_env):
    text = subprocess.run([VENV_BIN / "ansible-doc", "deevnet.net.qinq_probe"], env=ansible_env,
                          capture_output=True, text=True, check=True).stdout
    receiver, sender = text.index("mode: receive"), text.index("mode: send")
    assert receiver < sender
    for needed in ("async: 40", "poll: 0", "ansible.builtin.async_status", "inner_tag_lost",
                   "nothing_arrived", "run_id:"):
        assert needed in text, needed
