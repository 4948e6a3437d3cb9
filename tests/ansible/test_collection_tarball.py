"""The collection as its users get it: what the built tarball (make collection) holds.

Its license, its README (the users' one, collection/README.md, not the repository's), links
that resolve inside the tarball, no placeholder metadata, a changelog that announces each
module once, execution-environment metadata that ansible-builder reads, and the install from
a requirements.yml that the README shows.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
from functools import cache
from pathlib import Path

import yaml

from conftest import ROOT, VENV_BIN, _tarball, own_make_env


@cache
def _members() -> dict[str, tarfile.TarInfo]:
    with tarfile.open(_tarball()) as tar:
        return {m.name.rstrip("/"): m for m in tar.getmembers()}


@cache
def _read(name: str) -> bytes:
    assert name in _members(), f"{name} is not in {_tarball().name}"
    with tarfile.open(_tarball()) as tar:
        return tar.extractfile(name).read()


def _text(name: str) -> str:
    return _read(name).decode()


def _manifest() -> dict:
    return json.loads(_text("MANIFEST.json"))["collection_info"]


def _modules() -> list[str]:
    return sorted(
        posixpath.basename(n)[: -len(".py")]
        for n in _members()
        if n.startswith("plugins/modules/") and n.endswith(".py")
    )


BIN_DIR = "plugins/plugin_utils/_bin"


def test_each_module_is_a_link_to_its_binary_beside_its_documentation():
    """plugins/modules/<name> links to plugins/plugin_utils/_bin/<name>: ansible-core runs the
    binary through it, and `ansible-doc -l` skips links, so it reads the .py documentation
    whatever the folder's order. The binaries live under plugins/, as Galaxy's layout wants:
    the tarball has no top-level bin/ (ansible-test sanity reads every file there as Python)."""
    members = _members()
    assert _modules(), "no module documentation in the tarball"
    for module in _modules():
        link = members.get(f"plugins/modules/{module}")
        assert link is not None and link.issym() and link.linkname == f"../plugin_utils/_bin/{module}", module
        binary = f"{BIN_DIR}/{module}"
        assert members[binary].isfile() and members[binary].mode & 0o111, module
        assert _read(binary)[:4] == b"\x7fELF", module
    top_level = {name.split("/", 1)[0] for name in members}
    assert top_level <= {"MANIFEST.json", "FILES.json", "COPYING", "README.md", "CHANGELOG.rst", "CONTRIBUTING.md",
                         "THIRD-PARTY-NOTICES.md", "meta", "plugins", "roles", "playbooks", "docs",
                         "changelogs"}, sorted(top_level)


# --- license and metadata -----------------------------------------------------------------------

def test_copying_is_the_gpl3_text_and_the_license_file():
    copying = _read("COPYING")
    assert copying == (ROOT / "COPYING").read_bytes()
    head = copying.decode()[:200].split()
    assert head[:7] == ["GNU", "GENERAL", "PUBLIC", "LICENSE", "Version", "3,", "29"], head
    assert b"END OF TERMS AND CONDITIONS" in copying
    info = _manifest()
    assert info["license_file"] == "COPYING"
    assert not info["license"], "galaxy.yml takes `license` or `license_file`, not both"


URL_KEYS = ("repository", "issues", "homepage", "documentation")


def test_metadata_urls_are_build_inputs_never_committed():
    """galaxy.yml commits no URL: the build writes the four it is given (make collection
    REPOSITORY_URL=...), and this test build got the clearly-fake example.invalid ones."""
    committed = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    assert not set(URL_KEYS) & set(committed), "galaxy.yml commits a URL: it is a build input"
    info = _manifest()
    for key in URL_KEYS:
        assert re.fullmatch(rf"https://example\.invalid/deevnet\.net/{key}", info[key] or ""), f"{key}: {info[key]!r}"


def _release_urls(**urls) -> subprocess.CompletedProcess:
    """`make release`'s check of the URLs (the build itself is `make collection`)."""
    env = own_make_env(drop=("_URL",))
    args = [f"{k.upper()}_URL={v}" for k, v in urls.items()]
    return subprocess.run(["make", "-s", "-C", ROOT, "release-urls", *args], env=env, capture_output=True, text=True)


