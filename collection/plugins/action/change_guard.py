# -*- coding: utf-8 -*-
# Copyright (c) 2026 deevnet.net contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""deevnet.net.change_guard runs its binary through the collection's fast path (see
plugins/plugin_utils/binary_module.py): one action plugin per module, named like it."""

from __future__ import annotations

from ansible_collections.deevnet.net.plugins.plugin_utils.binary_module import BinaryModuleAction


class ActionModule(BinaryModuleAction):
    pass
