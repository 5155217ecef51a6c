"""Kafka's ``TaskMovement``: send tasks placed on a client that is not caught up to one that is.

Active movements (``assignActiveTaskMovements``) and standby movements (``assignStandbyTaskMovements``) share a warm-up
budget (``max.warmup.replicas`` per rebalance). Movements are processed fewest-caught-up-clients first, then
by TaskId, in the order of Java's binary heap: one task can have several standby movements with equal
keys, and those leave the heap in ``java.util.PriorityQueue`` order, not in insertion order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import chain

import numpy as np

from taskassign.internals.client_state import ClientState
from taskassign.internals.constrained_priority_set import ClientPool, PoolFactory
from taskassign.internals.java_order import priority_queue_poll_order
from taskassign.internals.lags import LagTable, Movements

__all__ = ("WarmupBudget", "assign_active_task_movements", "assign_standby_task_movements")

#: (task number, destination client index): the task sits on a client that is not caught up on it.
Movement = tuple[int, int]


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


def _movements(
    clients: Sequence[ClientState], lags: LagTable, pool: ClientPool | _LightestCaughtUp, standby: bool,
    skip: Mapping[int, set[int]] | None = None,
) -> Movements:
    """Kafka's enqueue loop: for each client (ProcessId order) and each of its tasks (TaskId order),
    a movement when the client is not caught up and some client has a strictly lower lag (-3 counts
    as lowest); each client is offered to ``pool`` after its tasks (nothing polls in between, so the
    offers can follow the scan)."""
    movements = lags.placed_behind([c.standby if standby else c.active for c in clients], skip)
    for client in clients:
        pool.offer(client.index)
    return movements


def _in_heap_order(movements: Movements, lags: LagTable, no_op: np.ndarray | None = None) -> list[Movement]:
    """The movements in the order Java's PriorityQueue keyed by (caught-up clients, task) polls them.

    Equal keys only come from several movements of one task. Without those the heap returns the
    movements sorted, and movements of tasks marked in ``no_op`` (they cannot change anything) can be
    left out before sorting; with ties, every movement shapes the heap, so none is left out.
    """
    tasks, destinations = movements
    if not tasks.size:
        return []
    counts = lags.num_caught_up_of(tasks)
    ordered = np.sort(tasks)
    if not np.any(ordered[1:] == ordered[:-1]):  # distinct tasks
        if no_op is not None:
            keep = ~no_op[tasks]
            tasks, destinations, counts = tasks[keep], destinations[keep], counts[keep]
        order = np.lexsort((tasks, counts))
        return list(zip(tasks[order].tolist(), destinations[order].tolist(), strict=True))
    keys = (counts * (int(ordered[-1]) + 1) + tasks).tolist()  # key (count, task) as one int
    task_list, destination_list = tasks.tolist(), destinations.tolist()
    return [(task_list[i], destination_list[i]) for i in priority_queue_poll_order(keys)]


def caught_up_pool(clients: Sequence[ClientState], lags: LagTable, make_pool: PoolFactory) -> ClientPool:
    """A constrained priority set of caught-up clients by assigned load."""
    actives = [c.active for c in clients]
    standbys = [c.standby for c in clients]
    capacities = [c.capacity for c in clients]
    return make_pool(
        lags.is_caught_up,
        lambda c: (len(actives[c]) + len(standbys[c])) / capacities[c],
        lags.caught_up_clients,
        weights_change_inside=True,
    )


def _swap_standby_and_active(task: int, source: ClientState, destination: ClientState) -> None:
    source.unassign_standby(task)
    source.assign_active(task)
    destination.unassign_active(task)
    destination.assign_standby(task)


def assign_active_task_movements(
    clients: Sequence[ClientState],
    lags: LagTable,
    warmups: dict[int, set[int]],
    budget: WarmupBudget,
    make_pool: PoolFactory,
) -> int:
    """Move actives off clients that are not caught up; returns the number of movements scheduled.

    Per movement, in order: swap with a caught-up standby holder; else move to the least loaded
    caught-up client (warm-up on the destination while the budget lasts); else move to the most
    caught-up client. Records the warm-ups created, per client, in ``warmups``.
    """
    if make_pool.movements_true_minimum:
        return _assign_active_to_lightest(clients, lags, warmups, budget)
    pool = caught_up_pool(clients, lags, make_pool)
    movements = _movements(clients, lags, pool, standby=False)
    # each task's standby holders: the clients step a may choose from (a pool may look at those only)
    standby_holders = _standby_holders(clients, movements[0])
    for task, dest in _in_heap_order(movements, lags):

        def holds_standby(c: int, t: int = task) -> bool:
            return t in clients[c].standby

        holders = standby_holders.setdefault(task, [])
        source = pool.poll(task, holds_standby, holders)  # a: a caught-up standby takes over, no warm-up needed
        swap = source is not None
        if source is None:
            source = pool.poll(task)  # b: the least loaded caught-up client
        if source is None:  # c: the most caught-up client (the enqueue condition guarantees one)
            source = lags.most_caught_up(task)
            if source == dest:
                raise AssertionError(f"no client is more caught up on {task} than the planned one")
            swap = task in clients[source].standby
        _move_active(clients, task, source, dest, swap, standby_holders, budget, warmups)
        pool.offer_all((source, dest))
    return len(movements[0])


def _move_active(clients: Sequence[ClientState], task: int, source: int, dest: int, swap: bool,
                 standby_holders: dict[int, list[int]], budget: WarmupBudget, warmups: dict[int, set[int]]) -> None:
    """An active movement once its new client is chosen: swap with the source's standby, or move and leave a
    warm-up on the destination while the budget lasts (its standby holders and warm-ups kept up to date).

    The sets change directly when ClientState's checks would pass (what Kafka's invariants guarantee); else its
    mutators run, in Kafka's order, and raise."""
    source_state, destination = clients[source], clients[dest]
    giving, taking = destination.active, source_state.active
    if swap:
        if task in source_state.standby and task not in taking and task in giving and task not in destination.standby:
            source_state.standby.remove(task)
            taking.add(task)
            giving.remove(task)
            destination.standby.add(task)
        else:
            _swap_standby_and_active(task, source_state, destination)
        holders = standby_holders[task]
        holders.remove(source)
        holders.append(dest)
        return
    if task in giving and task not in taking and task not in source_state.standby:
        taking.add(task)
        giving.remove(task)
    else:
        source_state.assign_active(task)
        destination.unassign_active(task)
    if budget.take():
        destination.assign_standby(task)
        standby_holders.setdefault(task, []).append(dest)
        warmups.setdefault(dest, set()).add(task)