def test_release_refuses_missing_or_test_urls_and_takes_real_ones():
    real = {key: f"https://git.deevnet.example/{key}" for key in URL_KEYS}
    assert _release_urls(**real).returncode == 0
    refused = _release_urls()
    assert refused.returncode != 0 and all(f"{k.upper()}_URL" in refused.stdout for k in URL_KEYS), refused.stdout
    for key, bad in (("repository", ""), ("issues", "http://git.deevnet.example/issues"),
                     ("homepage", "https://example.invalid/deevnet.net/homepage")):
        refused = _release_urls(**{**real, key: bad})
        assert refused.returncode != 0, (key, bad)
        assert refused.stdout.split(":", 1)[1].split("(")[0].split() == [f"{key.upper()}_URL"], refused.stdout


# --- the README ---------------------------------------------------------------------------------

def test_readme_is_the_collection_readme_not_the_developers():
    assert _manifest()["readme"] == "README.md"
    readme = _text("README.md")
    assert readme == (ROOT / "collection" / "README.md").read_text()
    assert readme != (ROOT / "README.md").read_text()
    for developer_only in ("make test", "make demo", "make collection", "TESTING.md", "cargo "):
        assert developer_only not in readme, f"the users' README mentions {developer_only!r}"
    # What users need: requirements, install, every module and the role, the fast-path switch.
    assert "ansible-core 2.15" in readme
    assert "ansible-galaxy collection install" in readme
    for module in _modules():
        assert f"deevnet.net.{module}:" in readme, f"no example task for {module}"
    assert "deevnet.net.proxmox_node_network" in readme
    assert "deevnet_net_fast_path: false" in readme


def test_readme_states_the_ansible_core_range_of_meta_runtime():
    required = yaml.safe_load(_text("meta/runtime.yml"))["requires_ansible"]
    match = re.fullmatch(r">=\s*(\d+)\.(\d+)(?:\.0)?", required)
    assert match, f"requires_ansible {required!r}: update the README's Requirements and this test"
    assert f"ansible-core {match[1]}.{match[2]} or newer" in _text("README.md")


_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
_HTML = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")


