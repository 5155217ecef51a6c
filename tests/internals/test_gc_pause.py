"""The collector pauses: a burst's objects end up frozen, a worker task's predecessors do."""

from __future__ import annotations

import gc

from taskassign.internals.gc_pause import gc_paused, gc_paused_task


def test_gc_paused_freezes_the_burst_and_restores_the_collector() -> None:
    gc.unfreeze()
    try:
        with gc_paused():
            assert not gc.isenabled()
            kept = [[n] for n in range(1_000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() >= len(kept)
    finally:
        gc.unfreeze()


def test_gc_paused_task_freezes_what_was_alive_before_and_leaves_the_task_collectable() -> None:
    gc.unfreeze()
    before = [[n] for n in range(1_000)]
    try:
        with gc_paused_task():
            frozen = gc.get_freeze_count()
            assert frozen >= len(before)
            assert not gc.isenabled()
            during = [[n] for n in range(1_000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() <= frozen  # the task's own objects are not frozen
        assert any(obj is during for obj in gc.get_objects())
    finally:
        gc.unfreeze()


def test_gc_paused_task_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with gc_paused_task():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
