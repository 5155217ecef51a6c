"""What a standby assignor offers the high-availability assignor, and the helpers both share."""

from __future__ import annotations

import bisect
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Protocol

from taskassign.ids import ProcessId, TaskId
from taskassign.internals.client_state import ClientState
from taskassign.internals.constrained_priority_set import ClientPool, PoolFactory
from taskassign.rack.tags import always_allowed

__all__ = (
    "StandbyMovePredicate",
    "StandbyTaskAssignor",
    "always_allowed",
    "log_shortfalls",
    "not_holding_by_assigned_load",
    "place_all_least_loaded",
    "place_least_loaded",
)

log = logging.getLogger("taskassign.standby")

# ``always_allowed`` is the move predicate of standby assignors that do not care where standbys sit: the rack
# optimiser's own, which it recognises and then asks nothing per candidate move.

#: ``can_move(source, destination, task, active, standby)``: may a standby of ``task`` move from
#: ``source`` to ``destination``, given every client's current active and standby tasks?
StandbyMovePredicate = Callable[
    [ProcessId, ProcessId, TaskId, Mapping[ProcessId, Set[TaskId]], Mapping[ProcessId, Set[TaskId]]], bool
]


class StandbyTaskAssignor(Protocol):
    """Kafka's internal ``StandbyTaskAssignor``: place standbys, and say which standbys may move."""

    def assign(
        self,
        clients: Sequence[ClientState],
        stateful_tasks: Sequence[int],
        num_standby_replicas: int,
        make_pool: PoolFactory,
        task_ids: Sequence[TaskId],
    ) -> None:
        """Give each stateful task (task numbers, served in the given order) up to ``num_standby_replicas``
        standbys; ``task_ids[number]`` is the task's id."""

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        """May any standby move from ``source`` to ``destination`` (thread balancing)?"""

    def is_allowed_task_movement_for_task(
        self, source: ClientState, destination: ClientState, task: int, clients: Sequence[ClientState]
    ) -> bool:
        """May the standby of ``task`` move from ``source`` to ``destination`` (rack optimisation)?"""

    def standby_move_predicate(self, clients: Sequence[ClientState]) -> StandbyMovePredicate:
        """The same question on ProcessIds and assignment mappings, for the rack-aware optimiser."""


def not_holding_by_assigned_load(
    clients: Sequence[ClientState],
) -> tuple[Callable[[int, int], bool], Callable[[int], float]]:
    """Constraint "does not hold the task" and weight "assigned tasks per thread" over client indices."""
    actives = [c.active for c in clients]
    standbys = [c.standby for c in clients]
    capacities = [c.capacity for c in clients]

    def not_holding(c: int, task: int) -> bool:
        return task not in actives[c] and task not in standbys[c]

    def assigned_load(c: int) -> float:
        return (len(actives[c]) + len(standbys[c])) / capacities[c]

    return not_holding, assigned_load


def place_least_loaded(clients: Sequence[ClientState], pool: ClientPool, task: int, remaining: int) -> int:
    """Kafka's ``pollClientAndMaybeAssignAndUpdateRemainingStandbyTasks``: place up to ``remaining``
    standbys of ``task`` on the lightest clients the pool allows (its constraint: not holding the task);
    returns how many could not be placed."""
    poll, offer = pool.poll, pool.offer
    while remaining > 0:
        client = poll(task)
        if client is None:
            break
        clients[client].standby.add(task)
        remaining -= 1
        offer(client)
    return remaining


def place_all_least_loaded(clients: Sequence[ClientState], tasks: Iterable[int], replicas: int) -> list[int]:
    """``place_least_loaded`` for every task in turn, through a pool that answers the lightest qualifying
    client (``PoolFactory.true_minimum``); returns the tasks left short of ``replicas``.

    A client that gets a standby of the task holds it afterwards, so a task's picks are simply its
    ``replicas`` lightest non-holders by (tasks per thread, client index) at the task's turn: one walk
    over a sorted key list, and the picked clients are put back under their new load. When there are no
    more non-holders than replicas, they all get one and the order does not matter.
    """
    if replicas <= 0:
        return []
    actives = [c.active for c in clients]
    standbys = [c.standby for c in clients]
    tasks = list(tasks)
    if replicas >= len(clients) - 1:
        short = _all_non_holders(actives, standbys, tasks, replicas)
        if short is not None:
            return short
    counts = [len(a) + len(s) for a, s in zip(actives, standbys, strict=True)]
    capacities = [c.capacity for c in clients]
    everyone = range(len(clients)) if replicas >= len(clients) - 1 else None
    keys: list[tuple[float, int]] | None = None
    short = []
    for task in tasks:
        if everyone is not None:
            eligible = [i for i in everyone if task not in actives[i] and task not in standbys[i]]
            if len(eligible) <= replicas:
                for i in eligible:
                    standbys[i].add(task)
                    counts[i] += 1
                if len(eligible) < replicas:
                    short.append(task)
                keys = None
                continue
        if keys is None:
            keys = sorted((counts[i] / capacities[i], i) for i in range(len(clients)))
        picked: list[int] = []
        seen = 0
        for _, i in keys:
            seen += 1
            if task not in actives[i] and task not in standbys[i]:
                picked.append(i)
                if len(picked) == replicas:
                    break
        if len(picked) < replicas:
            short.append(task)
        if not picked:
            continue
        chosen = set(picked)
        keys[:seen] = [key for key in keys[:seen] if key[1] not in chosen]
        for i in picked:
            standbys[i].add(task)
            counts[i] += 1
            bisect.insort(keys, (counts[i] / capacities[i], i))
    return short


def _all_non_holders(actives: Sequence[set[int]], standbys: Sequence[set[int]], tasks: list[int], replicas: int
                     ) -> list[int] | None:
    """When every task already has a holder and ``replicas`` >= clients - 1, no task has more non-holders
    than replicas: each gets a standby on every client without it, whatever the loads. Done with set
    operations per client; None when some task has no holder (then loads decide)."""
    wanted = set(tasks)
    holders: Counter[int] = Counter()
    for active, standby in zip(actives, standbys, strict=True):
        holders.update(wanted & active)
        holders.update(wanted & standby)
    if len(holders) < len(wanted):
        return None
    for active, standby in zip(actives, standbys, strict=True):
        standby |= wanted - active - standby
    clients = len(actives)
    return [t for t in tasks if clients - holders[t] < replicas]


def log_shortfalls(tasks: Iterable[TaskId], wanted: int) -> None:
    """One warning for all tasks that got fewer standbys than configured (Kafka logs one per task)."""
    short = list(tasks)
    if short:
        shown = ", ".join(str(t) for t in short[:10]) + (", ..." if len(short) > 10 else "")
        log.warning("not enough clients to place %d standby replica(s) of %d task(s): %s",
                    wanted, len(short), shown)