def markdown_links(text: str) -> list[str]:
    """Link targets of a Markdown text, outside code blocks and code spans."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    return [m[1] for pattern in (_INLINE_LINK, _REFERENCE, _HTML) for m in pattern.finditer(text)]


def test_markdown_links_parser_sees_links_and_skips_code():
    text = "a [x](COPYING) b ![i](img/a.png \"t\") `[no](code.md)`\n```\n[no](fence.md)\n```\n[r]: docs/r.md\n"
    assert markdown_links(text) == ["COPYING", "img/a.png", "docs/r.md"]


def test_every_relative_link_in_the_tarballs_markdown_resolves_inside_it():
    members = _members()
    pages = [n for n in members if n.endswith(".md") and members[n].isfile()]
    assert "README.md" in pages and "docs/proxmox-frr-merge.md" in pages
    checked, broken = 0, []
    for page in pages:
        for target in markdown_links(_text(page)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue  # a URL or an anchor in the same page
            path = target.split("#", 1)[0].split("?", 1)[0]
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
            checked += 1
            if resolved.startswith("../") or resolved not in members:
                broken.append(f"{page}: {target}")
    assert not broken, "links to files the tarball does not hold:\n" + "\n".join(broken)
    readme_links = markdown_links(_text("README.md"))
    for needed in ("COPYING", "roles/proxmox_node_network/README.md", "docs/proxmox-frr-merge.md"):
        assert needed in readme_links, f"the README does not link {needed}"
    assert checked >= 4


# Names only the source repository has: a shipped text that names one points users at what they
# do not have. The one list; the test below greps the extracted tarball for each.
REPOSITORY_ONLY_NAMES = (
    "ARCHITECTURE.md", "BENCHMARKS.md", "TESTING.md", "Cargo.toml", "Cargo.lock", "Makefile",
    "requirements-dev.txt", "mk/", "bench/", "demo/", "fuzz/", "molecule/", "tests/ansible", "tests/lab",
    "tests/sanity", "tests/galaxy", "collection/README.md", "collection/plugins",
)
# Patterns for the families of such names: the Rust sources (rules.rs, modules/<crate>/...), the
# make targets (`make collection`, `make ansible-core-oldest`), the project's own tracker's
# issue and item numbers.
REPOSITORY_ONLY_PATTERNS = (
    r"\b[\w-]+\.rs\b", r"\bmodules/[a-z_]+/(src|tests)\b", r"`make [\w-]+", r"\bmake (collection|test|soak|bench|demo|sanity|ansible-[\w-]+)\b",
    r"\b(issue|item) \d+\b",
)


def repository_only_hits(folder: Path) -> list[str]:
    """Each line of a text file under `folder` that names something only the repository has."""
    patterns = [re.compile(re.escape(n)) for n in REPOSITORY_ONLY_NAMES] + [re.compile(p) for p in REPOSITORY_ONLY_PATTERNS]
    hits = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        data = path.read_bytes()
        if b"\0" in data:
            continue  # the module binaries
        for number, line in enumerate(data.decode().splitlines(), 1):
            if any(p.search(line) for p in patterns):
                hits.append(f"{path.relative_to(folder)}:{number}: {line.strip()}")
    return hits


def test_repository_only_names_finder_sees_each_kind(tmp_path):
    (tmp_path / "a.md").write_text("see ARCHITECTURE.md\nthe lint (`rules.rs`)\nrun `make ansible-core-oldest`\n"
                                   "install a built collection (make collection)\nfixed in issue 29\n"
                                   "modules/frr_local_stanza/tests/data\nmake sure it works\n")
    (tmp_path / "bin").write_bytes(b"\x7fELF\0ARCHITECTURE.md")
    assert [h.split(":")[1] for h in repository_only_hits(tmp_path)] == ["1", "2", "3", "4", "5", "6"]


def test_shipped_texts_name_nothing_only_the_repository_has(tmp_path):
    with tarfile.open(_tarball()) as tar:
        tar.extractall(tmp_path, filter="data")
    for name in ("ARCHITECTURE.md", "TESTING.md", "BENCHMARKS.md", "Cargo.toml", "tests", "molecule", "bin"):
        assert not (tmp_path / name).exists(), name
    hits = repository_only_hits(tmp_path)
    assert not hits, "shipped texts that name what only the repository has:\n" + "\n".join(hits)


def test_readme_examples_are_valid_for_the_modules_and_the_role(ansible_env):
    """Every example task validates against its module's documented options, as the action
    plugin validates it, and the role's variables against the role's argument_specs."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    installed = Path(ansible_env["ANSIBLE_COLLECTIONS_PATH"]) / "ansible_collections" / "deevnet" / "net"
    loader = importlib.util.spec_from_file_location(
        "deevnet_binary_module", installed / "plugins" / "plugin_utils" / "binary_module.py")
    plugin = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(plugin)
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", _text("README.md"), re.S)]
    seen = set()
    for task in (t for b in blocks if isinstance(b, list) for t in b if isinstance(t, dict)):
        for key, args in task.items():
            if key.startswith("deevnet.net.") and key != "deevnet.net.proxmox_node_network":
                name = key.removeprefix("deevnet.net.")
                # The documentation as Ansible assembles it (doc fragments included).
                doc = json.loads(subprocess.run([VENV_BIN / "ansible-doc", "--json", key], env=ansible_env,
                                                check=True, capture_output=True, text=True).stdout)
                spec = plugin.controller_spec(plugin.argument_spec_from_doc(doc[key]["doc"]["options"]))
                result = ArgumentSpecValidator(spec).validate(args)
                assert not result.error_messages, f"README example of {name}: {result.error_messages}"
                seen.add(name)
    assert seen == set(_modules()), f"README examples cover {sorted(seen)}"
    # The role's variables: a group_vars-like block, or the vars of an inventory (the quick start's).
    role_vars = [b.get("all", {}).get("vars", b) if isinstance(b, dict) else b for b in blocks]
    role_vars = [b for b in role_vars if isinstance(b, dict) and any(k.startswith("proxmox_") for k in b)]
    assert len(role_vars) == 1, role_vars
    specs = yaml.safe_load(_text("roles/proxmox_node_network/meta/argument_specs.yml"))
    options = specs["argument_specs"]["main"]["options"]
    assert set(role_vars[0]) <= set(options), f"not the role's variables: {set(role_vars[0]) - set(options)}"
    for name in role_vars[0]:
        assert name.startswith("proxmox_node_network_"), f"{name}: the README shows the role-prefixed names"
        description = options[name].get("description") or [""]
        first = description[0] if isinstance(description, list) else description
        assert not first.lower().startswith("deprecated"), f"{name} is deprecated"
    result = ArgumentSpecValidator(options).validate(role_vars[0])
    assert not result.error_messages, result.error_messages


