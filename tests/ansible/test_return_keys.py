"""Each module's result keys against its RETURN documentation, both ways: every key a run
returns is documented, and every documented key comes back from some run. The keys every module
returns by Ansible's conventions (changed, failed, msg, invocation, warnings, diff) need no
RETURN entry and are not required to appear. qinq_check needs a bond, which this kernel lacks:
its result keys are held to its RETURN block in modules/qinq_check/tests/it/recorded.rs."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import VENV_BIN, oneline_result

STANDARD_KEYS = {"changed", "failed", "msg", "invocation", "warnings", "diff"}


def documented_return_keys(module: str, env: dict) -> set[str]:
    doc = json.loads(subprocess.run([VENV_BIN / "ansible-doc", "-j", f"deevnet.net.{module}"],
                                    env=env, capture_output=True, text=True, check=True).stdout)
    return set(doc[f"deevnet.net.{module}"]["return"])


def run_keys(run, module: str, env: dict, args: str, *extra: str) -> tuple[str, set[str]]:
    """Runs the module ad hoc (`ansible -o`) through `run`; its status and result keys."""
    proc = run(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m",
               f"deevnet.net.{module}", "-a", args, *extra)
    status, result = oneline_result(proc.stdout)
    return status, set(result)


def assert_keys_match_return(module: str, env: dict, runs: list[tuple[str, set[str]]]) -> None:
    documented = documented_return_keys(module, env)
    returned: set[str] = set()
    for status, keys in runs:
        undocumented = keys - documented - STANDARD_KEYS
        assert not undocumented, f"{module} returned ({status}) undocumented keys {undocumented}"
        returned |= keys
    never = documented - returned - STANDARD_KEYS
    assert not never, f"{module} documents keys no run returned: {never}"


def local(env: dict, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), env=env, capture_output=True, text=True)


def test_sysctl_forwarding_returns_its_documented_keys(node, ansible_env):
    base = f"path={node.conf} sysctl_dirs={node.etc},{node.usr} interfaces={node.transit}"
    runs = [
        run_keys(node.run, "sysctl_forwarding", ansible_env, base),
        # The file exists: replacing it with backup=yes returns backup_file.
        run_keys(node.run, "sysctl_forwarding", ansible_env, f"{base} ipv6=yes backup=yes"),
        run_keys(node.run, "sysctl_forwarding", ansible_env, f"{base} ipv6=yes", "--check"),
        run_keys(node.run, "sysctl_forwarding", ansible_env, f"path={node.conf} interfaces=../x"),
    ]
    assert "backup_file" in runs[1][1], runs
    assert [status for status, _ in runs] == ["CHANGED", "CHANGED", "SUCCESS", "FAILED!"], runs
    assert_keys_match_return("sysctl_forwarding", ansible_env, runs)


def test_frr_local_stanza_returns_its_documented_keys(ansible_env, tmp_path: Path):
    conf = tmp_path / "frr.conf.local"
    route = "ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"

    def stanzas(*lines: str) -> str:
        return json.dumps([{"header": "vrf vrf_tdemo", "lines": list(lines)}])

    runs = [
        run_keys(local, "frr_local_stanza", ansible_env,
                 f"path={conf} stanzas='{stanzas(route)}'"),
        # The file exists: replacing it with backup=yes returns backup_file.
        run_keys(local, "frr_local_stanza", ansible_env,
                 f"path={conf} backup=yes stanzas='{stanzas(route.replace('0.0.0.0/0', '10.0.0.0/8'))}'"),
        run_keys(local, "frr_local_stanza", ansible_env, f"path={conf}"),
    ]
    # A file Proxmox's merge breaks (`exit-vrf`): the lint findings come back with the failure.
    broken = tmp_path / "broken.conf.local"
    broken.write_text(f"vrf vrf_tdemo\n {route}\nexit-vrf\n")
    runs.append(run_keys(local, "frr_local_stanza", ansible_env, f"path={broken}"))
    assert [status for status, _ in runs] == ["CHANGED", "CHANGED", "SUCCESS", "FAILED!"], runs
    assert "backup_file" in runs[1][1], runs
    assert_keys_match_return("frr_local_stanza", ansible_env, runs)


def test_vrf_route_assert_returns_its_documented_keys(node, ansible_env):
    # This kernel has no VRF devices: an empty `vrfs` is the run that passes (with a warning);
    # a named VRF that does not exist is the one that fails.
    runs = [
        run_keys(node.run, "vrf_route_assert", ansible_env, "vrfs=[]"),
        run_keys(node.run, "vrf_route_assert", ansible_env, "vrf=vrf_tdemo default_via=10.20.50.1"),
    ]
    assert [status for status, _ in runs] == ["SUCCESS", "FAILED!"], runs
    assert_keys_match_return("vrf_route_assert", ansible_env, runs)
