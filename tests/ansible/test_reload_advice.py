"""The reload advice has one home: collection/plugins/plugin_utils/reload_advice.txt, which the
Rust runtime includes (modules/runtime/src/advice.rs) and the Python filters read
(plugin_utils/reload_advice.py). No module message, filter, document or example recommends a bare
`ifreload -a`: every mention of it either previews (`ifreload -a --no-act`) or is one of the
descriptive forms below."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import ROOT, plugin_utils

ADVICE_FILE = ROOT / "collection" / "plugins" / "plugin_utils" / "reload_advice.txt"
GUARDED_CHANGE = "`deevnet.net.fabric_change`"


def _of_the_guarded_change(path: Path) -> bool:
    """The guarded change's own files (its role, playbooks, filters and their docs): the home of
    the preview the advice points to, which runs it and reads its output."""
    name = path.name
    return "fabric_change" in path.parts or name.startswith(("fabric_change", "fabric-change"))


def _rust_sources() -> list[Path]:
    """Every module crate's Rust sources, without its tests (src/tests/, test_support)."""
    return sorted(p for p in ROOT.glob("modules/*/src/**/*.rs")
                  if not {"tests", "test_support"} & set(p.relative_to(ROOT).parts[3:-1])
                  and p.name not in ("tests.rs", "test_support.rs"))


def _texts() -> list[Path]:
    """What a user reads: the modules' messages (Rust sources), the collection's plugins (module
    documentation, filters and their documentation, plugin_utils), its changelog fragments, the
    roles' READMEs and defaults, the documents and their docsite pages, the two READMEs."""
    files = _rust_sources()
    files += [p for p in (ROOT / "collection" / "plugins").rglob("*")
              if p.is_file() and p.suffix in (".py", ".yml", ".yaml", ".txt") and "_bin" not in p.parts]
    files += sorted((ROOT / "collection" / "changelogs" / "fragments").glob("*.yml"))
    files += sorted(ROOT.glob("roles/*/README.md")) + sorted(ROOT.glob("roles/*/defaults/**/*.yml"))
    files += sorted(ROOT.glob("roles/*/meta/argument_specs.yml"))
    files += sorted(ROOT.glob("docs/*.md")) + sorted(ROOT.glob("docs/docsite/rst/*.rst"))
    files += [ROOT / "collection" / "README.md", ROOT / "README.md"]
    return sorted(set(files))


def _flat(text: str) -> str:
    """The text as read: a Rust string's line continuation (`\\` and the next line's indent) and
    every run of white space (line breaks of wrapped paragraphs) as one space."""
    return re.sub(r"\s+", " ", re.sub(r"\\\n\s*", "", text))


# The reload, however a text quotes it: `ifreload -a`, ``ifreload -a`` (RST), C(ifreload -a)
# (module documentation) or bare.
RELOAD = re.compile(r"(``|`|C\()?ifreload -a(?![\w-])(``|`|\))?")
# A mention that describes and does not recommend: the words right before or right after it.
DESCRIBED_BY_WHAT_PRECEDES = (
    "bare ",         # the warning against it: "a bare `ifreload -a` on a host with stale entries"
    "never ",        # what is not done: "for this node only, never `ifreload -a`"
    "runs ",         # what a tool does: "Proxmox's Apply runs `ifreload -a`"
    "after ",        # what is observed once it ran: "txvlan still off after `ifreload -a`"
    "re-created (",  # the cause named: "when it is re-created (ifreload -a)"
)
DESCRIBED_BY_WHAT_FOLLOWS = (
    " does",         # "as `ifreload -a` does on a Proxmox SDN apply"
    " re-creates",   # "a device that `ifreload -a` re-creates"
    " deletes",      # "a Proxmox SDN apply's `ifreload -a` deletes and re-creates"
)