# --- the changelog ------------------------------------------------------------------------------

def _release_sections(rst: str) -> dict[str, str]:
    """The text of each release section of CHANGELOG.rst, by version."""
    parts = re.split(r"^v(\d+\.\d+\.\d+)\n=+\n", rst, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_changelog_announces_each_module_once_in_the_release_that_added_it():
    sections = _release_sections(_text("CHANGELOG.rst"))
    changes = yaml.safe_load(_text("changelogs/changelog.yaml"))
    assert _modules(), "no module documentation in the tarball"
    for module in _modules():
        doc = _text(f"plugins/modules/{module}.py")
        added = re.search(r"^version_added:\s*['\"]?([\d.]+)", doc, re.M)[1]
        assert added in sections, f"{module}: no v{added} section in CHANGELOG.rst"
        mentions = re.findall(rf"\b{module}\b", sections[added])
        assert len(mentions) == 1, f"{module} is named {len(mentions)} times in the v{added} notes"
        assert re.search(rf"^New Modules\n-+\n(?:\n|- .*\n)*?- {module} - ", sections[added], re.M), module
        announced = [v for v, r in changes["releases"].items() for m in r.get("modules", []) if m["name"] == module]
        assert announced == [added], f"{module} announced in {announced}"



NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def test_the_first_release_says_what_ships_and_nothing_a_first_release_cannot_have():
    """A first release has no earlier one to break or deprecate; its summary counts the modules
    that ship and names the role and every playbook."""
    changes = yaml.safe_load(_text("changelogs/changelog.yaml"))["releases"]
    first = min(changes, key=lambda v: tuple(map(int, v.split("."))))
    release = changes[first]["changes"]
    assert not {"breaking_changes", "deprecated_features", "removed_features"} & set(release), sorted(release)
    summary = " ".join(release["release_summary"].split())
    count = len(_modules())
    assert f"{NUMBERS[count]} modules" in summary, (count, summary)
    assert "proxmox_node_network" in summary, summary
    for playbook in sorted(n for n in _members() if n.startswith("playbooks/") and n.endswith(".yml")):
        assert Path(playbook).stem in summary, (playbook, summary)

# --- execution environments ---------------------------------------------------------------------

def _ee_requirements(kind: str) -> list[str]:
    """The requirement lines of the file meta/execution-environment.yml names for `kind`."""
    name = yaml.safe_load(_text("meta/execution-environment.yml"))["dependencies"][kind]
    return [line for line in _text(name).splitlines() if line.strip() and not line.startswith("#")]


def test_execution_environment_metadata_names_only_files_the_tarball_holds():
    ee = yaml.safe_load(_text("meta/execution-environment.yml"))
    assert ee["version"] == 1
    dependencies = ee["dependencies"]
    assert set(dependencies) == {"python", "system"}, dependencies
    for kind, name in dependencies.items():
        # ansible-builder 3.2 takes a path relative to the collection root, nothing else.
        assert isinstance(name, str) and not posixpath.isabs(name), f"{kind}: {name!r}"
        assert name in _members() and _members()[name].isfile(), f"{kind}: {name} is not in the tarball"
    # Without the metadata file ansible-builder would read these instead: none may contradict it.
    assert "requirements.txt" not in _members() and "bindep.txt" not in _members()


def test_controller_side_python_needs_only_ansible_core_and_the_standard_library():
    """What meta/ee-requirements.txt says: no Python package beyond ansible-core (the action
    plugins import the collection's own plugin_utils through ansible_collections)."""
    declared = [re.split(r"[\s<>=!~;\[]", line, maxsplit=1)[0].lower() for line in _ee_requirements("python")]
    allowed = set(sys.stdlib_module_names) | {"__future__", "ansible", "ansible_collections"}
    python_files = [n for n in _members() if n.endswith(".py")]
    assert "plugins/plugin_utils/binary_module.py" in python_files
    for name in python_files:
        for node in ast.walk(ast.parse(_read(name), name)):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in allowed or root in declared, f"{name} imports {root}, not declared"


def _introspect(collections) -> dict:
    out = subprocess.run([VENV_BIN / "ansible-builder", "introspect", str(collections)],
                         capture_output=True, text=True, check=True).stdout
    return yaml.safe_load(out[out.index("---"):])


def test_ansible_builder_introspect_finds_no_missing_dependency(ansible_env, tmp_path):
    installed = ansible_env["ANSIBLE_COLLECTIONS_PATH"]
    # Its output lists each requirement as `LINE  # from collection NAMESPACE.NAME`.
    assert _introspect(installed) == {"python": [], "system": []}
    # The same run sees the collection's metadata: a dependency added to it is reported.
    copy = tmp_path / "collections"
    shutil.copytree(installed, copy)
    meta = copy / "ansible_collections" / "deevnet" / "net" / "meta" / "execution-environment.yml"
    ee = yaml.safe_load(meta.read_text())
    ee["dependencies"]["python"] = "meta/probe-requirements.txt"
    meta.write_text(yaml.safe_dump(ee))
    (meta.parent / "probe-requirements.txt").write_text("deevnet-probe-package\n")
    assert _introspect(copy)["python"] == ["deevnet-probe-package  # from collection deevnet.net"]


# --- install as the README shows ----------------------------------------------------------------

def test_install_from_a_requirements_file_as_the_readme_shows_from_any_folder(tmp_path):
    """The README's requirements.yml, run from a folder that is neither the tarball's nor the
    file's: ansible-galaxy reads a relative `type: file` name from the folder it runs in, so the
    example names the tarball by an absolute path (here moved under tmp_path, same name)."""
    readme = _text("README.md")
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if b.startswith("collections:"))
    entry = yaml.safe_load(block)["collections"][0]
    assert entry["type"] == "file"
    shown = Path(entry["name"])
    assert shown.is_absolute() and shown.name == _tarball().name, entry["name"]
    downloads = tmp_path / shown.parent.relative_to("/")
    downloads.mkdir(parents=True)
    shutil.copy(_tarball(), downloads / shown.name)
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.yml").write_text(block.replace(str(shown), str(downloads / shown.name)))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Only this temp folder: a deevnet.net installed elsewhere (~/.ansible) would make it a no-op.
    env = dict(os.environ, ANSIBLE_HOME=str(tmp_path / "home"), ANSIBLE_COLLECTIONS_PATH=str(tmp_path / "collections"))
    subprocess.run([VENV_BIN / "ansible-galaxy", "collection", "install", "-r", project / "requirements.yml",
                    "-p", tmp_path / "collections"], cwd=elsewhere, env=env, check=True, capture_output=True)
    manifest = tmp_path / "collections" / "ansible_collections" / "deevnet" / "net" / "MANIFEST.json"
    assert json.loads(manifest.read_text())["collection_info"]["version"] == _manifest()["version"]


