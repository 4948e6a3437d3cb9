"""What every benchmark runs against: the built deevnet.net collection installed into a private
folder, and ansible.posix (the comparison) from the `ansible` package on PyPI (Galaxy is not
reachable here). Used by run.py and by tenant_play.py, which also runs alone: neither imports the
other."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv" / "bin"
ANSIBLE_WHEEL = "ansible==14.5.0"  # the community package that carries ansible.posix 2.x
POSIX_COLLECTIONS = ROOT / "build" / "bench" / "collections"


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def ensure_ansible_posix(log: Callable[[str], None]) -> Path:
    """The collections folder that holds ansible.posix, fetched once."""
    posix = POSIX_COLLECTIONS / "ansible_collections" / "ansible" / "posix"
    if posix.exists():
        return POSIX_COLLECTIONS
    log(f"fetching ansible.posix from the {ANSIBLE_WHEEL} wheel on PyPI")
    with tempfile.TemporaryDirectory() as tmp:
        run([VENV / "pip", "download", "--quiet", "--no-deps", "-d", tmp, ANSIBLE_WHEEL])
        wheel = next(Path(tmp).glob("ansible-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            members = [m for m in z.namelist() if m.startswith("ansible_collections/ansible/posix/")]
            z.extractall(POSIX_COLLECTIONS, members)
    return POSIX_COLLECTIONS


def built_tarball() -> Path:
    tarballs = sorted(ROOT.glob("dist/deevnet-net-*.tar.gz"))
    if not tarballs:
        raise SystemExit("no dist/deevnet-net-*.tar.gz: run `make collection` first")
    return tarballs[-1]


def install_built_collection(installed: Path) -> Path:
    """The built tarball installed afresh into `installed`; returns the tarball."""
    tarball = built_tarball()
    shutil.rmtree(installed, ignore_errors=True)
    run([VENV / "ansible-galaxy", "collection", "install", "--force", "-p", installed, tarball],
        stdout=subprocess.DEVNULL)
    return tarball


def collections_env(installed: Path, posix: Path, ansible_home: Path, **extra: str) -> dict:
    """The environment of an ansible command that sees these two collections only."""
    return dict(os.environ, ANSIBLE_COLLECTIONS_PATH=f"{installed}:{posix}", ANSIBLE_HOME=str(ansible_home), **extra)
