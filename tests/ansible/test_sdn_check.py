"""deevnet.net.sdn_check through Ansible, ad hoc as an operator runs it, with kernel=false on
Proxmox-format files copied to a temp folder (modules/sdn_check/tests/data; no host /etc): its
documentation holds to the binary, the intent comes back, drift fails or warns, bad input is
refused. The kernel comparison is tested in the crate's namespace tests and in the lab."""
from __future__ import annotations

import shutil
from pathlib import Path

from conftest import ROOT, VENV_BIN, assert_documentation_matches_binary, oneline_result, plugin_utils
from test_return_keys import assert_keys_match_return, local, run_keys

MODULE = "deevnet.net.sdn_check"
DATA = ROOT / "modules" / "sdn_check" / "tests" / "data"


def node_files(tmp: Path, scenario: str, cfg_from: str) -> str:
    """`scenario`'s running configuration with `cfg_from`'s .cfg files and sdn, in `tmp`; the
    module's arguments for them."""
    (tmp / "sdn").mkdir()
    (tmp / "interfaces.d").mkdir()
    shutil.copy(DATA / scenario / ".running-config", tmp / "sdn" / ".running-config")
    for cfg in (DATA / cfg_from).glob("*.cfg"):
        shutil.copy(cfg, tmp / "sdn" / cfg.name)
    shutil.copy(DATA / cfg_from / "sdn", tmp / "interfaces.d" / "sdn")
    shutil.copy(DATA / scenario / "interfaces", tmp / "interfaces")
    return (f"node=hv02 kernel=false running_config={tmp}/sdn/.running-config config_dir={tmp}/sdn "
            f"interfaces_sdn={tmp}/interfaces.d/sdn interfaces={tmp}/interfaces")


def adhoc(env: dict, args: str, *extra: str):
    proc = local(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m", MODULE, "-a", args, *extra)
    return proc, oneline_result(proc.stdout)


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("sdn_check", ansible_env)


def test_the_intent_of_a_node_ad_hoc_in_check_mode_too(ansible_env, tmp_path):
    args = node_files(tmp_path, "evpn", "evpn")
    for extra in ((), ("--check",)):
        proc, (status, result) = adhoc(ansible_env, args, *extra)
        assert status == "SUCCESS", proc.stdout + proc.stderr
        assert result["changed"] is False
        assert result["version"] == {"running": 7, "applied": 7}
        assert [t["name"] for t in result["tenants"]] == ["tdemo", "tprod"], result
        assert [t["exit_node"] for t in result["tenants"]] == [True, False], result
        assert result["zones"][0]["vtep"] == "10.20.51.22"
        assert result["drift"] == [] and result["kernel"] is False


def test_pending_changes_fail_and_warn_with_drift_warn(ansible_env, tmp_path):
    args = node_files(tmp_path, "evpn", "pending")
    proc, (status, result) = adhoc(ansible_env, args)
    assert status == "FAILED!", proc.stdout
    assert "zone tnew: declared added in zones.cfg" in result["msg"], result["msg"]
    # The node not reloaded: the binary's fix is the collection's one advice, word for word.
    reload_advice = plugin_utils("reload_advice").reload_interfaces("this node")
    assert f"please reload): {reload_advice}" in result["msg"], result["msg"]
    assert len(result["drift"]) == 5 and len(result["pending"]) == 4, result
    # Without -o, as an operator reads it: each finding a warning, the task a success.
    proc = local(ansible_env, str(VENV_BIN / "ansible"), "localhost", "-m", MODULE, "-a", f"{args} drift=warn")
    assert "localhost | SUCCESS" in proc.stdout, proc.stdout + proc.stderr
    output = proc.stdout + proc.stderr
    assert output.count("[WARNING]: SDN drift: ") == 5, output
    assert "[WARNING]: SDN drift: zone tnew: declared added in zones.cfg" in output, output


def test_bad_input_is_refused(ansible_env, tmp_path):
    args = node_files(tmp_path, "evpn", "evpn")
    for bad, start in [
        ("drift=maybe", "value of drift must be one of: fail, warn, got: maybe"),
        ("bogus=1", f"Unsupported parameters for ({MODULE}) module: bogus"),
        ("node=hv09", "node: 'hv09' is neither this host ("),
    ]:
        proc, (status, result) = adhoc(ansible_env, f"{args} {bad}")
        assert status == "FAILED!", proc.stdout
        assert result["msg"].startswith(start), result["msg"]
    (tmp_path / "sdn" / ".running-config").write_text("{")
    proc, (status, result) = adhoc(ansible_env, args)
    assert status == "FAILED!", proc.stdout
    assert result["msg"].startswith(f"running_config={tmp_path}/sdn/.running-config is not JSON"), result["msg"]


def test_sdn_check_returns_its_documented_keys(ansible_env, tmp_path):
    ok, drifting = tmp_path / "ok", tmp_path / "drifting"
    ok.mkdir()
    drifting.mkdir()
    runs = [
        run_keys(local, "sdn_check", ansible_env, node_files(ok, "evpn", "evpn")),
        run_keys(local, "sdn_check", ansible_env, node_files(drifting, "evpn", "pending")),
        run_keys(local, "sdn_check", ansible_env, node_files(tmp_path, "zones", "zones"), "--check"),
    ]
    assert [status for status, _ in runs] == ["SUCCESS", "FAILED!", "SUCCESS"], runs
    assert_keys_match_return("sdn_check", ansible_env, runs)
