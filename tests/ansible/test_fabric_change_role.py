"""The playbook deevnet.net.fabric_change end to end on this machine: three inventory hosts on
`ansible_connection: local`, each with its own change_guard state_dir and its own changed file in
the test's tmp folders, a change of kind `file`, and a proof playbook of the test
(tests/ansible/data/fabric_change_proof.yml) whose cell of a node fails when the node's file holds
BAD. The real playbooks, the real module change_guard, the real sub-runs of ansible-playbook.

- a good change rolls out canary first, then the waves, each confirmed;
- a bad change is caught on the canary and restored there only, the other nodes never touched;
- a change that cuts the controller off the canary is restored there by the node's own switch, and
  the controller finds it back after the switch's timeout and reports it (the canary's connection
  is ssh to a closed port while its file holds CUT, local otherwise);
- a second run while the first holds the locks is refused naming the first;
- a change of kind `tasks` is shown in check and diff mode first, then rolled out;
- a dry run whose interface reload would touch stale interfaces is refused naming them (a stand-in
  ifreload prints recorded `ifreload -a --no-act` output);
- bad settings are refused before anything changes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, VENV_BIN

NODES = ["hv01", "hv02", "hv03"]
DATA = ROOT / "tests" / "ansible" / "data"
PROOF = DATA / "fabric_change_proof.yml"
OLD = "GOOD old\n"
# The switch's timeout of a run that confirms its waves: no test waits for it, so it is long enough
# for a wave's apply, reconnection, proof and confirmation on a loaded machine (each a playbook run
# that took up to 20 s with make ansible-test's workers beside other jobs).
CONFIRMED_TIMEOUT = 300


class Fleet:
    """Three local hosts, each a folder: its changed file, its guard's state_dir, its reload mark."""

    def __init__(self, tmp: Path, env: dict, cut: str = ""):
        self.tmp, self.env = tmp, env
        self.reports = tmp / "reports"
        hosts = {}
        for node in NODES:
            (tmp / node / "etc").mkdir(parents=True)
            self.file(node).write_text(OLD)
            hosts[node] = {"ansible_connection": "local", "ansible_python_interpreter": str(VENV_BIN / "python"),
                           "fabric_change_state_dir": str(tmp / node / "guard"),
                           "fabric_change_file_path": str(self.file(node)),
                           "fabric_change_paths": [str(self.file(node))],
                           "fabric_change_file_reload": ["/usr/bin/touch", str(tmp / node / "reloaded")]}
            if node == cut:
                # Cut off while the change holds: every new connection to it fails (a closed port).
                hosts[node].update(ansible_host="127.0.0.1", ansible_port=1, ansible_connection=(
                    f"{{{{ 'ssh' if 'CUT' in lookup('ansible.builtin.file', '{self.file(node)}') else 'local' }}}}"))
        self.inventory = tmp / "inventory.yml"
        self.inventory.write_text(yaml.safe_dump({"all": {"children": {"pve": {"hosts": hosts}}}}))

    def file(self, node: str) -> Path:
        return self.tmp / node / "etc" / "app.conf"

    def settings(self, **given) -> dict:
        settings = {"fabric_change_hosts": "pve", "fabric_change_kind": "file", "fabric_change_waves": ["100%"],
                    "fabric_change_file_content": "GOOD new\n", "fabric_change_timeout": CONFIRMED_TIMEOUT,
                    "fabric_change_reconnect_margin": 5, "fabric_change_become": False,
                    "fabric_change_dir": str(self.reports), "fabric_change_proof_playbook": str(PROOF),
                    "fabric_change_proof_vars": {}}
        settings.update({f"fabric_change_{key}": value for key, value in given.items()})
        return settings

    def start(self, name: str, **given) -> subprocess.Popen:
        """The controller's run, in a process group of its own (so that a test can kill it all)."""
        extra = self.tmp / f"{name}.json"
        extra.write_text(json.dumps(self.settings(**given)))
        return subprocess.Popen([VENV_BIN / "ansible-playbook", "-i", str(self.inventory), "deevnet.net.fabric_change",
                                 "-e", f"@{extra}"], env=self.env, cwd=self.tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def run(self, name: str, **given) -> tuple[subprocess.CompletedProcess, dict | None]:
        proc = self.start(name, run_id=name, **given)
        out, _ = proc.communicate(timeout=600)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, "")
        report = self.reports / name / "fabric-change.json"
        return done, json.loads(report.read_text()) if report.exists() else None

    def guard(self, node: str, *args: str) -> dict:
        """change_guard on one node, as the nodes' playbook runs it."""
        proc = subprocess.run([VENV_BIN / "ansible", "-i", str(self.inventory), node, "-o", "-m",
                               "deevnet.net.change_guard", "-a",
                               " ".join((f"state_dir={self.tmp / node / 'guard'}",) + args)],
                              env=self.env, capture_output=True, text=True)
        line = next(line for line in proc.stdout.splitlines() if line.startswith(f"{node} | "))
        return json.loads(line.split(" => ", 1)[1])

    def step_nodes(self, run_id: str, step: str) -> list:
        folder = self.reports / run_id / step
        return sorted(path.stem for path in folder.glob("*.json")) if folder.exists() else []


