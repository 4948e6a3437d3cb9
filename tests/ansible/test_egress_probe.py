"""deevnet.net.egress_probe through Ansible (the action plugin's fast path): its documentation
holds to the binary, its result keys to RETURN, and an ad hoc probe works on a node namespace
with a VNet bridge and a far host. This kernel has no VRF, so the VNet is in the main table
(vrf=default); the real VRF is tested in the lab VM (tests/lab/tests/egress_probe.sh)."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import VENV_BIN, assert_documentation_matches_binary, oneline_result
from test_return_keys import assert_keys_match_return, run_keys

MODULE = "deevnet.net.egress_probe"


def test_documentation_matches_binary(ansible_env):
    assert_documentation_matches_binary("egress_probe", ansible_env)


@pytest.fixture
def vnet_node(node):
    """The node namespace with a VNet bridge (10.20.129.1/24) and an uplink to a far host
    (203.0.113.8) in a namespace of its own."""
    far = f"{node.netns}-far"
    subprocess.run(["ip", "netns", "add", far], check=True)
    try:
        node.ip("link", "add", "vnet0", "type", "bridge", "stp_state", "0", "forward_delay", "0")
        node.ip("addr", "add", "10.20.129.1/24", "dev", "vnet0")
        node.ip("link", "set", "vnet0", "up")
        node.ip("link", "add", "uplink", "type", "veth", "peer", "name", "eth0", "netns", far)
        node.ip("addr", "add", "203.0.113.1/24", "dev", "uplink")
        node.ip("link", "set", "uplink", "up")
        for args in (["addr", "add", "203.0.113.8/24", "dev", "eth0"], ["link", "set", "eth0", "up"],
                     ["link", "set", "lo", "up"], ["route", "add", "default", "via", "203.0.113.1"]):
            subprocess.run(["ip", "-n", far, *args], check=True)
        node.set_proc("net/ipv4/conf/all/forwarding", "1")
        yield node
    finally:
        subprocess.run(["ip", "netns", "del", far], check=False)


PROBE = ('vrf=default address=10.20.129.250/24 expect_egress_interface=uplink count=1 timeout=1 '
         'targets=[{"address":"203.0.113.8"}]')


def adhoc(node, env, args: str, *extra: str):
    proc = node.run(env, str(VENV_BIN / "ansible"), "localhost", "-o", "-m", MODULE, "-a", args, *extra)
    return oneline_result(proc.stdout)


def test_an_ad_hoc_probe_passes_in_check_mode_too_and_leaves_nothing(vnet_node, ansible_env):
    before = subprocess.run(["ip", "-n", vnet_node.netns, "-o", "link"], capture_output=True, text=True).stdout
    for extra in ((), ("--check",)):
        status, result = adhoc(vnet_node, ansible_env, PROBE, *extra)
        assert status == "SUCCESS", result
        assert result["verdict"] == "passed" and result["changed"] is False, result
        assert result["targets"][0]["received"] == 1, result
    after = subprocess.run(["ip", "-n", vnet_node.netns, "-o", "link"], capture_output=True, text=True).stdout
    assert [line.split(":")[1] for line in after.splitlines()] == \
        [line.split(":")[1] for line in before.splitlines()]


def test_bad_input_is_refused_on_the_controller(node, ansible_env):
    status, result = adhoc(node, ansible_env, "vrf=default address=10.20.129.250/24 targets=[] bogus=1")
    assert status == "FAILED!"
    assert result["msg"].startswith(f"Unsupported parameters for ({MODULE}) module: bogus"), result


def test_egress_probe_returns_its_documented_keys(vnet_node, ansible_env):
    runs = [
        run_keys(vnet_node.run, "egress_probe", ansible_env, PROBE),
        # No route back from the far host: the verdict fails with the whole result.
        run_keys(vnet_node.run, "egress_probe", ansible_env,
                 PROBE.replace("203.0.113.8", "198.51.100.9")),
        # A refusal before anything is made: the message alone.
        run_keys(vnet_node.run, "egress_probe", ansible_env, PROBE.replace("vrf=default", "vrf=vrf_nope")),
    ]
    assert [status for status, _ in runs] == ["SUCCESS", "FAILED!", "FAILED!"], runs
    assert_keys_match_return("egress_probe", ansible_env, runs)