def reload_mentions_not_allowed(text: str) -> list[str]:
    """Each mention of `ifreload -a` in `text` that neither previews (`ifreload -a --no-act`) nor
    is a descriptive form, with the words around it."""
    flat, bad = _flat(text), []
    for match in RELOAD.finditer(flat):
        core_end = flat.index("ifreload -a", match.start()) + len("ifreload -a")
        if flat.startswith(" --no-act", core_end):
            continue
        before, after = flat[:match.start()], flat[match.end():]
        if before.endswith(DESCRIBED_BY_WHAT_PRECEDES) or after.startswith(DESCRIBED_BY_WHAT_FOLLOWS):
            continue
        bad.append(flat[max(0, match.start() - 60):match.end() + 40])
    return bad


def test_the_rule_tells_a_recommendation_from_a_description():
    recommendations = [
        "re-create it: `ifreload -a` on this node",
        "apply the SDN on hv02: `ifreload -a` there (or Apply in the SDN panel)",
        "apply the SDN again (`ifreload -a`) so that Proxmox's SNAT rule matches",
        "then, if it touches nothing stale, `ifreload -a` on this node",
        "reload the node's network (`ifreload -a`)",
        "fix: C(ifreload -a --no-act) to see what a reload would change, then C(ifreload -a))",
        "run ``ifreload -a`` on the node",
        "re-create the VNet's port \\\n             (Proxmox: `ifreload -a`)",
    ]
    for text in recommendations:
        assert reload_mentions_not_allowed(text), text
    descriptions = [
        "a bare `ifreload -a` on a host whose interfaces file has stale entries",
        "a bare\n``ifreload -a`` on a host",
        "this node only, never `ifreload -a`.",
        "`pvesh set /nodes/<node>/network`, which also runs `ifreload -a`",
        "txvlan still off after `ifreload -a`",
        "forward again when it is re-created (C(ifreload -a)) or the node boots",
        "as C(ifreload -a) does on a Proxmox SDN apply",
        "a device that ``ifreload -a`` re-creates forwards again",
        "`ifreload -a --no-act` (what it would run)",
        "ifreload -a --no-act",
    ]
    for text in descriptions:
        assert reload_mentions_not_allowed(text) == [], text


def test_no_text_recommends_a_bare_reload():
    texts = _texts()
    assert ROOT / "modules/sdn_check/src/finding.rs" in texts
    assert ROOT / "collection/plugins/filter/fleet_proof.py" in texts
    assert ROOT / "docs/docsite/rst/proxmox-sdn.rst" in texts
    assert not any("tests" in p.relative_to(ROOT).parts[3:-1] for p in _rust_sources())
    bad = {f"{path.relative_to(ROOT)}: ...{words}..." for path in texts
           for words in reload_mentions_not_allowed(path.read_text(encoding="utf-8"))}
    assert sorted(bad) == []


def _paragraphs(text: str) -> list[str]:
    """Paragraphs and list items: a blank line or a line opening an item (`- `, `* `, `1. `)
    starts the next."""
    return [_flat(p) for p in re.split(r"\n\s*\n|\n(?=[ \t]*(?:[-*]|\d+\.) )", text) if p.strip()]


def test_every_text_that_previews_the_reload_ends_with_the_guarded_change():
    """Wherever a text shows the preview, the same paragraph names the guarded change."""
    bad = [f"{path.relative_to(ROOT)}: {paragraph}" for path in _texts() if not _of_the_guarded_change(path)
           for paragraph in _paragraphs(path.read_text(encoding="utf-8"))
           if "ifreload -a --no-act" in paragraph and "deevnet.net.fabric_change" not in paragraph]
    assert bad == []