def as_root() -> None:
    if os.geteuid() != 0:
        pytest.fail("change_guard's state_dir must be root's: run these tests as root (make test does)")


@pytest.fixture
def fleet(tmp_path, ansible_env):
    as_root()
    return Fleet(tmp_path, ansible_env)


def no_lock_left(fleet: Fleet) -> None:
    for node in NODES:
        assert not (fleet.tmp / node / "guard" / "lock").exists(), node


def test_a_good_change_rolls_out_canary_first_then_the_waves(fleet):
    proc, report = fleet.run("good", waves=[1])
    assert proc.returncode == 0, proc.stdout
    assert report["outcome"] == "changed" and not report["failed"]
    assert [wave["nodes"] for wave in report["waves"]] == [["hv01"], ["hv02"], ["hv03"]]
    assert [wave["outcome"] for wave in report["waves"]] == ["confirmed"] * 3
    for index, node in enumerate(NODES):
        assert fleet.file(node).read_text() == "GOOD new\n"
        assert (fleet.tmp / node / "reloaded").exists(), node
        # Each wave armed, changed and confirmed its own node only, proven across all of them.
        for step in ("arm", "apply", "confirm"):
            assert fleet.step_nodes("good", f"wave-{index}-{step}") == [node]
        proof = json.loads((fleet.reports / "good" / f"wave-{index}-proof" / "fabric-proof.json").read_text())
        assert sorted(cell["node"] for cell in proof["cells"]) == NODES
        assert report["waves"][index]["changes"] == {node: f"{fleet.file(node)} would change"}
        assert report["waves"][index]["times"]["proof"] > 0
    # Canary first: its change was confirmed before the next wave's switch was armed.
    assert (fleet.reports / "good" / "wave-0-confirm" / "hv01.json").stat().st_mtime \
        <= (fleet.reports / "good" / "wave-1-arm" / "hv02.json").stat().st_mtime
    no_lock_left(fleet)
    assert fleet.guard("hv02", "state=status", "run_id=good")["switch"]["state"] == "confirmed"
    assert "change good (file): changed" in proc.stdout


def test_a_bad_change_is_rolled_back_on_the_canary_only(fleet):
    untouched = {node: fleet.file(node).stat().st_mtime_ns for node in ("hv02", "hv03")}
    proc, report = fleet.run("bad", file_content="BAD\n", canary="hv02")
    assert proc.returncode != 0, proc.stdout
    assert report["outcome"] == "rolled_back" and report["failed"]
    assert len(report["waves"]) == 1
    wave = report["waves"][0]
    assert wave["nodes"] == ["hv02"] and wave["outcome"] == "rolled_back"
    assert [entry["where"] for entry in wave["regressions"]] == ["t1@hv02 internet"]
    assert "t1@hv02 internet: pass -> fail" in wave["cause"]
    assert "the proof after the restore equals the baseline" in wave["restore"]
    assert report["untouched"] == ["hv01", "hv03"]
    # The canary has its old file back; the others were never armed, changed nor reloaded.
    assert fleet.file("hv02").read_text() == OLD
    assert fleet.file("hv01").read_text() == OLD and fleet.file("hv03").read_text() == OLD
    assert fleet.file("hv03").stat().st_mtime_ns == untouched["hv03"]
    for node in ("hv01", "hv03"):
        assert not (fleet.tmp / node / "guard" / "runs" / "bad").exists(), node
        assert not (fleet.tmp / node / "reloaded").exists(), node
    assert fleet.guard("hv02", "state=status", "run_id=bad")["switch"]["state"] == "restored"
    restore_proof = json.loads((fleet.reports / "bad" / "wave-0-restore-proof" / "fabric-proof.json").read_text())
    assert all(cell["verdict"] == "pass" for cell in restore_proof["cells"])
    no_lock_left(fleet)
    assert "regression: t1@hv02 internet: pass -> fail" in proc.stdout


