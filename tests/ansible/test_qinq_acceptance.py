"""The playbook deevnet.net.qinq_acceptance on three "hosts" and a switch, each a network
namespace of the test: every command Ansible runs for a host runs in that host's namespace (its
shell, ansible_shell_executable, is `ip netns exec NS /bin/sh`). This kernel has no 802.1Q
devices or tc vlan action: each host's NIC `up40` (a veth in its zone bridge `vmbr1`, standing
for the uplink VLAN device and its NIC) gets its outer tag from a tcx eBPF program at its egress,
and the fault (a NIC that puts the outer tag in place of the inner one) is another such program,
as in modules/qinq_probe/tests/it/tcx.rs."""
from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

import pytest

from conftest import VENV_BIN

HOSTS = ("hv01", "hv02", "hv03")
LIBC = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321  # x86_64
CLONE_NEWNET = 0x40000000


def _insn(code: int, regs: int, imm: int) -> bytes:
    return bytes([code, regs, 0, 0]) + imm.to_bytes(4, "little", signed=True)


def _program(lose_inner: bool) -> bytes:
    """r6 = ctx; [pop, pop]; push 802.1Q 40; return TCX_PASS (helpers 18 push, 19 pop)."""
    code = [_insn(0xbf, 0x16, 0)]
    if lose_inner:
        code += [_insn(0xbf, 0x61, 0), _insn(0x85, 0, 19)] * 2
    code += [_insn(0xbf, 0x61, 0), _insn(0xb7, 0x02, 0x0081), _insn(0xb7, 0x03, 40),
             _insn(0x85, 0, 18), _insn(0xb7, 0x00, 0), _insn(0x95, 0, 0)]
    return b"".join(code)


def _bpf(command: int, attr: ctypes.Array) -> int:
    fd = LIBC.syscall(SYS_BPF, command, attr, len(attr))
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"bpf({command})")
    return fd


