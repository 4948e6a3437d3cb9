"""The fast path's controller work happens once per run, not once per task: ansible-playbook
forks a worker per host and task, and the strategy imports each task's action plugin in the
parent first; that import parses the module's documentation into its argument spec and hashes
its binary, so every worker forked afterwards starts with both (issue "Fastest at fleet scale").
"""
from __future__ import annotations

import subprocess
import textwrap

from conftest import VENV_BIN

CHECK = textwrap.dedent("""\
    import os, sys
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
    _AnsibleCollectionFinder(paths=os.environ["ANSIBLE_COLLECTIONS_PATH"].split(":"))._install()
    from ansible_collections.deevnet.net.plugins.plugin_utils import binary_module
    assert not binary_module._specs and not binary_module._hashes, "nothing is computed before the import"
    import ansible_collections.deevnet.net.plugins.action.sysctl_forwarding as action
    binary = os.path.join(os.path.dirname(os.path.dirname(action.__file__)), "modules", "sysctl_forwarding")
    assert [k[0] for k in binary_module._specs] == [binary + ".py"], binary_module._specs.keys()
    assert [k[0] for k in binary_module._hashes] == [binary], binary_module._hashes.keys()

    # What a forked worker then does per task: no parse, no hash.
    def refuse(*args, **kwargs):
        raise AssertionError("parsed or hashed again")
    binary_module.get_docstring = refuse
    binary_module.hashlib = None
    spec = binary_module.documented_spec(binary)
    assert spec["path"]["type"] == "str" and spec["apply"]["type"] == "bool", spec
    assert len(binary_module.binary_sha256(binary)) == 64
    print("preloaded")
    """)


def test_importing_an_action_plugin_parses_and_hashes_its_module_once(ansible_env):
    proc = subprocess.run([VENV_BIN / "python", "-c", CHECK], env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "preloaded", proc.stdout + proc.stderr


def test_a_changed_binary_is_hashed_again(ansible_env, tmp_path):
    """The cache is keyed by (path, size, mtime): a collection reinstalled under a running
    controller is never served an old hash."""
    script = textwrap.dedent(f"""\
        import hashlib, os
        from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
        _AnsibleCollectionFinder(paths=os.environ["ANSIBLE_COLLECTIONS_PATH"].split(":"))._install()
        from ansible_collections.deevnet.net.plugins.plugin_utils import binary_module
        path = "{tmp_path}/binary"
        open(path, "wb").write(b"one")
        assert binary_module.binary_sha256(path) == hashlib.sha256(b"one").hexdigest()
        open(path, "wb").write(b"other")
        os.utime(path, ns=(1, 1))
        assert binary_module.binary_sha256(path) == hashlib.sha256(b"other").hexdigest()
        print("rehashed")
        """)
    proc = subprocess.run([VENV_BIN / "python", "-c", script], env=ansible_env, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "rehashed", proc.stdout + proc.stderr
