"""Kafka's ``balanceTasksOverThreads``: even out tasks per thread after round-robin (``HighAvailabilityTaskAssignor``).

Kafka visits every ordered pair of clients (ProcessId order) in passes until a pass moves nothing,
moving the source's tasks in TaskId order while ``shouldMoveATask`` holds. A pair can only move a task
when the destination carries strictly less load per thread than the source, and during one source's
turn the source's load only falls while a destination's load changes only on its own visit. So the
destinations worth visiting are exactly those lighter than the source when its turn starts (and able
to take one task without inverting the skew); past ``VECTORISE_FROM`` clients they are found with one
vectorised comparison instead of C Python-level checks, and the moves made are exactly Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import islice

import numpy as np

from taskassign.internals.client_state import ClientState

__all__ = ("VECTORISE_FROM", "balance_tasks_over_threads", "moves_allowed", "should_move_a_task")

#: Above this many clients a source's lighter destinations are found with one numpy comparison, else a Python scan.
VECTORISE_FROM = 64
#: Bounds under which ``moves_allowed``'s double arithmetic is exactly its integer form (see there).
_EXACT_COUNTS = 1 << 20
_EXACT_CAPACITY = 1 << 10


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


def moves_allowed(source_count: int, source_capacity: int, destination_count: int, destination_capacity: int) -> int:
    """How many tasks in a row ``should_move_a_task`` lets a source give a destination, from the two counts
    (each move takes one from the source's count and adds one to the destination's; nothing else changes them
    during the pair's visit).

    The skew after m moves is the same double as the proposed skew before the m-th, so each step computes
    one: move while the skew is positive, the next one not negative and strictly smaller.

    With counts up to 2^20 and capacities up to 2^10 every double compares as the exact fraction it rounds (two
    distinct fractions differ by at least 1/(capacity x capacity), far above their rounding) and each move lowers
    the skew by at least 2^-9: the loop then stops exactly at the last m with (source - m) / source_capacity >=
    (destination + m) / destination_capacity, which integer arithmetic gives at once."""
    if (source_count + destination_count <= _EXACT_COUNTS and source_capacity <= _EXACT_CAPACITY
            and destination_capacity <= _EXACT_CAPACITY):
        surplus = source_count * destination_capacity - destination_count * source_capacity
        return surplus // (source_capacity + destination_capacity) if surplus > 0 else 0
    moves = 0
    skew = source_count / source_capacity - destination_count / destination_capacity
    while skew > 0:
        moves += 1
        proposed = (source_count - moves) / source_capacity - (destination_count + moves) / destination_capacity
        if proposed < 0 or not proposed < skew:
            return moves - 1
        skew = proposed
    return moves


def balance_tasks_over_threads(
    clients: Sequence[ClientState],
    standby: bool,
    allowed: Callable[[ClientState, ClientState], bool] | None = None,
) -> None:
    """Move active (or standby) tasks between clients until no pair of clients can improve.

    ``allowed(source, destination)`` is the standby assignor's movement predicate (None: always).
    Loads count active and standby tasks in both cases, as in Kafka.

    Kafka's inner loop asks ``shouldMoveATask`` before each of the source's tasks (TaskId order) and moves
    the task unless the destination holds it; only a move changes the two counts. So a pair moves the
    first ``moves_allowed`` tasks the destination does not hold, and the source's tasks are sorted once per
    source turn (they only shrink during it).

    Balancing actives before any standby exists (the assignor's first call), no destination can hold a task
    of the source: a pair then moves the next ``moves_allowed`` tasks of the source's sorted list, a slice,
    with no membership test per task.
    """
    counts = [c.assigned_count() for c in clients]
    # every task held by one client in one role: nothing a destination holds can be among the source's tasks
    disjoint = (not standby and not any(c.standby for c in clients)
                and len(set().union(*(c.active for c in clients))) == sum(counts))
    #: (disjoint) per client, its tasks sorted as ``ordered[start:]`` of its last turn, while it has taken none since
    still_sorted: list[tuple[list[int], int] | None] = [None] * len(clients)
    capacities = [c.capacity for c in clients]
    count_array = np.array(counts, dtype=np.float64)
    capacity_array = np.array(capacities, dtype=np.float64)
    loads = np.array([c.assigned_load() for c in clients], dtype=np.float64)
    load_list = loads.tolist()
    # per client, its load after taking one more task: a source whose load after giving one is below every
    # client's has no destination (what most turns of the last passes find)
    taking_one = [(n + 1) / k for n, k in zip(counts, capacities, strict=True)]
    # numpy's per-call cost beats a Python scan only past a few dozen clients (a fleet's applications have 10-60)
    vectorised = len(clients) > VECTORISE_FROM
    everyone = range(len(clients))
    moved_any = True
    while moved_any:
        moved_any = False
        lightest = min(load_list, default=0.0)
        least_taking_one = min(taking_one, default=0.0)
        for source in clients:
            s = source.index
            if load_list[s] <= lightest:
                continue  # nobody is lighter: no move from this source
            if (counts[s] - 1) / capacities[s] < least_taking_one:
                continue  # one move would invert the skew with any destination
            # lighter, and one move would not invert the skew: (source - 1) / capacity only falls during the turn
            giving_one = (counts[s] - 1) / capacities[s]
            lighter: Iterable[int]
            if vectorised:
                lighter = np.flatnonzero((loads < loads[s]) & (giving_one - (count_array + 1) / capacity_array >= 0)
                                         ).tolist()
            else:  # (a - b >= 0 exactly when a >= b, for doubles)
                heavy = load_list[s]
                lighter = [d for d in everyone if load_list[d] < heavy and giving_one >= taking_one[d]]
            own = source.standby if standby else source.active
            ordered: list[int] = []
            start = -1  # ordered[:start] have all been given away (-1: not sorted yet)
            if disjoint and still_sorted[s] is not None:  # it only gave since its last turn
                ordered, start = still_sorted[s]  # type: ignore[misc]
            for d in lighter:
                giving_one = (counts[s] - 1) / capacities[s]
                if giving_one < taking_one[d]:  # the first move would invert the skew: moves_allowed's 0
                    if giving_one < least_taking_one:
                        break  # nor with any later destination: the source only gets lighter
                    continue
                allowance = moves_allowed(counts[s], capacities[s], counts[d], capacities[d])
                if not allowance:
                    continue
                destination = clients[d]
                if allowed is not None and not allowed(source, destination):
                    continue
                if start < 0:
                    ordered, start = sorted(own), 0
                if disjoint:  # own is exactly ordered[start:]: the pair moves its next tasks
                    given = ordered[start:start + allowance]
                    start += len(given)
                    gained = destination.active
                    still_sorted[d] = None
                else:
                    while start < len(ordered) and ordered[start] not in own:
                        start += 1
                    gained = destination.standby if standby else destination.active
                    other = destination.active if standby else destination.standby
                    given = []
                    for task in islice(ordered, start, None):
                        if task in own and task not in gained and task not in other:
                            given.append(task)
                            if len(given) == allowance:
                                break
                if given:
                    own.difference_update(given)
                    gained.update(given)
                    counts[s] -= len(given)
                    counts[d] += len(given)
                    taking_one[s] = (counts[s] + 1) / capacities[s]
                    taking_one[d] = (counts[d] + 1) / capacities[d]
                    least_taking_one = min(least_taking_one, taking_one[s])  # a lower bound until the next pass
                    moved_any = True
                load_list[s] = counts[s] / capacities[s]  # ClientState.assigned_load, from the counts
                load_list[d] = counts[d] / capacities[d]
                if vectorised:  # (the arrays only the numpy scan reads)
                    count_array[s], count_array[d] = counts[s], counts[d]
                    loads[s], loads[d] = load_list[s], load_list[d]
                lightest = min(lightest, load_list[s])
            if start >= 0:
                still_sorted[s] = (ordered, start)