def test_a_change_that_cuts_the_canary_off_is_restored_by_its_own_switch(tmp_path, ansible_env):
    as_root()
    fleet = Fleet(tmp_path, ansible_env, cut="hv01")
    started = time.monotonic()
    # No reconnect margin: the timeout, which the test waits for, need only outlast one proof (up to
    # 26 s with make ansible-test's workers beside other jobs).
    proc, report = fleet.run("cut", file_content="CUT\n", timeout=40, reconnect_margin=0)
    assert proc.returncode != 0, proc.stdout
    assert report["outcome"] == "cut_off" and len(report["waves"]) == 1, report
    wave = report["waves"][0]
    assert wave["nodes"] == ["hv01"] and wave["outcome"] == "cut_off"
    assert wave["cut_off"] == {"hv01": f"expired: its own switch restored it ({fleet.file('hv01')})"}
    assert "cut off by the change: hv01" in wave["cause"]
    # The switch put the old file back and ran its reload; the controller waited for it, no longer.
    assert fleet.file("hv01").read_text() == OLD
    status = json.loads((fleet.reports / "cut" / "wave-0-status" / "hv01.json").read_text())["result"]
    assert status["switch"]["state"] == "expired" and status["restored"] == [str(fleet.file("hv01"))]
    assert [reload["argv"][0] for reload in status["reloads"]] == ["/usr/bin/touch"]
    assert time.monotonic() - started >= 40 + 10
    assert fleet.step_nodes("cut", "wave-0-reconnect") == []
    assert fleet.step_nodes("cut", "wave-0-status") == ["hv01"]
    assert report["untouched"] == ["hv02", "hv03"]
    assert fleet.file("hv02").read_text() == OLD and fleet.file("hv03").read_text() == OLD
    no_lock_left(fleet)
    assert "cut off: hv01: expired: its own switch restored it" in proc.stdout


def test_a_second_run_while_the_first_holds_the_locks_is_refused_naming_it(fleet):
    first = fleet.start("first", run_id="first", proof_vars={"test_proof_sleep": 6})
    deadline = time.monotonic() + 120
    while not all((fleet.tmp / node / "guard" / "lock").exists() for node in NODES):
        assert first.poll() is None and time.monotonic() < deadline, "the first run never held the locks"
        time.sleep(0.2)
    proc, report = fleet.run("second", file_content="BAD\n")
    out, _ = first.communicate(timeout=600)
    assert proc.returncode != 0
    assert report["outcome"] == "refused" and report["waves"] == []
    said = "\n".join(report["refusals"])
    for node in NODES:
        assert f"the lock: {node}:" in said
    assert "first" in said, said
    # The first run went on and changed every node; the second changed nothing, not even the locks.
    assert first.returncode == 0, out
    assert all(fleet.file(node).read_text() == "GOOD new\n" for node in NODES)
    assert not (fleet.reports / "second" / "unlock").exists()
    no_lock_left(fleet)


@pytest.mark.parametrize("given, words", [
    ({"waves": []}, "fabric_change_waves is []"),
    ({"kind": "reboot"}, "fabric_change_kind is 'reboot': give one of tasks, node_network, sdn_apply, file"),
    ({"timeout": 12}, "fabric_change_timeout is 12: shorter than the reconnect margin (5 s) + 10 s"),
    ({"kind": "tasks", "tasks_file": "/nonexistent/change.yml"},
     "fabric_change_tasks_file is '/nonexistent/change.yml': no such file on the controller"),
])
def test_bad_settings_are_refused_before_anything_changes(fleet, given, words):
    proc, report = fleet.run("refused", **given)
    assert proc.returncode != 0
    assert report["outcome"] == "refused" and words in "\n".join(report["refusals"]), report["refusals"]
    assert "the change is refused; nothing was changed:" in proc.stdout
    for node in NODES:
        assert fleet.file(node).read_text() == OLD
        assert not (fleet.tmp / node / "guard").exists(), node


