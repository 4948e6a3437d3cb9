# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Linux interface names by the kernel's rules (dev_valid_name), as the modules check them: the
one check the collection's filters share.

The limit is in bytes, as the kernel counts it: IFNAMSIZ (16) less the terminating NUL, of the
name's UTF-8 encoding. A name of 15 characters can be longer than that."""

from __future__ import annotations

# IFNAMSIZ less the terminating NUL.
MAX_BYTES = 15


def too_long(name: str) -> bool:
    """Whether `name` is over the kernel's limit, counted in bytes as the kernel counts it."""
    return len(name.encode("utf-8", "surrogatepass")) > MAX_BYTES


def interface_name_problem(name) -> str:
    """Why `name` is not a Linux interface name, or "" when it is one; the reason reads after the
    name (`'x' is longer than ...`)."""
    if not isinstance(name, str) or not name:
        return "is not a name"
    if too_long(name):
        return f"is longer than the {MAX_BYTES} bytes of an interface name (UTF-8; the kernel's IFNAMSIZ)"
    if name in (".", ".."):
        return "is . or .., which the kernel refuses"
    for character, why in (("/", "'/'"), (":", "':' (an alias label, not an interface)")):
        if character in name:
            return f"contains {why}, which the kernel refuses in an interface name"
    if any(character.isspace() or not character.isprintable() for character in name):
        return "contains whitespace or a control character, which no interface name holds"
    return ""
