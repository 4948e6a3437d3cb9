"""BENCHMARKS.md sections that a run may leave as an earlier run measured them (the tenant play,
the fleet): find one by its title, or replace it in place; and the command line of a script that
measures one section alone."""
from __future__ import annotations

from pathlib import Path


def existing_section(path: Path, title: str) -> str:
    """The section that starts with `title` in an existing BENCHMARKS.md, or ''."""
    text = path.read_text() if path.exists() else ""
    start = text.find(title)
    if start == -1:
        return ""
    end = text.find("\n## ", start + len(title))
    return text[start:] if end == -1 else text[start:end + 1]


def update_section(path: Path, title: str, section: str) -> str:
    """Replaces the section that starts with `title`, or appends it; returns the new text."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    section = section.rstrip("\n") + "\n"
    start = text.find(title)
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + len(title))
        text = text[:start] + section + ("" if end == -1 else "\n" + text[end + 1:])
    path.write_text(text)
    return text


def command_line(description: str, title: str, measure, section, script: str, rounds: int) -> None:
    """A section script's command line: `--rounds`, and `--output` for the BENCHMARKS.md whose
    section `title` it replaces (or appends); the section is printed either way."""
    import argparse
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--output", help="BENCHMARKS.md to update in place (its other sections stay)")
    options = parser.parse_args()
    text = section(measure(options.rounds), f"bench/{script} --rounds {options.rounds}")
    if options.output:
        update_section(Path(options.output), title, text)
    print(text)
