"""The docs a newcomer reads first, short enough to read: the collection README opens with a quick
start on one screen and leaves the fast path's internals to a docs page; the modules' ansible-doc
share no long block of notes and egress_probe gets to its options quickly; the role's README opens
with a quick start, lists every file the role writes with its rollback (whose commands work as
written), and `ansible-doc -t role` is short; and what the docs say about check mode and diff mode
is what each module's code does."""
from __future__ import annotations

import json
import re
import shlex
import subprocess

import yaml

from conftest import ROOT, VENV_BIN

COLLECTION_README = ROOT / "collection" / "README.md"
ROLE_DIR = ROOT / "roles" / "proxmox_node_network"
ROLE_README = ROLE_DIR / "README.md"
MODULES = sorted(path.stem for path in (ROOT / "collection" / "plugins" / "modules").glob("*.py"))


def sections(markdown: str) -> list[tuple[str, str]]:
    """The level-2 sections of a Markdown text, (title, body), in order (code blocks skipped)."""
    found, title, body, fenced = [], None, [], False
    for line in markdown.splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("## ") and not fenced:
            if title is not None:
                found.append((title, "\n".join(body)))
            title, body = line[3:].strip(), []
        elif title is not None:
            body.append(line)
    if title is not None:
        found.append((title, "\n".join(body)))
    return found


def rendered_lines(body: str) -> list[str]:
    """A section's lines as a reader sees them: no HTML comments, no blank lines at its ends."""
    return [line for line in body.strip().splitlines() if not line.startswith("<!--")]


