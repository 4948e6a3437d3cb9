"""mitogen, which Ansible users install for speed: every module run through `mitogen_linear`
gives the same results as through the stock strategy, in check mode and for real, through the
plugin's mitogen path (the cached binary run by one call into mitogen's interpreter on the
target) and through the stock module path (mitogen's own binary runner).

Each run gets a fresh namespace node and temp files; results are compared after the run's own
temp paths are replaced by a placeholder. vrf_route_assert, qinq_check and egress_probe find no
VRF and no bond in a namespace of this machine's kernel: their (failed) results are compared as
well, which is what a module run under either strategy must agree on.
"""
from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import ansible_mitogen
import pytest

import swap_race
from conftest import VENV_BIN, Node, oneline_result

STRATEGY_PLUGINS = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"


def play(node: Node, tmp: Path) -> str:
    frr = tmp / "frr.conf.local"
    return textwrap.dedent(f"""\
        - hosts: localhost
          connection: local
          gather_facts: false
          tasks:
            - name: Forwarding
              deevnet.net.sysctl_forwarding:
                path: {node.conf}
                sysctl_dirs: [{node.etc}, {node.usr}]
                interfaces: [{node.transit}]
              register: r_sysctl
            - name: FRR stanza
              deevnet.net.frr_local_stanza:
                path: {frr}
                stanzas:
                  - header: vrf vrf_tdemo
                    lines: [ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default]
              register: r_frr
            - name: Routing outcome
              deevnet.net.vrf_route_assert:
                vrfs: [{{name: vrf_tdemo, default_via: 10.20.50.1}}]
              register: r_vrf
              ignore_errors: true
            - name: QinQ uplink
              deevnet.net.qinq_check:
                bond: bond0
                uplink_vlan: 40
                bridge: vmbr1
                vlans: "199-299"
              register: r_qinq
              ignore_errors: true
            - name: Egress probe
              deevnet.net.egress_probe:
                vrf: vrf_tdemo
                address: 10.20.129.250/24
                targets: [{{address: 203.0.113.8}}]
              register: r_egress
              ignore_errors: true
            - name: Keep the results
              ansible.builtin.copy:
                content: "{{{{ {{'sysctl': r_sysctl, 'frr': r_frr, 'vrf': r_vrf, 'qinq': r_qinq, 'egress': r_egress}} | to_nice_json }}}}"
                dest: {tmp}/results.json
                mode: "0600"
              check_mode: false
        """)