# Modules that run on the controller only (no Python on the target).
CONTROLLER_ONLY = {"ansible.builtin.debug", "ansible.builtin.set_fact", "ansible.builtin.assert", "ansible.builtin.fail",
                   "ansible.builtin.import_tasks", "ansible.builtin.include_tasks", "ansible.builtin.meta",
                   "ansible.builtin.validate_argument_spec", "ansible.builtin.include_role", "ansible.builtin.pause"}


def test_readme_names_every_python_module_the_role_runs_on_the_target():
    """The README's Requirements say which of the role's tasks need Python on the target: every
    module of ansible.builtin the role runs there, named."""
    requirements = _text("README.md").split("## Requirements", 1)[1].split("\n## ", 1)[0]
    used = set()
    for name in _members():
        if name.startswith("roles/") and re.search(r"/(tasks|handlers)/[^/]+\.ya?ml$", name):
            for task in yaml.safe_load(_text(name)) or []:
                used |= {k for k in task if k.startswith("ansible.builtin.")}
    on_target = used - CONTROLLER_ONLY
    assert {"ansible.builtin.command", "ansible.builtin.template", "ansible.builtin.slurp"} <= on_target, on_target
    for module in sorted(on_target):
        assert f"`{module}`" in requirements, f"the README's Requirements do not say {module} needs Python"


