"""Kafka's ``TaskMovement``: send tasks placed on a client that is not caught up to one that is.

Active movements (assignor spec 4.6) and standby movements (4.7) share a warm-up budget
(``max.warmup.replicas`` per rebalance). Movements are processed fewest-caught-up-clients first, then
by TaskId, in the order of Java's binary heap: one task can have several standby movements with equal
keys, and those leave the heap in heap order (Appendix D), not in insertion order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from taskassign._java_order import priority_queue_poll_order
from taskassign.assignors._client_state import ClientState
from taskassign.assignors._constrained_priority_set import ClientPool, PoolFactory
from taskassign.assignors._lags import TaskLags
from taskassign.ids import TaskId

__all__ = ("WarmupBudget", "assign_active_task_movements", "assign_standby_task_movements")

#: (task, destination client index): the task sits on a client that is not caught up on it.
Movement = tuple[TaskId, int]


class WarmupBudget:
    """``max.warmup.replicas`` shared by active and standby movements (Kafka's AtomicInteger)."""

    __slots__ = ("remaining",)

    def __init__(self, remaining: int) -> None:
        self.remaining = remaining

    def take(self) -> bool:
        """Kafka's ``getAndDecrement() > 0``: decrements even when nothing is left (it may go negative)."""
        available = self.remaining > 0
        self.remaining -= 1
        return available


def _needs_movement(task: TaskId, client: int, lags: TaskLags) -> bool:
    """The client is not caught up, and some client has a strictly lower lag (-3 counts as lowest)."""
    if lags.is_caught_up(client):
        return False
    return lags.lag(lags.most_caught_up()) < lags.lag(client)


def _in_heap_order(movements: list[Movement], lags: Mapping[TaskId, TaskLags]) -> list[Movement]:
    """The movements in the order Java's PriorityQueue keyed by (caught-up clients, task) polls them."""
    keys = [(lags[task].num_caught_up(), task) for task, _ in movements]
    distinct = sorted(set(keys))
    if len(distinct) == len(keys):  # no ties: the heap returns them sorted
        return [m for _, m in sorted(zip(keys, movements, strict=True), key=lambda km: km[0])]
    rank = {key: i for i, key in enumerate(distinct)}
    return [movements[i] for i in priority_queue_poll_order([rank[k] for k in keys])]


def _caught_up_pool(
    clients: Sequence[ClientState], lags: Mapping[TaskId, TaskLags], make_pool: PoolFactory
) -> ClientPool:
    return make_pool(
        lambda c, t: lags[t].is_caught_up(c),
        lambda c: clients[c].assigned_load(),
        lambda t: lags[t].caught_up_clients(),
    )


def _swap_standby_and_active(task: TaskId, source: ClientState, destination: ClientState) -> None:
    source.unassign_standby(task)
    source.assign_active(task)
    destination.unassign_active(task)
    destination.assign_standby(task)


def _move_active_and_try_to_warm_up(
    task: TaskId, source: ClientState, destination: ClientState, budget: WarmupBudget, warmups: set[TaskId]
) -> None:
    source.assign_active(task)
    destination.unassign_active(task)
    if budget.take():
        destination.assign_standby(task)
        warmups.add(task)


def assign_active_task_movements(
    clients: Sequence[ClientState],
    lags: Mapping[TaskId, TaskLags],
    warmups: dict[int, set[TaskId]],
    budget: WarmupBudget,
    make_pool: PoolFactory,
) -> int:
    """Move actives off clients that are not caught up; returns the number of movements scheduled.

    Per movement, in order: swap with a caught-up standby holder; else move to the least loaded
    caught-up client (warm-up on the destination while the budget lasts); else move to the most
    caught-up client. Records the warm-ups created, per client, in ``warmups``.
    """
    pool = _caught_up_pool(clients, lags, make_pool)
    movements: list[Movement] = []
    for client in clients:
        for task in sorted(client.active):
            if _needs_movement(task, client.index, lags[task]):
                movements.append((task, client.index))
        pool.offer(client.index)

    for task, dest in _in_heap_order(movements, lags):
        destination = clients[dest]

        def holds_standby(c: int, t: TaskId = task) -> bool:
            return t in clients[c].standby

        source = pool.poll(task, holds_standby)  # a: a caught-up standby takes over, no warm-up needed
        swap = source is not None
        if source is None:
            source = pool.poll(task)  # b: the least loaded caught-up client
        if source is None:  # c: the most caught-up client (the enqueue condition guarantees one)
            source = lags[task].most_caught_up()
            if source == dest:
                raise AssertionError(f"no client is more caught up on {task} than the planned one")
            swap = task in clients[source].standby
        if swap:
            _swap_standby_and_active(task, clients[source], destination)
        else:
            _move_active_and_try_to_warm_up(
                task, clients[source], destination, budget, warmups.setdefault(dest, set()))
        pool.offer_all((source, dest))
    return len(movements)


def assign_standby_task_movements(
    clients: Sequence[ClientState],
    lags: Mapping[TaskId, TaskLags],
    warmups: Mapping[int, set[TaskId]],
    budget: WarmupBudget,
    make_pool: PoolFactory,
) -> int:
    """Move standbys off clients that are not caught up (warm-ups made by active movements stay).

    The new holder is the least loaded caught-up client not holding the task, else the most caught-up
    such client ahead of the current holder in lag order. While the warm-up budget lasts the current
    holder keeps its copy. Returns the number of standbys moved.
    """
    pool = _caught_up_pool(clients, lags, make_pool)
    movements: list[Movement] = []
    no_warmups: set[TaskId] = set()
    for client in clients:
        own_warmups = warmups.get(client.index, no_warmups)
        for task in sorted(client.standby):
            if task not in own_warmups and _needs_movement(task, client.index, lags[task]):
                movements.append((task, client.index))
        pool.offer(client.index)

    moved = 0
    for task, dest in _in_heap_order(movements, lags):

        def eligible(c: int, t: TaskId = task) -> bool:
            return not clients[c].has_assigned(t)

        source = pool.poll(task, eligible)
        if source is None:
            for candidate in lags[task].by_lag():
                if candidate == dest:
                    break
                if eligible(candidate):
                    source = candidate
                    break
        if source is None:
            continue
        clients[source].assign_standby(task)
        if not budget.take():
            clients[dest].unassign_standby(task)
        pool.offer_all((source, dest))
        moved += 1
    return moved