def run(ansible_env, tmp_path: Path, name: str, mitogen: bool, check: bool, extra=()) -> tuple[dict, str, str]:
    tmp = tmp_path / name
    tmp.mkdir()
    node = Node(tmp)
    try:
        playbook = tmp / "site.yml"
        playbook.write_text(play(node, tmp))
        env = dict(ansible_env)
        if mitogen:
            env.update(ANSIBLE_STRATEGY_PLUGINS=str(STRATEGY_PLUGINS), ANSIBLE_STRATEGY="mitogen_linear")
        proc = node.run(env, str(VENV_BIN / "ansible-playbook"), str(playbook), "-vvv",
                        *(["--check", "--diff"] if check else []), *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        text = (tmp / "results.json").read_text().replace(str(tmp), "<TMP>")
        results = json.loads(text)
        for result in results.values():
            # settled_after (vrf_route_assert) is a measured duration: 0.0 or a few ms, by load.
            for volatile in ("invocation", "_ansible_no_log", "settled_after"):
                result.pop(volatile, None)
            # mitogen 0.3.54 on ansible-core 2.21 adds, to the first task it runs, a warning about
            # core's internal `_protomatter` collection: not the module's, so not compared.
            warnings = [w for w in result.get("warnings", []) if "_protomatter" not in w]
            result.pop("warnings", None)
            if warnings:
                result["warnings"] = warnings
        forwarding = node.proc(f"net/ipv4/conf/{node.transit}/forwarding")
        return results, forwarding, proc.stdout
    finally:
        node.close()


@pytest.mark.parametrize("check", [True, False], ids=["check-mode", "for-real"])
def test_mitogen_linear_gives_the_stock_strategys_results(ansible_env, tmp_path, check):
    stock, stock_forwarding, _ = run(ansible_env, tmp_path, "stock", mitogen=False, check=check)
    fast, fast_forwarding, output = run(ansible_env, tmp_path, "mitogen", mitogen=True, check=check)
    assert "mitogen" in output.lower(), "the play did not run under mitogen"
    # Under mitogen the plugin runs the cached binary through mitogen's call chain (the stock run
    # before filled the cache): no shell script, no stock module path; once per module task.
    assert output.count("ran from the target's cache through mitogen's call chain, no shell") == \
        len(stock), output
    assert "takes the stock module path" not in output, output
    assert fast == stock, "\n".join(
        f"{key}:\n  mitogen: {json.dumps(fast[key], sort_keys=True)}\n  stock:   {json.dumps(stock[key], sort_keys=True)}"
        for key in stock if fast.get(key) != stock[key])
    assert fast_forwarding == stock_forwarding == ("0" if check else "1")
    assert stock["sysctl"]["changed"] is True and stock["frr"]["changed"] is True
    assert stock["vrf"]["failed"] is True and "vrf_tdemo" in stock["vrf"]["msg"]
    assert stock["qinq"]["failed"] is True and "bond0" in stock["qinq"]["msg"]


def test_mitogen_without_the_fast_path_runs_the_stock_module_path(ansible_env, tmp_path):
    """deevnet_net_fast_path: false under mitogen hands the binary to mitogen's own runner (the
    stock module path), with the same results."""
    stock, stock_forwarding, _ = run(ansible_env, tmp_path, "stock", mitogen=False, check=False)
    slow, slow_forwarding, output = run(ansible_env, tmp_path, "mitogen-stock-path", mitogen=True, check=False,
                                        extra=["-e", "deevnet_net_fast_path=false"])
    assert output.count("takes the stock module path: deevnet_net_fast_path is false") == len(stock), output
    assert "through mitogen's call chain" not in output, output
    assert slow == stock
    assert slow_forwarding == stock_forwarding == "1"


@pytest.mark.parametrize("foreign_cache", [False, True], ids=["no-cache-yet", "foreign-cache-folder"])
def test_under_mitogen_a_foreign_ansible_folder_never_gets_a_swapped_module_run_as_root(ansible_env, tmp_path,
                                                                                          foreign_cache):
    """Issue 29 items 1 and 17 under mitogen_linear: root's ~/.ansible belongs to nobody, and a
    process as nobody swaps whatever root uploads under ~/.ansible/tmp (mitogen's temp folder,
    from remote_tmp). The cache there is refused (foreign-owned caches refused under this
    strategy too), and the stock path's fallback, mitogen's own runner, used to write the binary
    into that folder: the swapped file ran as root. Now it runs from a private temp folder the
    remote script verified. -vvv used to say "ran from the target's cache" though it had not;
    it now says what happened. Three tries each."""
    etc = tmp_path / "etc"
    etc.mkdir()
    env = dict(ansible_env, ANSIBLE_STRATEGY_PLUGINS=str(STRATEGY_PLUGINS), ANSIBLE_STRATEGY="mitogen_linear")
    args = f"path={etc}/90-x.conf sysctl_dirs={etc} apply=false"
    for attempt in range(3):
        tmp = tmp_path / f"try{attempt}"
        tmp.mkdir()
        proc, proof = swap_race.run(env, tmp, [VENV_BIN / "ansible", "localhost", "-o", "-vvv", "-m",
                                               "deevnet.net.sysctl_forwarding", "-a", args], foreign_cache)
        output = proc.stdout + proc.stderr
        assert not proof.exists(), f"the swapped module ran as uid {proof.read_text().strip()}:\n{output}"
        assert "impostor ran" not in output, output
        assert "mitogen" in output.lower(), "the task did not run under mitogen"
        assert oneline_result(proc.stdout)[0] == "CHANGED", output
        assert "ran from the target's cache" not in output, output
        assert "takes the stock module path: the module cache cannot be used" in output, output
        assert "(uploaded to the private temp folder /var/tmp/deevnet.net-" in output, output
        assert "/.ansible belongs to " in output and "could swap the cached module" in output, output
        assert "cache entries: 0" in proc.stderr, output
        (etc / "90-x.conf").unlink()


def test_under_mitogen_verbose_output_says_what_ran(ansible_env, tmp_path):
    """Issue 29 item 17: with a cache mitogen's side refuses (~/.ansible writable by the group),
    -vvv said "ran from the target's cache through mitogen's call chain" and then took the stock
    path. It says so only when the cached binary ran: once installed, then from the cache."""
    home = tmp_path / "home"
    (home / ".ansible" / "deevnet.net").mkdir(parents=True)
    (home / ".ansible").chmod(0o770)
    etc = tmp_path / "etc"
    etc.mkdir()
    env = dict(ansible_env, HOME=str(home), ANSIBLE_STRATEGY_PLUGINS=str(STRATEGY_PLUGINS),
               ANSIBLE_STRATEGY="mitogen_linear")
    command = [VENV_BIN / "ansible", "localhost", "-o", "-vvv", "-m", "deevnet.net.sysctl_forwarding",
               "-a", f"path={etc}/90-x.conf sysctl_dirs={etc} apply=false"]
    refused = subprocess.run(command, env=env, capture_output=True, text=True)
    assert oneline_result(refused.stdout)[0] == "CHANGED", refused.stdout + refused.stderr
    assert "takes the stock module path: the module cache cannot be used" in refused.stdout, refused.stdout
    assert "ran from the target's cache" not in refused.stdout, refused.stdout
    (home / ".ansible").chmod(0o700)
    installed = subprocess.run(command, env=env, capture_output=True, text=True)
    assert "was installed in the target's cache and ran from it" in installed.stdout, installed.stdout
    assert "ran from the target's cache" not in installed.stdout, installed.stdout
    hit = subprocess.run(command, env=env, capture_output=True, text=True)
    assert "ran from the target's cache through mitogen's call chain, no shell" in hit.stdout, hit.stdout
    assert "takes the stock module path" not in hit.stdout, hit.stdout
    # The private temp folders (the fallback's, the install's) are removed through mitogen too.
    assert not list(Path(env["ANSIBLE_REMOTE_TEMP"]).glob("deevnet.net-*"))
