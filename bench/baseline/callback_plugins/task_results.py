# -*- coding: utf-8 -*-
# Counts what a play really ran, for bench/tenant_play.py: every module execution on a host
# (each loop item is one, a handler is one), and the tasks that produced them. Writes JSON to
# the file named by DEEVNET_BENCH_TASK_RESULTS when the play ends. Prints nothing.
from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r'''
name: task_results
type: aggregate
short_description: Count module executions and tasks of a play (deevnet.net benchmarks)
description:
  - Writes C({"task_results", "tasks", "changed", "failed"}) to the file named by
    E(DEEVNET_BENCH_TASK_RESULTS) when the play ends. A loop counts one result per item.
requirements:
  - enabled with ANSIBLE_CALLBACKS_ENABLED=task_results
'''


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_results"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.task_results = 0
        self.changed = 0
        self.failed = 0
        self.tasks: set[str] = set()

    def _count(self, result, failed: bool) -> None:
        self.task_results += 1
        self.tasks.add(result._task._uuid)
        self.changed += 1 if result._result.get("changed") else 0
        self.failed += 1 if failed else 0

    @staticmethod
    def _is_loop(result) -> bool:
        return bool(result._task.loop or result._task.loop_with)

    # A looped task reports each item, then once more for the whole loop: count the items only.
    # (A module's own `results` key, as vrf_route_assert's, is no loop.)
    def v2_runner_item_on_ok(self, result):
        self._count(result, failed=False)

    def v2_runner_item_on_failed(self, result):
        self._count(result, failed=True)

    def v2_runner_item_on_skipped(self, result):
        self._count(result, failed=False)

    def v2_runner_on_ok(self, result):
        if not self._is_loop(result):
            self._count(result, failed=False)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        if not self._is_loop(result):
            self._count(result, failed=not ignore_errors)

    def v2_runner_on_skipped(self, result):
        if not self._is_loop(result):
            self._count(result, failed=False)

    def v2_runner_on_unreachable(self, result):
        self._count(result, failed=True)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("DEEVNET_BENCH_TASK_RESULTS")
        if not path:
            return
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"task_results": self.task_results, "tasks": len(self.tasks),
                       "changed": self.changed, "failed": self.failed}, f)