def _standby_holders(clients: Sequence[ClientState], tasks: np.ndarray) -> dict[int, list[int]]:
    """The standby holders (client numbers, in client order) of each of ``tasks`` that has some: the tasks a
    movement phase moves, the only ones it asks about."""
    wanted = set(tasks.tolist())
    holders: dict[int, list[int]] = {}
    for client in clients:
        for held in client.standby & wanted:
            found = holders.get(held)
            if found is None:
                holders[held] = [client.index]
            else:
                found.append(client.index)
    return holders


def _assign_active_to_lightest(
    clients: Sequence[ClientState], lags: LagTable, warmups: dict[int, set[int]], budget: WarmupBudget,
) -> int:
    """``assign_active_task_movements`` where its pool answers the true minimum, without the pool: every client
    is a member at each poll (a movement polls at most one and offers it back with the destination), so each
    step is the least (load, client) among the clients it admits (``_LightestCaughtUp``, which reads the loads of
    the candidates when it compares them). Tested against the pooled loop."""
    lightest = _LightestCaughtUp(clients, lags)
    standbys = [c.standby for c in clients]
    movements = lags.placed_behind([c.active for c in clients])
    standby_holders = _standby_holders(clients, movements[0])
    caught_up, is_caught_up = lags.caught_up_clients, lags.is_caught_up
    for task, dest in _in_heap_order(movements, lags):
        caught = caught_up(task)  # the caught-up clients, or None: every silent client is caught up
        source = None
        holders = standby_holders.get(task)
        if holders:  # a: a caught-up standby takes over, no warm-up needed
            admitted = [c for c in holders if (c in caught if caught is not None else is_caught_up(c, task))]
            source = admitted[0] if len(admitted) == 1 else lightest.least(admitted)
        swap = source is not None
        if source is None:  # b: the least loaded caught-up client
            if caught is not None and len(caught) == 1:  # (the usual case: the previous owner)
                (source,) = caught
            else:  # (caught None never with a movement: then only a client with unknown offsets (-3) is
                # behind, and nobody has a lower lag; answered as the pool would all the same)
                source = lightest.least(lightest.caught_up(task))
        if source is None:  # c: the most caught-up client (the enqueue condition guarantees one)
            source = lags.most_caught_up(task)
            if source == dest:
                raise AssertionError(f"no client is more caught up on {task} than the planned one")
            swap = task in standbys[source]
        _move_active(clients, task, source, dest, swap, standby_holders, budget, warmups)
    return len(movements[0])