def test_role_synopsis_says_each_node_shape_then_a_colon():
    description = yaml.safe_load(_text("roles/proxmox_node_network/meta/argument_specs.yml"))[
        "argument_specs"]["main"]["description"]
    shapes = [d for d in description if re.match(r"(Exit|Member) node \(", d)]
    assert len(shapes) == 2, description
    for shape in shapes:
        assert re.match(r"(Exit|Member) node \([^()]*(\([^()]*\)[^()]*)*\): ", shape), shape


# --- the repository is self-contained -----------------------------------------------------------

def test_no_tracked_file_reads_the_shared_folder_beside_the_repository():
    """Tests and code read only what the repository holds: the merge vectors and the merge rules
    live in modules/frr_local_stanza/tests/data/pve-merge and docs/proxmox-frr-merge.md."""
    outside = re.compile(r"\.\./(\.\./)*" + "shared" + r"\b|\b" + "shared" + r"/(vectors|reference)\b")
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True).stdout
    hits = []
    for name in filter(None, tracked.decode().split("\0")):
        path = ROOT / name
        if path.is_file() and not path.is_symlink():
            for number, line in enumerate(path.read_bytes().decode(errors="replace").splitlines(), 1):
                if outside.search(line):
                    hits.append(f"{name}:{number}: {line.strip()}")
    assert not hits, "files that point outside the repository:\n" + "\n".join(hits)


# --- the modules' documentation as ansible-doc shows it -----------------------------------------

def test_ansible_doc_shows_each_modules_requirements_fast_path_and_shared_options(ansible_env):
    """The shared documentation comes from the doc fragments, once, into every module's page."""
    files = {"sysctl_forwarding", "frr_local_stanza"}
    for module in ("sysctl_forwarding", "frr_local_stanza", "vrf_route_assert", "qinq_check", "egress_probe",
                   "sdn_check", "bgp_evpn_assert", "qinq_probe", "transit_router_check", "change_guard"):
        proc = subprocess.run([VENV_BIN / "ansible-doc", "--json", f"deevnet.net.{module}"], env=ansible_env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)[f"deevnet.net.{module}"]["doc"]
        assert any("glibc 2.34" in r and "Proxmox VE 8 and 9" in r for r in doc["requirements"]), doc["requirements"]
        assert any("deevnet_net_fast_path" in n for n in doc["notes"]), doc["notes"]
        assert "platform" in doc["attributes"] and "action" in doc["attributes"]
        shared = {"backup", "lock_timeout", "follow_untrusted_links"}
        if module in files:
            assert shared <= set(doc["options"]), module
            assert doc["options"]["lock_timeout"]["default"] == 30
        else:
            assert not shared & set(doc["options"]), module
    proc = subprocess.run([VENV_BIN / "ansible-doc", "--json", "deevnet.net.sysctl_forwarding"], env=ansible_env,
                          capture_output=True, text=True)
    assert "ansible.posix.sysctl" in proc.stdout, "sysctl_forwarding's seealso names the module users compare"