def test_a_timeout_shorter_than_the_measured_proof_is_refused_after_the_baseline(fleet):
    # 15 s is the least timeout the settings' check lets through (the margin, 5 s, + 10 s); a proof
    # that sleeps 10 s lasts more than 10 s, so its measure refuses it.
    proc, report = fleet.run("slow", proof_vars={"test_proof_sleep": 10}, timeout=15)
    assert proc.returncode != 0
    said = "\n".join(report["refusals"])
    assert "fabric_change_timeout is 15: shorter than one proof (" in said and "the baseline's run" in said, said
    assert all(fleet.file(node).read_text() == OLD for node in NODES)
    no_lock_left(fleet)


def stand_in_ifreload(tmp: Path, recorded: str) -> Path:
    """A program in ifreload's place that prints a recorded `ifreload -a --no-act` output."""
    program = tmp / "ifreload"
    program.write_text(f"#!/bin/sh\ncat {DATA / recorded} >&2\n")
    program.chmod(0o755)
    return program


def test_a_change_of_tasks_is_shown_in_check_and_diff_mode_then_rolled_out(fleet):
    tasks = fleet.tmp / "change.yml"
    tasks.write_text("- name: The node's file, by the user's tasks\n  ansible.builtin.copy:\n"
                     "    dest: \"{{ fabric_change_file_path }}\"\n    content: \"GOOD tasks\\n\"\n    mode: \"0644\"\n")
    ifreload = stand_in_ifreload(fleet.tmp, "ifreload_no_act_clean.txt")
    proc, report = fleet.run("tasks", kind="tasks", tasks_file=str(tasks), ifreload=str(ifreload),
                             interfaces=["nic5", "vmbr1"], reload=[])
    assert proc.returncode == 0, proc.stdout
    assert [wave["outcome"] for wave in report["waves"]] == ["confirmed", "confirmed"]
    preview = (fleet.reports / "tasks" / "preview" / "output.txt").read_text()
    assert "-GOOD old" in preview and "+GOOD tasks" in preview, preview
    result = json.loads((fleet.reports / "tasks" / "preview" / "hv02.json").read_text())["result"]
    assert result["stale"] == {"touched": ["nic5", "vmbr1"], "outside": [], "refusal": ""}
    assert all(fleet.file(node).read_text() == "GOOD tasks\n" for node in NODES)


def test_a_reload_that_would_touch_stale_interfaces_is_refused_before_anything_changes(fleet):
    ifreload = stand_in_ifreload(fleet.tmp, "ifreload_no_act_stale.txt")
    proc, report = fleet.run("stale", ifreload=str(ifreload), interfaces=["nic5", "vmbr1"])
    assert proc.returncode != 0
    said = "\n".join(report["refusals"])
    for node in NODES:
        assert f"the interface reload on {node} would touch interfaces outside the change: vmbr9 (" in said, said
    assert "vxlan_old (info: reload: scheduling down on interfaces: ['vxlan_old', 'vmbr9'])" in said
    assert report["waves"] == [] and all(fleet.file(node).read_text() == OLD for node in NODES)
    no_lock_left(fleet)