def assign_standby_task_movements(
    clients: Sequence[ClientState],
    lags: LagTable,
    warmups: Mapping[int, set[int]],
    budget: WarmupBudget,
    make_pool: PoolFactory,
    *,
    kafka_ties: bool = True,
    tags: Sequence[frozenset[tuple[str, str]]] | None = None,
) -> int:
    """Move standbys off clients that are not caught up (warm-ups made by active movements stay).

    The new holder is the least loaded caught-up client not holding the task, else the most caught-up
    such client ahead of the current holder in lag order. While the warm-up budget lasts the current
    holder keeps its copy. Returns the number of standbys moved.

    ``kafka_ties`` (Kafka's rule): the lag-order walk takes a client whose lag only ties the holder's;
    every client that never held the task ties at the end offset, so the lowest ProcessId collects
    those standbys (docs/kafka-differences.md, H8, H10). Without it, only a strictly more caught-up
    client takes the standby, else it stays. ``tags`` (each client's tag entries, default mode with
    client tags): a standby moves only to a client that keeps as many distinct tag entries among the
    task's replicas (KIP-708's spread), as the rack optimisation's check does.
    """
    pool: ClientPool | _LightestCaughtUp = (_LightestCaughtUp(clients, lags) if make_pool.movements_true_minimum
                                             else caught_up_pool(clients, lags, make_pool))
    movements = _movements(clients, lags, pool, standby=True, skip=warmups)
    walks = _LagOrderWalks(clients, lags)
    actives = [c.active for c in clients]
    standbys = [c.standby for c in clients]
    # Every stateful task has one active; a task every client holds cannot move (Kafka's movement then
    # finds no eligible client and changes nothing), so those movements are skipped cheaply.
    held = np.bincount(np.fromiter(chain.from_iterable(standbys), dtype=np.int64, count=sum(map(len, standbys))),
                       minlength=lags.num_tasks)
    full = len(clients) - 1
    copies: list[int] = held.tolist()
    poll, offer_all = pool.poll, pool.offer_all
    first_eligible = walks.first_eligible_before if kafka_ties else walks.first_strictly_ahead
    holders = _Holders(clients) if tags is not None else None
    tag_of: Sequence[frozenset[tuple[str, str]]] = tags if tags is not None else ()
    moved = 0
    for task, dest in _in_heap_order(movements, lags, held >= full):
        if copies[task] >= full:
            continue

        others: frozenset[tuple[str, str]] | None = None
        here = 0
        if holders is not None:
            others = holders.tag_entries_without(task, dest, tag_of)
            here = len(others | tag_of[dest])

        def eligible(c: int, t: int = task, o: frozenset[tuple[str, str]] | None = others, n: int = here) -> bool:
            return t not in actives[c] and t not in standbys[c] and (o is None or len(o | tag_of[c]) >= n)

        source = poll(task, eligible)
        if source is None:
            source = first_eligible(task, dest, eligible)
            if source is None:
                continue
        standbys[source].add(task)  # eligible: it holds no copy
        copies[task] += 1
        if holders is not None:
            holders.add(task, source)
        if not budget.take():
            standbys[dest].remove(task)
            copies[task] -= 1
            walks.released(task, dest)
            if holders is not None:
                holders.remove(task, dest)
        offer_all((source, dest))  # both at once: the destination may have changed weight in the pool
        moved += 1
    return moved


class _LightestCaughtUp:
    """The movement phases' pool where it answers the true minimum, for their pattern only: a poll, then the
    polled client offered back with the destination before the next poll, so every client is a member at each
    poll and the answer is the least (load, client) the constraints admit. Loads are read from the clients' sets
    only when two or more candidates compete (most polls have one or none): offers have nothing to record."""

    __slots__ = ("_actives", "_capacities", "_caught_up", "_is_caught_up", "_standbys")

    def __init__(self, clients: Sequence[ClientState], lags: LagTable) -> None:
        self._actives = [c.active for c in clients]
        self._standbys = [c.standby for c in clients]
        self._capacities = [c.capacity for c in clients]
        self._caught_up = lags.caught_up_clients
        self._is_caught_up = lags.is_caught_up

    def offer(self, client: int) -> None:
        """Nothing to record: loads are read when compared."""

    def offer_all(self, clients: Iterable[int]) -> None:
        """Nothing to record: loads are read when compared."""

    def caught_up(self, task: int) -> Collection[int]:
        """The clients caught up on ``task``."""
        caught = self._caught_up(task)
        if caught is None:  # every silent client is caught up (never with a movement, as in the active phase)
            is_caught_up = self._is_caught_up
            caught = {c for c in range(len(self._capacities)) if is_caught_up(c, task)}
        return caught

    def least(self, candidates: Iterable[int]) -> int | None:
        """The least (load, client) among ``candidates``, loads as ``ClientState.assigned_load``; None without
        any."""
        found = candidates if isinstance(candidates, list) else list(candidates)
        if len(found) < 2:
            return found[0] if found else None
        actives, standbys, capacities = self._actives, self._standbys, self._capacities
        return min([((len(actives[c]) + len(standbys[c])) / capacities[c], c) for c in found])[1]

    def poll(self, task: int, extra: Callable[[int], bool]) -> int | None:
        return self.least(filter(extra, self.caught_up(task)))


