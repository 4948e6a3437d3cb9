"""THIRD-PARTY-NOTICES.md from cargo-about's JSON (make notices): every crate from a registry
that the module binaries link, with its version, license, source and the license text as the
crate ships it. The collection's own crates (path dependencies, GPL-3.0-or-later, COPYING) are
not third-party and are left out."""
from __future__ import annotations

import json
import sys

HEADER = """# Third-party notices

The module binaries in `plugins/plugin_utils/_bin/` are compiled from the collection's own Rust
crates (GNU GPL v3.0 or later, see `COPYING`) and statically link the crates below, each under
its own license. For each crate: its version, its license, where its source is, and the license
text as the crate ships it. Rendered by cargo-about from the lock file the binaries are built from.

The corresponding source of the binaries is the collection's source repository (the
`repository` address in `MANIFEST.json`) at this release's version, with each crate below at
the version named, as published on crates.io (`https://crates.io/crates/<name>/<version>`).
"""


def third_party(crate: dict) -> bool:
    # A path dependency (the collection's own crates) has no source.
    return bool(crate.get("source"))


def render(about: dict) -> str:
    out = [HEADER]
    crates = sorted({(c["package"]["name"], c["package"]["version"]): c for c in about["crates"]
                     if third_party(c["package"])}.values(), key=lambda c: (c["package"]["name"], c["package"]["version"]))
    out.append(f"## Crates ({len(crates)})\n")
    for c in crates:
        p = c["package"]
        line = f"- {p['name']} {p['version']}: {c['license']}; source https://crates.io/crates/{p['name']}/{p['version']}"
        if p.get("repository"):
            line += f" (repository {p['repository']})"
        out.append(line)
    out.append("\n## License texts\n")
    for lic in about["licenses"]:
        users = sorted({f"{u['crate']['name']} {u['crate']['version']}" for u in lic["used_by"] if third_party(u["crate"])})
        if not users:
            continue
        out.append(f"### {lic['name']} ({lic['id']})\n")
        out.append("Used by: " + ", ".join(users) + "\n")
        # Some crates ship their license with CRLF line endings; the collection's files use LF.
        text = lic["text"].replace("\r\n", "\n").replace("\r", "\n")
        out.append("```text\n" + text.replace("```", "'''").rstrip() + "\n```\n")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        sys.stdout.write(render(json.load(f)))
