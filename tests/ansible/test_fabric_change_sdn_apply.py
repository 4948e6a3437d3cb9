"""The playbook deevnet.net.fabric_change's kind sdn_apply end to end on this machine's three local
hosts (test_fabric_change_role.Fleet): a running SDN configuration the hosts share (the test's
stand-in for pmxcfs), each node's generated file (`#version:N`, the Fleet's changed file), an SDN
commit that raises the running version and a node reload that writes it, both programs of the test.
The test's proof has the fleet check sdn_version: a node whose file is not at the running version.

- a good SDN apply rolls out canary first: after the canary's wave, sdn_version fails on the
  later waves' nodes alone, which is expected, not a regression; after the last wave the proof
  holds everywhere; the commit ran once;
- a bad SDN apply is caught on the canary: its restore puts back its file and the running
  configuration (the commit undone), the proof after it equals the baseline, the other nodes are
  never touched."""
from __future__ import annotations

import json

import yaml

from conftest import VENV_BIN
from test_fabric_change_role import NODES, PROOF, Fleet, as_root, no_lock_left

# The commit: the running version + 1. The node's reload: its file at the running version, and BAD
# in it when the test placed <file>.bad (a reload that breaks the node).
COMMIT = "import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['version']+=1; json.dump(d,open(p,'w'))"
RELOAD = ("import json,os,sys; v=json.load(open(sys.argv[1]))['version']; "
          "open(sys.argv[2],'w').write(f'#version:{v}\\n' + ('BAD\\n' if os.path.exists(sys.argv[2]+'.bad') else ''))")


def sdn_fleet(tmp_path, ansible_env) -> tuple[Fleet, dict]:
    as_root()
    fleet = Fleet(tmp_path, ansible_env)
    sdn = tmp_path / "pve" / "sdn"
    sdn.mkdir(parents=True)
    running = sdn / ".running-config"
    running.write_text(json.dumps({"version": 4, "zones": {"ids": {}}, "vnets": {"ids": {}},
                                   "subnets": {"ids": {}}, "controllers": {"ids": {}}}))
    inventory = yaml.safe_load(fleet.inventory.read_text())
    python = str(VENV_BIN / "python")
    for node in NODES:
        fleet.file(node).write_text("#version:4\n")
        interfaces = tmp_path / node / "etc" / "interfaces"
        interfaces.write_text("auto lo\niface lo inet loopback\n")
        host = inventory["all"]["children"]["pve"]["hosts"][node]
        del host["fabric_change_paths"]  # the kind's own: the node's SDN files, the committing node's running one
        host["fabric_change_sdn_files"] = {
            "running_config": str(running), "config_dir": str(sdn), "interfaces_sdn": str(fleet.file(node)),
            "interfaces": str(interfaces), "frr_conf": str(tmp_path / node / "etc" / "frr.conf")}
        host["fabric_change_sdn_reload"] = [python, "-c", RELOAD, str(running), str(fleet.file(node))]
    fleet.inventory.write_text(yaml.safe_dump(inventory))
    given = {"kind": "sdn_apply", "sdn_lock": str(sdn / ".lock"), "reload": [], "canary": "hv01", "waves": [2],
             "sdn_commit": [python, "-c", COMMIT, str(running)],
             "proof_playbook": str(PROOF), "proof_vars": {"test_proof_sdn": str(running)}}
    return fleet, given


def running_version(fleet: Fleet) -> int:
    return json.loads((fleet.tmp / "pve" / "sdn" / ".running-config").read_text())["version"]


def test_a_good_sdn_apply_rolls_out_canary_first_the_later_waves_expected_behind(tmp_path, ansible_env):
    fleet, given = sdn_fleet(tmp_path, ansible_env)
    proc, report = fleet.run("good", **given)
    assert proc.returncode == 0, proc.stdout
    assert report["outcome"] == "changed" and [w["nodes"] for w in report["waves"]] == [["hv01"], ["hv02", "hv03"]]
    canary, rest = report["waves"]
    assert canary["regressions"] == [] and len(canary["expected"]) == 1, canary
    assert canary["expected"][0].startswith("expected while hv02, hv03 run the SDN version from before the commit: "
                                            "check one SDN version: ok -> failed"), canary["expected"]
    assert rest["expected"] == [] and rest["regressions"] == []
    assert running_version(fleet) == 5
    assert all(fleet.file(node).read_text() == "#version:5\n" for node in NODES)
    assert json.loads((fleet.reports / "good" / "wave-1-proof" / "fabric-proof.json").read_text())["checks"][1]["ok"]
    no_lock_left(fleet)
    assert not (fleet.tmp / "pve" / "sdn" / ".lock").exists()


def test_a_bad_sdn_apply_is_undone_on_the_canary_the_commit_with_it(tmp_path, ansible_env):
    fleet, given = sdn_fleet(tmp_path, ansible_env)
    (fleet.tmp / "hv01" / "etc" / "app.conf.bad").write_text("")
    others = {node: fleet.file(node).stat().st_mtime_ns for node in ("hv02", "hv03")}
    proc, report = fleet.run("bad", **given)
    assert proc.returncode != 0 and report["outcome"] == "rolled_back", proc.stdout
    (wave,) = report["waves"]
    assert [entry["where"] for entry in wave["regressions"]] == ["t1@hv01 internet"]
    assert str(fleet.tmp / "pve" / "sdn" / ".running-config") in wave["restore"], wave["restore"]
    assert "the proof after the restore equals the baseline" in wave["restore"], wave["restore"]
    assert running_version(fleet) == 4 and fleet.file("hv01").read_text() == "#version:4\n"
    assert report["untouched"] == ["hv02", "hv03"]
    assert {node: fleet.file(node).stat().st_mtime_ns for node in ("hv02", "hv03")} == others
    assert fleet.step_nodes("bad", "wave-0-arm") == ["hv01"]
    no_lock_left(fleet)


def test_a_failed_sdn_commit_restores_the_armed_canary_at_once_and_reloads_nothing(tmp_path, ansible_env):
    fleet, given = sdn_fleet(tmp_path, ansible_env)
    given["sdn_commit"] = [str(VENV_BIN / "python"), "-c", "import sys; sys.exit('the commit fails')"]
    files = {node: fleet.file(node).stat().st_mtime_ns for node in NODES}
    proc, report = fleet.run("failing", **given)
    assert proc.returncode != 0 and report["outcome"] == "failed", proc.stdout
    (wave,) = report["waves"]
    assert wave["nodes"] == ["hv01"] and wave["cause"].startswith("the SDN commit failed, no node was reloaded: hv01")
    assert wave["restore"] == "hv01: nothing to restore", wave["restore"]
    assert fleet.guard("hv01", "state=status", "run_id=failing")["switch"]["state"] == "restored"
    assert fleet.step_nodes("failing", "wave-0-arm") == ["hv01"] and fleet.step_nodes("failing", "wave-0-apply") == []
    assert running_version(fleet) == 4
    assert {node: fleet.file(node).stat().st_mtime_ns for node in NODES} == files
    assert not (fleet.tmp / "pve" / "sdn" / ".lock").exists()
    no_lock_left(fleet)
