"""The built docsite (make docs -> build/docs/html): every module of the staged collection has its
page, with every option and every return value (suboptions and contained keys too) as an anchor of
its own, read from the module's own documentation as ansible-doc assembles it (so a module added
later is covered without a change here); the role, the filter and the extra docs have their pages;
and one page renders in headless Chromium with its title and options table (the screenshot is kept
as build/docs/screenshot.png)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "build" / "docs" / "html"
PAGES = HTML / "collections" / "deevnet" / "net"
VENV_BIN = Path(sys.executable).parent
ENV = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / "build" / "collection"), ANSIBLE_HOME=str(ROOT / "build" / "docs" / "ansible-home"))


def ansible_doc(*args: str) -> dict:
    out = subprocess.run([VENV_BIN / "ansible-doc", "-j", *args], env=ENV, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


MODULES = sorted(ansible_doc("-l", "deevnet.net"))


def paths(entries: dict, children: str, prefix: str = "") -> list[str]:
    """Each key of `entries` and of its nested `children` (suboptions, contains), as antsibull-docs
    names their anchors: parent/child."""
    found = []
    for name, entry in (entries or {}).items():
        path = f"{prefix}{name}"
        found.append(path)
        found += paths((entry or {}).get(children), children, f"{path}/")
    return found


def test_the_docsite_was_built():
    assert (HTML / "index.html").is_file(), "run make docs first (make docs-test does)"
    assert len(MODULES) >= 5, MODULES


@pytest.mark.parametrize("module", MODULES)
def test_every_option_and_return_value_is_on_the_module_page(module):
    doc = ansible_doc(module)[module]
    page = PAGES / f"{module.split('.')[-1]}_module.html"
    assert page.is_file(), f"{module} has no page"
    html = page.read_text()
    options = paths(doc["doc"].get("options"), "suboptions")
    returns = paths(doc.get("return"), "contains")
    assert options and returns, module
    missing = [f"option {p}" for p in options if f'id="parameter-{p}"' not in html]
    missing += [f"return value {p}" for p in returns if f'id="return-{p}"' not in html]
    assert not missing, f"{page.name} lacks: {missing}"


def test_the_role_filter_and_extra_docs_have_pages():
    reference = [f"docsite/{page.stem}.html" for page in sorted((ROOT / "docs").glob("*.md"))]
    assert "docsite/proxmox-sdn.html" in reference
    for page in ("proxmox_node_network_role.html", "tenant_egress_plan_filter.html", "frr_reapply_filter.html",
                 "docsite/proxmox_node_network_readme.html", "transit_router_role.html",
                 "transit_router_refusal_filter.html", "transit_router_ruleset_filter.html",
                 "transit_router_unit_filter.html", "docsite/transit_router_readme.html", *reference):
        assert (PAGES / page).is_file(), page
    role = (PAGES / "proxmox_node_network_role.html").read_text()
    assert "proxmox_node_network_tenant_egress" in role and "proxmox_tenant_egress" in role
    index = (PAGES / "index.html").read_text()
    for title in ("The roles", "Reference"):
        assert title in index, title


def chromium(*args: str) -> subprocess.CompletedProcess:
    # --no-sandbox: root in a container; a profile of its own so nothing lands in $HOME.
    profile = ROOT / "build" / "docs" / "chromium-profile"
    return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                           "--window-size=1280,1600", *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, HOME=str(profile)))


def test_a_module_page_renders_in_chromium():
    page = (PAGES / "vrf_route_assert_module.html").as_uri()
    dom = chromium("--dump-dom", page)
    assert dom.returncode == 0, dom.stderr
    assert "<title>deevnet.net.vrf_route_assert module" in dom.stdout, dom.stdout[:500]
    assert 'ansible-option-table' in dom.stdout and 'id="parameter-vrfs"' in dom.stdout
    screenshot = ROOT / "build" / "docs" / "screenshot.png"
    screenshot.unlink(missing_ok=True)
    shot = chromium(f"--screenshot={screenshot}", page)
    assert shot.returncode == 0 and screenshot.is_file(), shot.stderr
    # A rendered page, not a blank one: a PNG of some size.
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20000, screenshot.stat()


def judge(tmp_path: Path, lines: list[str]) -> subprocess.CompletedProcess:
    warnings = tmp_path / "warnings.txt"
    warnings.write_text("\n".join(lines) + "\n")
    return subprocess.run([sys.executable, ROOT / "mk" / "docsite.py", "warnings", warnings], capture_output=True, text=True)


def test_every_sphinx_warning_fails_the_build_except_the_named_labels_of_ansibles_docs(tmp_path):
    offline = ["x_module.rst:60: WARNING: undefined label: 'action_plugins' [ref.ref]"]
    assert judge(tmp_path, offline).returncode == 0
    for real in ["x.rst:18: WARNING: 'any' reference target not found: transit_interface` [ref.any]",
                 "x_filter.rst:52: WARNING: undefined label: 'ansible_collections.deevnet.net.x_module' [ref.ref]",
                 "x.rst:508: ERROR: Unexpected indentation. [docutils]",
                 # A fetch tried is a fault of its own: the build is offline.
                 "WARNING: failed to reach any of the inventories with the following issues:",
                 "WARNING: intersphinx inventory 'https://docs.python.org/3/objects.inv' not fetchable due to x"]:
        proc = judge(tmp_path, offline + [real])
        assert proc.returncode == 1 and real in proc.stderr, (real, proc.stderr)


def test_the_docsite_build_fetches_no_intersphinx_inventory():
    """make docs' Sphinx configuration, as built: its intersphinx mapping is empty, so Sphinx
    reaches out to nobody, and the build's own warnings name no fetch."""
    conf: dict = {}
    exec((ROOT / "build" / "docs" / "site" / "conf.py").read_text(), conf)  # pylint: disable=exec-used
    assert conf["intersphinx_mapping"] == {}
    said = (ROOT / "build" / "docs" / "sphinx-warnings.txt").read_text()
    assert "inventor" not in said, said