def attach_egress(netns: str, device: str, lose_inner: bool) -> int:
    """Attaches the program at `device`'s egress in `netns`; detached when the fd is closed."""
    ifindex = int(subprocess.run(["ip", "netns", "exec", netns, "cat", f"/sys/class/net/{device}/ifindex"],
                                 check=True, capture_output=True, text=True).stdout)
    code = ctypes.create_string_buffer(_program(lose_inner))
    license_ = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(128)
    ctypes.memmove(ctypes.addressof(attr), (3).to_bytes(4, "little"), 4)  # BPF_PROG_TYPE_SCHED_CLS
    ctypes.memmove(ctypes.addressof(attr) + 4, (len(code.raw) // 8).to_bytes(4, "little"), 4)
    ctypes.memmove(ctypes.addressof(attr) + 8, ctypes.addressof(code).to_bytes(8, "little"), 8)
    ctypes.memmove(ctypes.addressof(attr) + 16, ctypes.addressof(license_).to_bytes(8, "little"), 8)
    prog = _bpf(5, attr)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        assert LIBC.setns(target, CLONE_NEWNET) == 0
        link = ctypes.create_string_buffer(128)
        ctypes.memmove(ctypes.addressof(link), prog.to_bytes(4, "little"), 4)
        ctypes.memmove(ctypes.addressof(link) + 4, ifindex.to_bytes(4, "little"), 4)
        ctypes.memmove(ctypes.addressof(link) + 8, (47).to_bytes(4, "little"), 4)  # BPF_TCX_EGRESS
        return _bpf(28, link)
    finally:
        assert LIBC.setns(own, CLONE_NEWNET) == 0
        for fd in (own, target, prog):
            os.close(fd)


class Fleet:
    def __init__(self, tmp: Path):
        tag = f"{os.getpid()}"
        self.switch = f"dvn-qa-sw-{tag}"
        self.netns = {host: f"dvn-qa-{host}-{tag}" for host in HOSTS}
        self.programs: dict[str, int] = {}
        ip = lambda ns, *a: subprocess.run(["ip", "-n", ns, *a], check=True)  # noqa: E731
        subprocess.run(["ip", "netns", "add", self.switch], check=True)
        ip(self.switch, "link", "add", "sw", "type", "bridge")
        ip(self.switch, "link", "set", "sw", "up")
        lines = ["[qinq]"]
        for n, (host, ns) in enumerate(self.netns.items()):
            subprocess.run(["ip", "netns", "add", ns], check=True)
            ip(ns, "link", "set", "lo", "up")
            ip(ns, "link", "add", "up40", "type", "veth", "peer", "name", f"p{n}", "netns", self.switch)
            ip(ns, "link", "add", "vmbr1", "type", "bridge")
            ip(ns, "link", "set", "up40", "master", "vmbr1")
            for dev in ("up40", "vmbr1"):
                ip(ns, "link", "set", dev, "up")
            ip(self.switch, "link", "set", f"p{n}", "master", "sw")
            ip(self.switch, "link", "set", f"p{n}", "up")
            shell = tmp / f"sh-{host}"
            shell.write_text(f"#!/bin/sh\nexec ip netns exec {ns} /bin/sh \"$@\"\n")
            shell.chmod(0o755)
            lines.append(f"{host} ansible_connection=local ansible_become=false "
                         f"ansible_shell_executable={shell} ansible_python_interpreter={VENV_BIN / 'python'}")
        self.inventory = tmp / "hosts.ini"
        self.inventory.write_text("\n".join(lines) + "\n")
        for host in HOSTS:
            self.nic(host, lose_inner=False)

    def nic(self, host: str, lose_inner: bool) -> None:
        if host in self.programs:
            os.close(self.programs.pop(host))
        self.programs[host] = attach_egress(self.netns[host], "up40", lose_inner)

    def close(self) -> None:
        for fd in self.programs.values():
            os.close(fd)
        for ns in (*self.netns.values(), self.switch):
            subprocess.run(["ip", "netns", "del", ns], check=False)


@pytest.fixture
def fleet(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("these tests create network namespaces: run them as root (make test does)")
    f = Fleet(tmp_path)
    yield f
    f.close()


def acceptance(fleet: Fleet, env: dict) -> subprocess.CompletedProcess:
    # The async jobs' results where both the wrapper and async_status look (not root's home).
    env = dict(env, ANSIBLE_ASYNC_DIR=str(fleet.inventory.parent / "async"))
    return subprocess.run(
        [VENV_BIN / "ansible-playbook", "-i", fleet.inventory, "deevnet.net.qinq_acceptance",
         "-e", "qinq_acceptance_hosts=qinq qinq_acceptance_uplink=up40 qinq_acceptance_duration=8",
         "-e", '{"qinq_acceptance_vlans": [201, 202]}'],
        env=env, capture_output=True, text=True, timeout=300)


def test_the_matrix_names_exactly_the_broken_direction_and_passes_after_the_fix(fleet, ansible_env):
    fleet.nic("hv01", lose_inner=True)
    broken = acceptance(fleet, ansible_env)
    out = broken.stdout
    assert broken.returncode != 0, out
    # The printed table (each line a string of the debug task's list): hv01's direction lost the
    # inner tag on its up40 on both VLANs, every other direction is ok.
    assert '"sender -> receiver  hv01  hv02       hv03",' in out, out
    assert '"hv01                -     LOST up40  LOST up40",' in out, out
    assert '"hv02                ok    -          ok",' in out, out
    assert '"hv03                ok    ok         -",' in out, out
    for receiver in ("hv02", "hv03"):
        for vlan in (201, 202):
            assert (f"hv01 -> {receiver}, VLAN {vlan}: 3 of 3 frames arrived with only the outer tag (outer VLAN 40)"
                    f" on up40: the inner tag was lost on the way; it left hv01's up40 (driver veth)") in out, out
    assert "hv02 -> " not in out.split("A broken pair fails the run")[1], out

    fleet.nic("hv01", lose_inner=False)
    fixed = acceptance(fleet, ansible_env)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert '"hv01                -     ok    ok",' in fixed.stdout, fixed.stdout
