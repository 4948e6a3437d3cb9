"""The collection's docsite (make docs): the extra docs' RST made from their Markdown sources, and
the Sphinx build's warnings judged.

    docsite.py rst [--check]     docs/docsite/rst/*.rst from SOURCES (pandoc); --check fails when
                                 a committed one differs from what its source makes
    docsite.py offline CONF      makes antsibull-docs' Sphinx conf.py fetch no intersphinx
                                 inventory (the build runs without network)
    docsite.py warnings FILE     fails on any Sphinx warning in FILE except the labels of
                                 Ansible's own docs (ALLOWED_WARNINGS), which it names

The RST is committed (antsibull-docs reads extra docs only as RST under docs/docsite/rst/, and
the tarball ships them); the Markdown stays the source, so `make docs` checks they agree.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RST = ROOT / "docs" / "docsite" / "rst"
# extra doc name -> its Markdown source: the roles' READMEs and every page under docs/ (a new
# page there is part of the docsite without another list to keep).
SOURCES = {
    "proxmox_node_network_readme": ROOT / "roles" / "proxmox_node_network" / "README.md",
    "transit_router_readme": ROOT / "roles" / "transit_router" / "README.md",
    "fabric_change_readme": ROOT / "roles" / "fabric_change" / "README.md",
    **{page.stem: page for page in sorted((ROOT / "docs").glob("*.md"))},
}
# The build fetches nothing (offline_conf): the labels the module pages take from Ansible's own
# docs stay unresolved, and these warnings, only for these labels (named), are the only ones allowed.
INTERSPHINX_LABELS = ["action_plugins", "common_return_values", "ansible_configuration_settings",
                      "ansible_collections.ansible.posix.sysctl_module",
                      "ansible_collections.ansible.builtin.async_status_module"]
ALLOWED_WARNINGS = [
    re.compile(r"WARNING: undefined label: '(" + "|".join(map(re.escape, INTERSPHINX_LABELS)) + r")' \[ref\.ref\]$"),
]
OFFLINE = """
# The docsite is built without network (mk/docsite.py offline): no intersphinx inventory is fetched.
intersphinx_mapping = {}
"""


def offline_conf(conf: str) -> str:
    """antsibull-docs' conf.py, with its intersphinx inventories (docs.python.org, jinja,
    docs.ansible.com) taken out: the last assignment is the one Sphinx reads."""
    return conf if conf.endswith(OFFLINE) else conf + OFFLINE


def rst_of(name: str, source: Path) -> str:
    """pandoc's RST of `source`, with one label of antsibull-docs' form for the extra doc (its
    lint requires labels to start with ansible_collections.deevnet.net.docsite.) and none of
    pandoc's own heading labels."""
    text = subprocess.run(["pandoc", "--from", "gfm-gfm_auto_identifiers", "--to", "rst", "--wrap=preserve", "--columns=2000",
                           str(source)], check=True, capture_output=True, text=True).stdout
    return (f".. _ansible_collections.deevnet.net.docsite.{name.replace('-', '_')}:\n\n"
            f"..\n  Made from {source.relative_to(ROOT)}: edit that file, not this one.\n\n"
            + text)


def rst(check: bool) -> int:
    stale = []
    for name, source in SOURCES.items():
        target = RST / f"{name}.rst"
        text = rst_of(name, source)
        if check:
            if not target.exists() or target.read_text() != text:
                stale.append(str(target.relative_to(ROOT)))
        else:
            RST.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    if stale:
        print(f"docsite: {', '.join(stale)} differ from their Markdown sources: run make docs-rst", file=sys.stderr)
        return 1
    return 0


def warnings(path: Path) -> int:
    lines = [line for line in path.read_text().splitlines() if "WARNING" in line or "ERROR" in line]
    allowed = [line for line in lines if any(p.search(line) for p in ALLOWED_WARNINGS)]
    others = [line for line in lines if line not in allowed]
    for line in allowed:
        print(f"docsite: allowed (a label of Ansible's own docs, offline): {line}")
    for line in others:
        print(f"docsite: {line}", file=sys.stderr)
    if others:
        print(f"docsite: {len(others)} Sphinx warning(s) or error(s), see above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["rst"]:
        sys.exit(rst("--check" in sys.argv[2:]))
    if sys.argv[1:2] == ["offline"] and len(sys.argv) == 3:
        conf_py = Path(sys.argv[2])
        conf_py.write_text(offline_conf(conf_py.read_text()))
        sys.exit(0)
    if sys.argv[1:2] == ["warnings"] and len(sys.argv) == 3:
        sys.exit(warnings(Path(sys.argv[2])))
    sys.exit(__doc__)