def ansible_doc(env: dict, *args: str) -> str:
    proc = subprocess.run([VENV_BIN / "ansible-doc", *args], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# --- the collection README ------------------------------------------------------------------------

def test_the_collection_readme_opens_with_a_quick_start_that_fits_one_screen():
    readme = COLLECTION_README.read_text()
    title, body = sections(readme)[0]
    assert title == "Quick start", f"the first section is {title!r}"
    lines = rendered_lines(body)
    assert len(lines) <= 45, f"the quick start is {len(lines)} lines"
    assert max(len(line) for line in lines) <= 100
    for needed in ("ansible-galaxy collection install", "--check --diff", "hosts.yml", "site.yml"):
        assert needed in body, needed
    assert len(readme.split()) <= 1850, f"the README is {len(readme.split())} words"


def test_the_fast_path_s_internals_are_on_a_docs_page_the_readme_links():
    readme = COLLECTION_README.read_text()
    page = (ROOT / "docs" / "fast-path.md").read_text()
    assert "(docs/fast-path.md)" in readme
    for internal in ("stat stamp", "private temp folder", "ansible_system_tmpdirs", "mitogen_linear",
                     "DEEVNET_NET_CACHE_DIR", "ansible-builder"):
        assert internal not in readme, f"the README still explains {internal!r}"
        assert internal in page, f"docs/fast-path.md does not explain {internal!r}"
    fast_path = dict(sections(readme))["The fast path"]
    assert len(fast_path.split()) <= 80, fast_path


# --- the modules' ansible-doc ---------------------------------------------------------------------

def notes_lines(text: str) -> set[str]:
    """The lines of the NOTES section of a module's ansible-doc text."""
    notes = re.search(r"^NOTES:\n(.*?)^\S", text, re.S | re.M)
    assert notes, text[:500]
    return {line.strip() for line in notes[1].splitlines() if line.strip()}


def test_no_block_of_notes_repeats_in_every_module_s_ansible_doc(ansible_env):
    shared = set.intersection(*(notes_lines(ansible_doc(ansible_env, f"deevnet.net.{m}")) for m in MODULES))
    # The fast path's one note, which links the page that holds the rest.
    assert len(shared) <= 8, "\n".join(sorted(shared))
    assert any("docs/fast-path.md" in line for line in shared), shared


def test_egress_probe_s_description_gets_to_its_options_quickly(ansible_env):
    text = ansible_doc(ansible_env, "deevnet.net.egress_probe")
    before_options = text.split("\nOPTIONS", 1)[0].splitlines()
    assert len(before_options) <= 40, f"{len(before_options)} lines before the first option"
    assert "docs/egress-probe.md" in " ".join(text.split())
    page = (ROOT / "docs" / "egress-probe.md").read_text()
    for depth in ("RFC 1812", "blocked_by", "start_at", "dvprobe4000000", "1023 ports"):
        assert depth in page, depth


# --- check mode and diff mode, as the code has them -----------------------------------------------

def module_sources(module: str) -> str:
    return "\n".join(path.read_text() for path in sorted((ROOT / "modules" / module / "src").rglob("*.rs")))


def code_supports(module: str) -> dict[str, bool]:
    """What the module's Rust does: check mode when its spec says supports_check_mode: true (the
    runtime skips the module in check mode otherwise); diff mode when it builds a FileDiff (the
    only before/after the runtime returns as `diff`)."""
    source = module_sources(module)
    return {"check_mode": re.search(r"supports_check_mode:\s*true", source) is not None,
            "diff_mode": re.search(r"\bFileDiff(::\w+\(|\s*\{)", source) is not None}


def test_the_code_derived_list_sees_both_kinds_of_module():
    assert code_supports("sysctl_forwarding") == {"check_mode": True, "diff_mode": True}
    assert code_supports("vrf_route_assert") == {"check_mode": True, "diff_mode": False}


def test_each_module_s_attributes_say_what_its_code_does(ansible_env):
    for module in MODULES:
        doc = json.loads(ansible_doc(ansible_env, "--json", f"deevnet.net.{module}"))[f"deevnet.net.{module}"]["doc"]
        for attribute, supported in code_supports(module).items():
            assert doc["attributes"][attribute]["support"] == ("full" if supported else "none"), (module, attribute)


def test_the_readmes_say_which_modules_show_a_diff():
    diff_modules = sorted(m for m in MODULES if code_supports(m)["diff_mode"])
    assert len(diff_modules) < len(MODULES)
    claim = re.compile(r"Diff mode shows the files and\s+settings\s+changed by ((?:`\w+`(?:,\s+|\s+and\s+)?)+)")
    for readme in (COLLECTION_README, ROOT / "README.md"):
        text = readme.read_text()
        assert not re.search(r"[Ee]very module supports check mode and diff mode", text), readme
        said = claim.search(text)
        assert said, f"{readme.name} does not say which modules show a diff"
        assert sorted(re.findall(r"`(\w+)`", said[1])) == diff_modules, (readme, said[0])
    for page in [*(ROOT / "docs").glob("*.md"), ROOT / "collection" / "CONTRIBUTING.md", ROLE_README]:
        assert not re.search(r"supports check mode and diff mode", page.read_text()), page


# --- the role's README and ansible-doc -t role ----------------------------------------------------

def files_the_role_writes() -> set[str]:
    """Every file or folder the role's tasks write, from their `dest:` and `path:` (a variable
    resolved by the role's defaults)."""
    defaults = yaml.safe_load((ROLE_DIR / "defaults" / "main.yml").read_text())
    written = {value for name, value in defaults.items()
               if isinstance(value, str) and value.startswith("/") and name.endswith(("_path", "_record"))}
    for path in (ROLE_DIR / "tasks").glob("*.yml"):
        for task in yaml.safe_load(path.read_text()) or []:
            for module, args in task.items():
                if module.startswith("ansible.builtin.") and isinstance(args, dict):
                    for key in ("dest", "path"):
                        value = str(args.get(key, ""))
                        variable = re.fullmatch(r"\{\{\s*(\w+)\s*\}\}", value)
                        written.add(defaults[variable[1]] if variable else value)
                if module.startswith("deevnet.net.") and isinstance(args, dict):
                    for key in ("path", "owner_record"):
                        variable = re.fullmatch(r"\{\{\s*(\w+)\s*\}\}", str(args.get(key, "")))
                        if variable:
                            written.add(defaults[variable[1]])
    return {path for path in written if path.startswith("/")}


def test_the_role_s_readme_lists_every_file_it_writes_with_its_rollback():
    readme = dict(sections(ROLE_README.read_text()))
    table = [row for row in readme["Files the role writes"].splitlines() if row.startswith("| `")]
    listed = {}
    for row in table:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 4 and all(cells), f"a row needs the file, owner and mode, when, roll back: {row}"
        for path in re.findall(r"`(/[^`]+)`", cells[0]):
            listed[path] = cells
    written = files_the_role_writes()
    assert {"/etc/sysctl.d/90-deevnet-tenant-fabric.conf", "/etc/udev/rules.d/70-deevnet-qinq-txvlan-off.rules",
            "/etc/systemd/system/deevnet-guest-vlan.service"} <= written, written
    assert not written - set(listed), f"not in the table: {sorted(written - set(listed))}"
    rollback = readme["Rollback"]
    assert "```sh" in rollback and "deevnet.net.frr_local_stanza" in rollback and "state=absent" in rollback


def test_the_role_s_readme_opens_with_a_quick_start_and_is_shorter():
    text = ROLE_README.read_text()
    title, body = sections(text)[0]
    assert title == "Quick start"
    assert "--check --diff" in body and "proxmox_node_network_tenant_egress:" in body
    assert len(rendered_lines(body)) <= 40
    assert len(text.split()) <= 3000, f"the role's README is {len(text.split())} words"


def test_ansible_doc_of_the_role_is_short(ansible_env):
    text = ansible_doc(ansible_env, "-t", "role", "deevnet.net.proxmox_node_network")
    assert len(text.splitlines()) <= 1000, f"{len(text.splitlines())} lines"


def rollback_command(module: str) -> list[str]:
    """The Rollback section's ad hoc command that runs `module`, as argv."""
    block = dict(sections(ROLE_README.read_text()))["Rollback"].split("```sh\n", 1)[1].split("```", 1)[0]
    return next(argv for argv in (shlex.split(line, comments=True) for line in block.splitlines())
                if f"deevnet.net.{module}" in argv)


def test_the_rollback_commands_take_back_what_the_role_wrote_and_nothing_else(node, ansible_env, tmp_path):
    """The README's own ad hoc commands, aimed at temp files: the role's stanzas go, the
    operator's stay; the forwarding file goes."""
    conf, record = tmp_path / "frr.conf.local", tmp_path / "state" / "frr-local-owners.json"
    operator = "vrf vrf_other\n ip route 0.0.0.0/0 10.20.50.7 nexthop-vrf default\nexit\n!\n"
    conf.write_text(operator)
    owner = "deevnet.net.proxmox_node_network"
    role_wrote = {"path": str(conf), "owner": owner, "owner_record": str(record),
                  "stanzas": [{"header": "vrf vrf_tdemo", "lines": ["ip route 0.0.0.0/0 10.20.50.1 nexthop-vrf default"]}]}
    adhoc = [str(VENV_BIN / "ansible"), "localhost", "-c", "local", "-o"]
    proc = node.run(ansible_env, *adhoc, "-m", "deevnet.net.frr_local_stanza", "-a", json.dumps(role_wrote))
    assert "CHANGED" in proc.stdout and "vrf_tdemo" in conf.read_text(), proc.stdout + proc.stderr

    argv = rollback_command("frr_local_stanza")
    args = json.loads(argv[argv.index("-a") + 1])
    assert args["owner"] == owner and args["stanzas"] == []
    proc = node.run(ansible_env, *adhoc, "-m", "deevnet.net.frr_local_stanza",
                    "-a", json.dumps({**args, "path": str(conf), "owner_record": str(record)}))
    assert "CHANGED" in proc.stdout, proc.stdout + proc.stderr
    assert conf.read_text() == operator

    persisted = f"path={node.conf} apply=false sysctl_dirs={node.etc},{node.usr}"
    proc = node.run(ansible_env, *adhoc, "-m", "deevnet.net.sysctl_forwarding", "-a", persisted)
    assert node.conf.exists(), proc.stdout + proc.stderr
    argv = rollback_command("sysctl_forwarding")
    proc = node.run(ansible_env, *adhoc, "-m", "deevnet.net.sysctl_forwarding",
                    "-a", f"{argv[argv.index('-a') + 1]} path={node.conf} sysctl_dirs={node.etc},{node.usr}")
    assert "CHANGED" in proc.stdout and not node.conf.exists(), proc.stdout + proc.stderr
