"""deevnet.net.change_guard as a controller runs it: through Ansible (local connection), its
documentation against the binary, its result keys against RETURN, and a guarded change rolled
back through a playbook. The state_dir and the files live in the test's temp folder (root's, 0700)."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from conftest import VENV_BIN, assert_documentation_matches_binary, local_playbook
from test_return_keys import assert_keys_match_return, local, run_keys


def _lab(tmp_path: Path) -> tuple[Path, Path]:
    os.chmod(tmp_path, 0o700)
    conf = tmp_path / "interfaces"
    conf.write_text("auto lo\n")
    return tmp_path / "state", conf


def test_documentation_is_shown_and_matches_the_binary(ansible_env):
    shown = subprocess.run([VENV_BIN / "ansible-doc", "deevnet.net.change_guard"],
                           env=ansible_env, capture_output=True, text=True, check=True)
    for needed in ("run_id", "state_dir", "dead-man's switch", "RETURN VALUES"):
        assert needed in shown.stdout, shown.stdout
    assert_documentation_matches_binary("change_guard", ansible_env)


def test_change_guard_returns_its_documented_keys(ansible_env, tmp_path: Path):
    state, conf = _lab(tmp_path)
    base = f"run_id=r1 state_dir={state}"
    runs = [
        run_keys(local, "change_guard", ansible_env, f"{base} state=locked holder=ctl"),
        run_keys(local, "change_guard", ansible_env, f"{base} state=armed paths={conf} timeout=300"),
        run_keys(local, "change_guard", ansible_env, f"{base} state=status"),
        run_keys(local, "change_guard", ansible_env, f"{base} state=restored"),
        run_keys(local, "change_guard", ansible_env, f"{base} state=unlocked"),
        run_keys(local, "change_guard", ansible_env, f"run_id=../x state_dir={state} state=status"),
    ]
    # restored with nothing to put back still disarms the switch and marks the run: a change.
    assert [status for status, _ in runs] == ["CHANGED", "CHANGED", "SUCCESS", "CHANGED", "CHANGED",
                                              "FAILED!"], runs
    assert_keys_match_return("change_guard", ansible_env, runs)


def test_a_playbook_arms_the_switch_changes_a_file_and_rolls_it_back(ansible_env, tmp_path: Path):
    """The run returns while its switch lives on (Ansible reads the module's output to its end);
    the rollback restores the file and the switch is gone."""
    state, conf = _lab(tmp_path)
    play = local_playbook(tmp_path / "play.yml", f"""\
        - name: Lock
          deevnet.net.change_guard: {{state: locked, run_id: r1, state_dir: {state}, holder: ctl}}
        - name: Arm
          deevnet.net.change_guard: {{state: armed, run_id: r1, state_dir: {state}, paths: [{conf}], timeout: 300}}
          register: armed
        - name: The change
          ansible.builtin.copy: {{dest: {conf}, content: "auto lo\\nauto vmbr9\\n", mode: "0644"}}
        - name: Roll back
          deevnet.net.change_guard: {{state: restored, run_id: r1, state_dir: {state}}}
          register: restored
        - name: Unlock
          deevnet.net.change_guard: {{state: unlocked, run_id: r1, state_dir: {state}}}
        - name: What the switch did
          ansible.builtin.copy:
            dest: {tmp_path / "results.json"}
            content: "{{{{ {{'armed': armed, 'restored': restored}} | to_json }}}}"
            mode: "0600"
        """)
    started = time.monotonic()
    proc = subprocess.run([VENV_BIN / "ansible-playbook", str(play)], env=ansible_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert time.monotonic() - started < 100, "the play waited for the switch's timeout"
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["armed"]["switch"]["timer"] == "process"
    assert results["restored"]["restored"] == [str(conf)]
    assert conf.read_text() == "auto lo\n"
    assert not _alive(results["armed"]["switch"]["pid"]), "the switch outlived the rollback"


def _alive(pid: int) -> bool:
    """A process with that pid, not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