def test_a_controller_killed_after_the_change_leaves_the_canary_to_its_own_switch(fleet):
    """The controller and every run it started are killed while the canary's change is being
    proven: the canary's switch restores it at its timeout; the locks of the dead run stay until
    the node playbook's step unlock releases them with its id."""
    # The switch's timeout leaves room for the apply, the reconnection and the proof's start on a
    # loaded machine (up to 60 s with make ansible-test's workers beside other jobs): the kill must
    # land before the switch fires.
    switch_timeout = 120
    controller = fleet.start("killed", run_id="killed", file_content="GOOD new\n", timeout=switch_timeout,
                             proof_vars={"test_proof_sleep": 5})
    proving = fleet.reports / "killed" / "wave-0-proof"
    deadline = time.monotonic() + 300
    while not proving.exists():
        assert controller.poll() is None and time.monotonic() < deadline, controller.communicate()[0]
        time.sleep(0.2)
    os.killpg(controller.pid, signal.SIGKILL)
    controller.communicate()
    killed = time.monotonic()
    assert fleet.file("hv01").read_text() == "GOOD new\n"
    while fleet.file("hv01").read_text() != OLD:
        assert time.monotonic() - killed < switch_timeout + 10, "the canary's switch did not restore it"
        time.sleep(0.5)
    status = fleet.guard("hv01", "state=status", "run_id=killed")
    assert status["switch"]["state"] == "expired", status
    assert fleet.file("hv02").read_text() == OLD and fleet.file("hv03").read_text() == OLD
    # The dead run's locks refuse the next run, naming it, until its id releases them.
    proc, report = fleet.run("after", file_content="GOOD new\n")
    assert report["outcome"] == "refused" and "killed" in "\n".join(report["refusals"])
    release = subprocess.run([VENV_BIN / "ansible-playbook", "-i", str(fleet.inventory), "deevnet.net.fabric_change_nodes",
                              "-e", "fabric_change_hosts=pve", "-e", "fabric_change_step=unlock", "-e",
                              "fabric_change_label=unlock", "-e", "fabric_change_run_id=killed", "-e",
                              f"fabric_change_run_dir={fleet.tmp / 'release'}", "-e", "fabric_change_become=false"],
                             env=fleet.env, capture_output=True, text=True)
    assert release.returncode == 0, release.stdout
    no_lock_left(fleet)


def test_proxmox_s_sdn_lock_is_refused_when_held_and_released_after_a_failure(fleet):
    """kind sdn_apply with the SDN lock in the test's folder; every path stays in it (the commit and
    reload are /bin/true, the snapshot a file of the test). This machine has no Proxmox SDN, so the
    dry run's SDN read fails: a failure after the lock was taken."""
    lock = fleet.tmp / "pve" / "sdn" / ".lock"
    lock.parent.mkdir(parents=True)
    given = {"kind": "sdn_apply", "sdn_lock": str(lock), "sdn_commit": ["/bin/true"], "sdn_reload": ["/bin/true"],
             "paths": [str(fleet.tmp / "sdn-file")], "reload": []}
    lock.write_text("another-run-token")
    proc, report = fleet.run("held", **given)
    assert proc.returncode != 0 and report["outcome"] == "refused"
    assert f"Proxmox's SDN lock {lock} is held (token another-run-token)" in "\n".join(report["refusals"])
    assert lock.read_text() == "another-run-token"
    assert report["locks"]["sdn"] is False
    no_lock_left(fleet)

    lock.unlink()
    proc, report = fleet.run("failing", **given)
    assert proc.returncode != 0 and report["outcome"] == "refused"
    assert report["locks"]["sdn"] is True, proc.stdout
    assert "the dry run: hv01:" in "\n".join(report["refusals"])
    assert json.loads((fleet.reports / "failing" / "sdn-unlock" / "hv01.json").read_text())["result"]["released"]
    assert not lock.exists()
    assert not (fleet.tmp / "sdn-file").exists() and report["waves"] == []
    no_lock_left(fleet)


def test_a_recent_kept_proof_is_the_next_run_s_baseline(fleet):
    proc, first = fleet.run("first", waves=["100%"])
    assert proc.returncode == 0, proc.stdout
    proc, second = fleet.run("second", waves=["100%"], file_content="GOOD newer\n", baseline_max_age=3600)
    assert proc.returncode == 0, proc.stdout
    assert second["baseline"]["source"].startswith("the kept proof of first ("), second["baseline"]
    assert not (fleet.reports / "second" / "baseline").exists()
    assert all(fleet.file(node).read_text() == "GOOD newer\n" for node in NODES)
    # Without an age allowed, the fleet is proven again.
    proc, third = fleet.run("third", waves=["100%"])
    assert proc.returncode == 0 and third["baseline"]["source"] == "the baseline's run"
