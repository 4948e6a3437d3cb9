# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The advice for reloading a node's interfaces, in the words of reload_advice.txt beside this
file: the one text every fix that reloads gives, the filters' through this module and the Rust
modules' through the runtime, which includes the same file.

The Cozystack guide warns that a bare reload of every interface on a host whose interfaces file
has stale entries takes down what it should not, so the advice shows first what the reload would
change, refuses stale entries, and ends with the collection's guarded change."""

from __future__ import annotations

from pathlib import Path

ADVICE_FILE = Path(__file__).with_name("reload_advice.txt")
# The file's one placeholder: the node whose network would be reloaded.
NODE = "{node}"
_TEMPLATE = ADVICE_FILE.read_text(encoding="utf-8").strip()


def reload_interfaces(node: str) -> str:
    """The advice for reloading `node`'s interfaces ("hv02", or "this node" on the node itself),
    to follow a fix's own words (`re-create its devices: <advice>`)."""
    return _TEMPLATE.replace(NODE, node)