class _Holders:
    """Which clients hold each task (active or standby), for the tag-diversity check of standby moves."""

    __slots__ = ("_of",)

    def __init__(self, clients: Sequence[ClientState]) -> None:
        of: dict[int, list[int]] = {}
        for client in clients:
            for task in chain(client.active, client.standby):
                found = of.get(task)
                if found is None:
                    of[task] = [client.index]
                else:
                    found.append(client.index)
        self._of = of

    def tag_entries_without(self, task: int, client: int, tags: Sequence[frozenset[tuple[str, str]]],
                            ) -> frozenset[tuple[str, str]]:
        """The tag entries of the task's holders other than ``client``."""
        entries: set[tuple[str, str]] = set()
        for holder in self._of.get(task, ()):
            if holder != client:
                entries.update(tags[holder])
        return frozenset(entries)

    def add(self, task: int, client: int) -> None:
        self._of.setdefault(task, []).append(client)

    def remove(self, task: int, client: int) -> None:
        self._of[task].remove(client)


class _LagOrderWalks:
    """Kafka's ``mostCaughtUpEligibleClient``: the first client in ``byLag[t]`` order, stopping at the
    destination, that does not hold ``t``.

    Most clients sit in the block at lag = end (they never reported the task), in ProcessId order;
    a plain walk re-scans the same holders at every movement of a task (O(C) each). A cursor per task
    remembers that every block client below it holds the task; only a client giving the task up
    (``released``) can move it back.
    """

    __slots__ = ("_cursor", "_lags", "_num_clients")

    def __init__(self, clients: Sequence[ClientState], lags: LagTable) -> None:
        self._lags = lags
        self._num_clients = len(clients)
        self._cursor: dict[int, int] = {}

    def first_eligible_before(self, task: int, dest: int, eligible: Callable[[int], bool]) -> int | None:
        ahead, behind, outside = self._lags.lag_order_parts(task)
        for client in ahead:
            if client == dest:
                return None
            if eligible(client):
                return client
        in_block = dest not in outside
        limit = dest if in_block else self._num_clients
        start = self._cursor.get(task, 0)
        for client in range(start, limit):
            if eligible(client) and client not in outside:
                self._cursor[task] = client
                return client
        self._cursor[task] = max(start, limit)
        if in_block:
            return None
        for client in behind:  # only when the end offset is unknown (-3)
            if client == dest:
                return None
            if eligible(client):
                return client
        raise AssertionError(f"client {dest} holds task #{task} but is not in its lag order")

    def first_strictly_ahead(self, task: int, dest: int, eligible: Callable[[int], bool]) -> int | None:
        """The first eligible client in ``byLag[t]`` order with a lag strictly below the destination's
        (clients that only tie it are no more caught up)."""
        lags = self._lags
        ahead, _, outside = lags.lag_order_parts(task)
        if dest not in outside:  # the destination sits in the block at lag = end: only ``ahead`` is below it
            for client in ahead:
                if eligible(client):
                    return client
            return None
        limit = lags.lag(dest, task)
        for client in ahead:
            if lags.lag(client, task) >= limit:
                return None
            if eligible(client):
                return client
        if lags.ends[task] >= limit:
            return None
        found = self.first_eligible_before(task, dest, eligible)  # the block and behind, up to dest
        return found if found is not None and lags.lag(found, task) < limit else None

    def released(self, task: int, client: int) -> None:
        """``client`` no longer holds ``task``: it may be the first eligible block client again."""
        cursor = self._cursor.get(task)
        if cursor is not None and client < cursor:
            self._cursor[task] = client
