"""ARCHITECTURE.md stays a true map: every repository path it names in backticks exists (a
`<placeholder>` matches at least one path), and every crate, top-level folder, collection
folder, test folder and molecule scenario has a heading of its own. Reads only the repository,
so it needs no build."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
TEXT = ARCHITECTURE.read_text()

# A backticked name is taken for a repository path when it has a folder separator, or ends like a
# file the repository keeps; absolute paths (the node's), home-relative ones, URLs, commands (with
# spaces) and Rust paths are not.
FILE_ENDINGS = (".rs", ".py", ".md", ".yml", ".yaml", ".toml", ".mk", ".sh", ".txt", ".lock", ".json")
PLACEHOLDER = re.compile(r"<[^<>/]+>")


def named_paths(text: str) -> list[tuple[str, str]]:
    """(path, the folder of the section it is named in): a path in a crate's or folder's section
    may be written relative to that folder (`src/lib.rs` under `modules/runtime`)."""
    names, section = [], ""
    for line in text.splitlines():
        if re.match(r"#{1,4} ", line):
            in_heading = re.findall(r"`([^`]+)`", line)
            section = in_heading[0].rstrip("/") if in_heading else ""
        for token in re.findall(r"`([^`\n]+)`", line):
            if " " in token or token.startswith(("/", "~", "$", "http")) or "::" in token:
                continue
            if re.fullmatch(r"\.\w+", token):
                continue  # a file ending, not a file
            if "/" in token or token.endswith(FILE_ENDINGS):
                names.append((token, section))
    return names


def exists(name: str, section: str = "") -> bool:
    for base in ({"", section} if section else {""}):
        candidate = f"{base}/{name}" if base else name
        if PLACEHOLDER.search(candidate):
            if any(ROOT.glob(PLACEHOLDER.sub("*", candidate).rstrip("/"))):
                return True
        elif (ROOT / candidate).exists():
            return True
    return False


def headings(text: str) -> set[str]:
    """The backticked names of every heading, without a trailing slash."""
    found = set()
    for line in text.splitlines():
        if re.match(r"#{2,4} ", line):
            found.update(name.rstrip("/") for name in re.findall(r"`([^`]+)`", line))
    return found


def tracked_top_level_folders() -> set[str]:
    """The repository's top-level folders: git's view when there is one (a checkout's build
    output and caches are not the repository's), else the folders that hold a tracked kind of
    content."""
    try:
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                               check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        files = []
    if files:
        return {f.split("/", 1)[0] for f in files if "/" in f}
    ignored = {"target", "build", "dist", ".git", ".venv", ".venv-core-oldest", ".ansible", ".pytest_cache"}
    return {p.name for p in ROOT.iterdir() if p.is_dir() and p.name not in ignored}


def subfolders(folder: str) -> set[str]:
    return {f"{folder}/{p.name}" for p in (ROOT / folder).iterdir()
            if p.is_dir() and p.name not in ("__pycache__", ".pytest_cache")}


def required_headings() -> set[str]:
    required = tracked_top_level_folders()
    for folder in ("modules", "molecule", "tests", "roles", "collection", "collection/plugins"):
        required |= subfolders(folder)
    required.discard("collection/plugins")  # its five folders have a heading each
    return required


def test_the_path_finder_sees_paths_and_skips_the_rest():
    text = ("`modules/runtime/src/spec.rs` `Makefile` `params.rs` `collection/plugins/action/<module>.py`"
            " `/run/lock` `~/.ansible` `make test` `deevnet_runtime::Failure` `SPEC` `.py`\n"
            "### `modules/runtime`\n`src/spec.rs`\n")
    assert named_paths(text) == [("modules/runtime/src/spec.rs", ""), ("params.rs", ""),
                                 ("collection/plugins/action/<module>.py", ""), ("modules/runtime", "modules/runtime"),
                                 ("src/spec.rs", "modules/runtime")]
    assert exists("collection/plugins/action/<module>.py")
    assert not exists("collection/plugins/action/<module>.rs")
    assert exists("src/spec.rs", "modules/runtime") and not exists("src/spec.rs")
    assert not exists("params.rs")
    assert headings("## Code map\n### `modules/runtime/`\ntext `not/a/heading`\n") == {"modules/runtime"}


def test_every_path_it_names_exists():
    missing = [name for name, section in named_paths(TEXT) if not exists(name, section)]
    assert not missing, "ARCHITECTURE.md names paths that do not exist: " + ", ".join(missing)


@pytest.mark.parametrize("folder", sorted(required_headings()))
def test_every_crate_and_folder_has_its_heading(folder):
    assert folder in headings(TEXT), f"ARCHITECTURE.md has no heading for `{folder}`"


def test_it_stays_a_page():
    assert len(TEXT.splitlines()) <= 250, "ARCHITECTURE.md is a map: each crate's details belong in its own docs"
