from __future__ import annotations

import pytest

from taskassign.assignors.state_aware.weights import task_weights
from taskassign.model import TaskInfo
from tests.helpers import task, tid


def test_state_bytes_become_units_of_the_mean_stateful_task() -> None:
    tasks = [task("0_0", state_bytes=3_000), task("0_1", state_bytes=1_000), task("1_0", stateful=False)]
    w = task_weights(tasks, stateless_task_weight=0.25)
    assert w.mode == "bytes" and w.unit == 2_000
    assert w.state == (1.5, 0.5, 0.0)
    assert w.active == (1.5, 0.5, 0.25)  # the stateless task weighs the configured fraction of a mean task


def test_without_bytes_the_stores_count() -> None:
    two_stores = TaskInfo(tid("0_0"), ("a", "b"))
    one_store = TaskInfo(tid("0_1"), ("a",))
    w = task_weights([two_stores, one_store], stateless_task_weight=0.1)
    assert w.mode == "stores" and w.unit == 1.5
    assert w.state == pytest.approx((4 / 3, 2 / 3))


def test_a_task_without_bytes_gets_the_mean_bytes_per_store_of_the_others() -> None:
    given = TaskInfo(tid("0_0"), ("a", "b"), state_bytes=800)  # 400 bytes per store
    missing = TaskInfo(tid("0_1"), ("a",))
    w = task_weights([given, missing], stateless_task_weight=0.1)
    assert w.mode == "bytes"
    assert [w.raw(s) for s in w.state] == pytest.approx([800, 400])


def test_empty_state_weighs_nothing_and_describes_itself() -> None:
    w = task_weights([task("0_0", state_bytes=0), task("0_1", state_bytes=2_500_000_000)], 0.1)
    assert w.state[0] == 0.0
    assert w.describe(1.0) == "2.5 GB" and w.describe(0.0004) == "1.0 MB"
