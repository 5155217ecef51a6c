"""Pausing Python's cyclic garbage collector around one bounded burst of allocation.

Reading a 10^5-task scenario or running one rebalance of it allocates a few million small objects (JSON
dicts and lists, TaskInfos, task sets, AssignedTasks) and frees almost none of them: exactly the pattern
for which the generational collector keeps scanning survivors without finding garbage; pausing it
roughly halves the CPU of reading and of the rebalance (docs/performance.md). At the end of a burst its
objects move to the permanent generation (``gc.freeze``): scanning them once more would find nothing.
The engine creates no reference cycles of note, and reference counting still frees every object that
becomes unreachable; only cyclic garbage alive at that moment is kept, until a long-running caller calls
``gc.unfreeze()``.

A long-lived worker that collects after every task (Spark's Python daemon calls ``gc.collect()`` between
tasks) takes ``gc_paused_task`` instead: what is alive when a task starts (the worker's modules, and what
earlier tasks left, already collected) moves to the permanent generation, so the collection after the
task scans only what the task itself left, not the tens of thousands of objects of pyspark, pyarrow and
taskassign again (a large part of a trivial Python task's cost in Spark; docs/pipeline.md).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ("gc_paused", "gc_paused_task")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the body with the cyclic collector off, and restore its state (nesting is fine)."""
    with _collector_off(freeze_after=True):
        yield


@contextmanager
def gc_paused_task() -> Iterator[None]:
    """Run one task of a long-lived worker: what is alive now is frozen (never scanned again), the collector
    is off during the task and on again after it, unfrozen garbage left for the worker's own collection."""
    gc.freeze()
    with _collector_off(freeze_after=False):
        yield


@contextmanager
def _collector_off(*, freeze_after: bool) -> Iterator[None]:
    """The body with the cyclic collector off, its state restored (nesting is fine: an inner pause does
    nothing); ``freeze_after``: what is alive at the end moves to the permanent generation first."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze_after:
            # Everything the burst allocated is still in the youngest generation: re-enabled as it is, the
            # collector's next pass would scan it all once (~0.4 s for the application above). Moved to the
            # permanent generation instead, it is never scanned; it is still freed by reference counting.
            gc.freeze()
        gc.enable()