def test_the_advice_is_one_file_the_rust_runtime_includes_and_the_filters_read():
    advice = plugin_utils("reload_advice")
    words = ADVICE_FILE.read_text(encoding="utf-8").strip()
    assert "\n" not in words and words.count("{node}") == 1
    for part in ("`ifquery --check -a`", "`ifreload -a --no-act`", "stale", GUARDED_CHANGE):
        assert part in words, part
    assert advice.reload_interfaces("hv02") == words.replace("{node}", "hv02")
    assert Path(advice.ADVICE_FILE).resolve() == ADVICE_FILE.resolve()
    runtime = ROOT / "modules" / "runtime" / "src" / "advice.rs"
    included = re.findall(r'include_str!\("([^"]+)"\)', runtime.read_text(encoding="utf-8"))
    assert [(runtime.parent / path).resolve() for path in included] == [ADVICE_FILE.resolve()]
    assert "pub mod advice;" in (ROOT / "modules" / "runtime" / "src" / "lib.rs").read_text(encoding="utf-8")


def _python_strings(path: Path) -> list[str]:
    """The string constants of a Python file, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_module_or_filter_words_a_reload_of_its_own():
    """The modules' code (not their comments) and the filters' strings never word the advice's
    preview or its guarded change themselves: a fix that reloads takes the advice
    (runtime::advice, plugin_utils/reload_advice); any other mention of the reload is held to the
    descriptive forms by test_no_text_recommends_a_bare_reload."""
    tools = ("ifquery", "--no-act", "fabric_change")
    rust = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in _rust_sources()
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if any(tool in line for tool in tools) and not line.strip().startswith("//")]
    assert rust == []
    python = sorted((ROOT / "collection" / "plugins").glob("filter/*.py")) + sorted(
        (ROOT / "collection" / "plugins").glob("plugin_utils/*.py")) + sorted(
        (ROOT / "collection" / "plugins").glob("action/*.py"))
    assert ROOT / "collection/plugins/filter/fleet_proof.py" in python
    strings = [f"{path.relative_to(ROOT)}: {text}" for path in python if not _of_the_guarded_change(path)
               for text in _python_strings(path) if any(tool in text for tool in tools)]
    assert strings == []


def _strings(node):
    """Every string of a value, however deep."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, (dict, list)):
        for value in (node.values() if isinstance(node, dict) else node):
            yield from _strings(value)


def _samples(node):
    """Every string of every RETURN value's sample (of contained values too)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value) if key == "sample" else _samples(value)
    elif isinstance(node, list):
        for value in node:
            yield from _samples(value)


def test_every_module_documentation_example_of_a_reload_gives_the_advice():
    this_node = plugin_utils("reload_advice").reload_interfaces("this node")
    seen = []
    for path in sorted((ROOT / "collection" / "plugins" / "modules").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        returns = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                   and [getattr(t, "id", None) for t in node.targets] == ["RETURN"]]
        for text in returns:
            for value in _samples(yaml.safe_load(text)):
                if "ifreload" in value or "ifquery" in value:
                    seen.append(path.name)
                    assert this_node in value, f"{path.name}: {value}"
    assert "sdn_check.py" in seen


INSTALLED = """
import json, sys
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
from ansible_collections.deevnet.net.plugins.plugin_utils import reload_advice
from ansible_collections.deevnet.net.plugins.filter import fleet_proof
tenant, node = {"name": "tdemo", "vni": 11001}, {"name": "hv02", "evpn": {"vnis": []}, "vnis": {}}
print(json.dumps({"file": str(reload_advice.ADVICE_FILE), "fix": fleet_proof._advertised(tenant, node)[0][3][2]}))
"""


def test_the_installed_collection_carries_the_advice_its_filters_read(ansible_env):
    """The tarball holds the file, and the filters, loaded by Ansible's collection loader from the
    installed collection, read it there."""
    collections = ansible_env["ANSIBLE_COLLECTIONS_PATH"]
    out = subprocess.run([sys.executable, "-c", INSTALLED, collections], env=ansible_env,
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    assert Path(got["file"]).is_relative_to(collections), got
    words = ADVICE_FILE.read_text(encoding="utf-8").strip()
    assert Path(got["file"]).read_text(encoding="utf-8").strip() == words
    assert got["fix"] == "re-create its devices: " + words.replace("{node}", "hv02")
