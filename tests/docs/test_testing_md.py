"""TESTING.md stays a true index from behaviour to test: every test it names exists, in the file
it names (or its section's default file), as a Rust `fn` or a Python `def`. Reads only the
repository, so it needs no build."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTING = ROOT / "TESTING.md"
CRATES = {path.name for path in (ROOT / "modules").iterdir() if (path / "Cargo.toml").exists()}
# A section about a crate: its heading is the crate's name, or names it in parentheses.
SECTION_CRATE = re.compile(r"^## (\w+)$|^## .*\((?:the )?(\w+)\)$")
TEST_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def resolve(token: str, crate: str | None) -> list[Path]:
    """A path as TESTING.md writes it (its preamble says how; `*` for every crate) -> the
    repository's files, none when there is no such file."""
    if token.startswith("ansible/"):
        token = f"tests/{token}"
    elif crate and token.startswith("it/"):
        token = f"modules/{crate}/tests/{token}"
    elif crate and token.startswith(("src/", "tests/")):
        token = f"modules/{crate}/{token}"
    elif token.startswith("*/"):
        token = f"modules/{token}"
    return sorted(ROOT.glob(token)) if "*" in token else [ROOT / token] if (ROOT / token).exists() else []


def defines(path: Path, name: str) -> bool:
    return bool(re.search(rf"\b(?:fn|def) {re.escape(name)}\b", path.read_text()))


def named_tests() -> list[tuple[int, str, list[Path], str]]:
    """(line, path as written, its files, test name) of every test TESTING.md names in a table's
    test column. A crate's name in a row sets the crate its paths are relative to."""
    section_crate, default, found = None, None, []
    for number, line in enumerate(TESTING.read_text().splitlines(), 1):
        if line.startswith("## "):
            match = SECTION_CRATE.match(line)
            name = next((g for g in match.groups() if g), None) if match else None
            section_crate = name if name in CRATES else None
            default = None
            continue
        said = re.match(r"A test without a file is in `([^`]+)`", line)
        if said:
            default = said[1]
            continue
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = line.rstrip("|").split("|")
        if len(cells) < 3:
            continue
        crate, current = section_crate, default
        for token in re.findall(r"`([^`]+)`", cells[-1]):
            if token in CRATES:
                crate, current = token, None
            elif "/" in token or token.endswith((".rs", ".py", ".yml", ".sh")):
                current = token
            elif " " in token:
                current = None  # a command (`make fuzz`): the names after it are its targets
            elif current and current.endswith((".rs", ".py")) and TEST_NAME.fullmatch(token):
                found.append((number, current, resolve(current, crate), token))
    return found


def test_testing_md_names_tests_in_files_that_exist():
    missing = sorted({f"line {n}: `{written}`" for n, written, paths, _ in named_tests() if not paths})
    assert not missing, "\n".join(missing)


def test_every_test_testing_md_names_is_defined_where_it_says():
    named = named_tests()
    assert len(named) > 300, len(named)
    missing = [f"line {n}: `{written}` has no test `{name}`" for n, written, paths, name in named
               if not all(defines(path, name) for path in paths)]
    assert not missing, "\n".join(missing)


def test_testing_md_is_a_short_index_without_history():
    """Under 80,000 bytes (thirteen crates, three roles, a row per attack id), with no issue number and no
    "was:" note: what a test proves today."""
    text = TESTING.read_text()
    assert len(text.encode()) < 80_000, len(text.encode())
    history = [f"line {n}: {line}" for n, line in enumerate(text.splitlines(), 1)
               if re.search(r"\bissue \d+|#\d+|\bwas:", line, re.IGNORECASE)]
    assert not history, "\n".join(history)
