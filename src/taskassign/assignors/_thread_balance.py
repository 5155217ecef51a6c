"""Kafka's ``balanceTasksOverThreads``: even out tasks per thread after round-robin (``HighAvailabilityTaskAssignor``).

Kafka visits every ordered pair of clients (ProcessId order) in passes until a pass moves nothing,
moving the source's tasks in TaskId order while ``shouldMoveATask`` holds. A pair can only move a task
when the destination carries strictly less load per thread than the source, and during one source's
turn the source's load only falls while a destination's load changes only on its own visit. So the
destinations worth visiting are exactly those lighter than the source when its turn starts; they are
found with one vectorised comparison instead of C Python-level checks, and the moves made are
exactly Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from taskassign.internals.client_state import ClientState

__all__ = ("balance_tasks_over_threads", "should_move_a_task")


def should_move_a_task(source: ClientState, destination: ClientState) -> bool:
    """Kafka's formula, in doubles: move one task if it lowers the per-thread skew without inverting it."""
    source_count, destination_count = source.assigned_count(), destination.assigned_count()
    skew = source_count / source.capacity - destination_count / destination.capacity
    if skew <= 0:
        return False
    proposed = (source_count - 1) / source.capacity - (destination_count + 1) / destination.capacity
    if proposed < 0:
        return False
    return proposed < skew


def balance_tasks_over_threads(
    clients: Sequence[ClientState],
    standby: bool,
    allowed: Callable[[ClientState, ClientState], bool] | None = None,
) -> None:
    """Move active (or standby) tasks between clients until no pair of clients can improve.

    ``allowed(source, destination)`` is the standby assignor's movement predicate (None: always).
    Loads count active and standby tasks in both cases, as in Kafka.
    """
    loads = np.array([c.assigned_load() for c in clients], dtype=np.float64)
    load_list = loads.tolist()
    moved_any = True
    while moved_any:
        moved_any = False
        lightest = min(load_list, default=0.0)
        for source in clients:
            if load_list[source.index] <= lightest:
                continue  # nobody is lighter: no move from this source
            lighter = np.flatnonzero(loads < loads[source.index])
            for d in lighter.tolist():
                destination = clients[d]
                if not should_move_a_task(source, destination):
                    continue
                if allowed is not None and not allowed(source, destination):
                    continue
                own = source.standby if standby else source.active
                for task in sorted(own):
                    if not should_move_a_task(source, destination):
                        break
                    if not destination.has_assigned(task):
                        own.remove(task)
                        if standby:
                            destination.assign_standby(task)
                        else:
                            destination.assign_active(task)
                        moved_any = True
                loads[source.index] = load_list[source.index] = source.assigned_load()
                loads[d] = load_list[d] = destination.assigned_load()
                lightest = min(lightest, load_list[source.index])
