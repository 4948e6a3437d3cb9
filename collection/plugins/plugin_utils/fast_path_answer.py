# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the fast path's target side answers, defined once for both of its paths: the remote
script (binary_module.REMOTE_SCRIPT, built from these markers) and the mitogen target side
(mitogen_target.run_cached). Both answer in one shape, answer(); the plugin interprets it in one
place (BinaryModuleAction._interpret).

Only the standard library: mitogen ships this file to the target with mitogen_target.py.
"""

from __future__ import annotations

# Each marker is what the target prints (remote script) or returns (mitogen) instead of a
# module result. The names are the remote script's placeholders: @MISS@ in its text.
MARKERS = {
    "MISS": "DEEVNET_NET_CACHE_MISS",
    "UNSAFE": "DEEVNET_NET_UNSAFE_CACHE",
    "MISMATCH": "DEEVNET_NET_HASH_MISMATCH",
    "NO_SHA256SUM": "DEEVNET_NET_NO_SHA256SUM",
    "NO_PROC": "DEEVNET_NET_NO_PROC",
    "NOEXEC": "DEEVNET_NET_NOEXEC",
    "UNSUPPORTED": "DEEVNET_NET_UNSUPPORTED",
    # The private temp folder step: the folder made, or why no candidate was private.
    "PRIVATE_TMP": "DEEVNET_NET_PRIVATE_TMP",
    "UNSAFE_TMP": "DEEVNET_NET_UNSAFE_TMP",
}
MISS = MARKERS["MISS"]
UNSAFE = MARKERS["UNSAFE"]
MISMATCH = MARKERS["MISMATCH"]
NO_SHA256SUM = MARKERS["NO_SHA256SUM"]
NO_PROC = MARKERS["NO_PROC"]
NOEXEC = MARKERS["NOEXEC"]
UNSUPPORTED = MARKERS["UNSUPPORTED"]
PRIVATE_TMP = MARKERS["PRIVATE_TMP"]
UNSAFE_TMP = MARKERS["UNSAFE_TMP"]


def answer(marker=None, detail="", rc=None, stdout=b"", stderr=b"", more=""):
    """The one shape of a fast-path answer. `marker` is None when the module ran (rc, stdout,
    stderr are its own), else one of MARKERS with its `detail` (and `more`, further lines).
    A plain dict: mitogen carries it back from the target, where only basic types pass."""
    return {"marker": marker, "detail": detail, "more": more, "rc": rc, "stdout": stdout, "stderr": stderr}


def from_shell(res):
    """The remote script's output (_low_level_execute_command's dict) as an answer: a marker
    opens its first line, its detail follows on that line, and any further lines are `more`;
    anything else is the module's own output."""
    stdout = res.get("stdout", "")
    first, rest = (stdout.strip().split("\n", 1) + [""])[:2]
    marker, detail = (first.split(" ", 1) + [""])[:2]
    if marker in MARKERS.values():
        return answer(marker, detail.strip(), more=rest.strip())
    return answer(None, "", res.get("rc"), stdout, res.get("stderr", ""))
