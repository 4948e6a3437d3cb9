"""Third-party notices (make notices): every crate linked into the module binaries is named in
the tarball's THIRD-PARTY-NOTICES.md with its license and source, and a crate whose license is
not on the allow-list (mk/notices/about.toml, licenses compatible with GPL-3.0-or-later) fails
the build. The rendered notices are committed, so building the collection runs no cargo-about
(make notices-check, in make test, holds the committed file to a fresh render)."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import tarfile
import tomllib

from conftest import ROOT, _tarball, own_make_env

ABOUT = ROOT / "mk" / "notices" / "about.toml"
# Licenses the FSF lists as compatible with GPLv3 (or the collection's own): the allow-list may
# hold only these.
GPL3_COMPATIBLE = {
    "GPL-3.0-or-later", "GPL-3.0-only", "LGPL-3.0-or-later", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "MIT",
    "BSD-2-Clause", "BSD-3-Clause", "ISC", "Zlib", "Unicode-3.0", "Unicode-DFS-2016", "MPL-2.0", "CC0-1.0",
    "Unlicense", "BSL-1.0", "0BSD",
}


def _modules() -> list[str]:
    return sorted(p.parent.parent.name for p in (ROOT / "modules").glob("*/src/main.rs"))


def _linked_registry_crates() -> set[str]:
    """`name version` of every crates.io crate a module binary links (normal dependencies, the
    target's, no build scripts or test-only crates)."""
    args = ["cargo", "tree", "--locked", "-e", "normal", "--prefix", "none", "-f", "{p}",
            "--target", "x86_64-unknown-linux-gnu"]
    for module in _modules():
        args += ["-p", module]
    out = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    crates = set()
    for line in out.splitlines():
        line = line.removesuffix(" (*)").strip()
        if line and "(" not in line:  # a path crate is the collection's own: `name vX (/path)`
            name, version = line.split(" ", 1)
            crates.add(f"{name} {version.removeprefix('v')}")
    return crates


def _notices() -> str:
    with tarfile.open(_tarball()) as tar:
        return tar.extractfile("THIRD-PARTY-NOTICES.md").read().decode()


def test_the_tarballs_notices_name_every_linked_crate_with_its_license_and_source():
    notices = _notices()
    listed = dict(re.findall(r"^- (\S+ \S+): (.+?); source https://crates\.io/crates/", notices, re.M))
    linked = _linked_registry_crates()
    assert len(linked) > 20, linked  # serde, tokio, netlink, ...
    missing = sorted(linked - set(listed))
    assert not missing, f"linked but not in THIRD-PARTY-NOTICES.md: {missing}"
    accepted = set(tomllib.loads(ABOUT.read_text())["accepted"])
    for crate, expression in listed.items():
        assert set(re.split(r"\s+(?:OR|AND)\s+|[()]", expression)) - {""} <= accepted | {
            e for e in accepted if " WITH " in e}, (crate, expression)
    for license_id in ("MIT", "Apache-2.0"):
        assert re.search(rf"^### .*\({re.escape(license_id)}\)$", notices, re.M), license_id
    assert "Permission is hereby granted, free of charge" in notices  # the MIT text, as shipped
    assert "deevnet_runtime" not in notices, "the collection's own crates are not third-party"


def test_the_allow_list_holds_only_licenses_compatible_with_gpl3():
    accepted = tomllib.loads(ABOUT.read_text())["accepted"]
    assert set(accepted) <= GPL3_COMPATIBLE, set(accepted) - GPL3_COMPATIBLE


def _cargo_about_on_a_crate_licensed(tmp_path, license_id: str) -> subprocess.CompletedProcess:
    """make notices' cargo-about run, with the real allow-list, on a two-crate workspace made
    here: a binary under GPL-3.0-or-later linking a library under `license_id` (path crates
    only, so nothing is fetched and no license text needs scanning)."""
    ws = tmp_path / license_id
    for name, manifest, source in (
        ("app", f'license = "GPL-3.0-or-later"\n\n[dependencies]\nlinked = {{ path = "../linked" }}\n', ("main.rs", "fn main() {}\n")),
        ("linked", f'license = "{license_id}"\n', ("lib.rs", "")),
    ):
        (ws / name / "src").mkdir(parents=True)
        (ws / name / "Cargo.toml").write_text(f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n{manifest}')
        (ws / name / "src" / source[0]).write_text(source[1])
    (ws / "Cargo.toml").write_text('[workspace]\nresolver = "2"\nmembers = ["app", "linked"]\n')
    subprocess.run(["cargo", "generate-lockfile", "--offline", "-q"], cwd=ws, check=True, capture_output=True)
    return subprocess.run(["cargo", "about", "generate", "--frozen", "--workspace", "--manifest-path", ws / "Cargo.toml",
                           "-c", ABOUT, "--format", "json"], cwd=ws, capture_output=True, text=True)


def test_a_crate_whose_license_is_not_on_the_allow_list_fails_the_build(tmp_path):
    """SSPL-1.0 is not compatible with the GPL: a linked crate under it fails the notices step,
    naming it; the same crate under MIT passes."""
    refused = _cargo_about_on_a_crate_licensed(tmp_path, "SSPL-1.0")
    assert refused.returncode != 0, refused.stdout[-2000:]
    assert "failed to satisfy license requirements" in refused.stderr and "SSPL-1.0" in refused.stderr, refused.stderr
    allowed = _cargo_about_on_a_crate_licensed(tmp_path, "MIT")
    assert allowed.returncode == 0, allowed.stderr
    assert '"linked"' in allowed.stdout


def test_license_texts_shipped_with_crlf_line_endings_render_with_lf():
    """ansible-test's line-endings check fails the tarball on a single CR (a crate's license
    file written on Windows)."""
    spec = importlib.util.spec_from_file_location("render", ROOT / "mk" / "notices" / "render.py")
    render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render)
    crate = {"name": "hmac", "version": "0.12.1", "source": "registry+https://github.com/rust-lang/crates.io-index"}
    about = {"crates": [{"package": crate | {"license": "MIT"}, "license": "MIT"}],
             "licenses": [{"name": "MIT License", "id": "MIT", "text": "Copyright\r\n\r\nPermission\r\n",
                           "used_by": [{"crate": crate}]}]}
    text = render.render(about)
    assert "\r" not in text
    assert "Copyright\n\nPermission" in text


def test_building_the_collection_neither_installs_nor_runs_cargo_about():
    """make demo builds the collection cold: the committed notices are packed as they are."""
    commands = subprocess.run(["make", "--no-print-directory", "-n", "-B", "collection"], cwd=ROOT, check=True,
                              capture_output=True, text=True, env=own_make_env()).stdout
    assert "cargo about" not in commands and "cargo install" not in commands, commands
    assert str(ROOT / "mk" / "notices" / "THIRD-PARTY-NOTICES.md") in commands, commands
