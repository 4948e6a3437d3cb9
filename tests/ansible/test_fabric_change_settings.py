"""The node-side settings the controller's run of deevnet.net.fabric_change was given reach the
node steps: what a node step runs is the run's settings file (settings.json) read by the node
playbook deevnet.net.fabric_change_nodes. Three local hosts, as in test_fabric_change_role.py."""
from __future__ import annotations

import json
import subprocess

from conftest import VENV_BIN
from test_fabric_change_role import fleet  # noqa: F401 (the fixture)


def test_the_sdn_commit_given_to_the_controller_is_the_one_the_node_step_runs(fleet):  # noqa: F811
    committed = fleet.tmp / "committed"
    given = {"kind": "sdn_apply", "sdn_lock": str(fleet.tmp / "sdn.lock"),
             "sdn_commit": ["/usr/bin/touch", str(committed)], "sdn_reload": ["/bin/true"],
             "paths": [str(fleet.tmp / "sdn-file")], "reload": []}
    fleet.run("commit", **given)
    run_dir = fleet.reports / "commit"
    settings = json.loads((run_dir / "settings.json").read_text())
    assert settings["fabric_change_sdn_commit"] == given["sdn_commit"] == [str(arg) for arg in given["sdn_commit"]]
    # The node step of the commit, as the controller runs it: the run's settings, one node.
    step = subprocess.run([VENV_BIN / "ansible-playbook", "-i", str(fleet.inventory), "deevnet.net.fabric_change_nodes",
                           "--limit", "hv01", "-e", f"@{run_dir / 'settings.json'}", "-e", "fabric_change_step=sdn_commit",
                           "-e", "fabric_change_label=sdn-commit-by-hand"],
                          env=fleet.env, cwd=fleet.tmp, capture_output=True, text=True)
    assert step.returncode == 0, step.stdout
    result = json.loads((run_dir / "sdn-commit-by-hand" / "hv01.json").read_text())
    assert not result["failed"] and result["result"]["cmd"] == given["sdn_commit"], result
    assert committed.exists()
