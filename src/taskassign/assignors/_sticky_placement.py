"""The placement engine shared by Kafka's sticky assignors (the public ``StickyTaskAssignor`` and
``LegacyStickyTaskAssignor``).

Kafka has two copies of one algorithm: ``LegacyStickyTaskAssignor`` on its internal ClientState and the
public KIP-924 ``StickyTaskAssignor``. Both keep previous actives while a client is under its quota,
promote previous standbys, place the rest on the least loaded client with the TaskPairs heuristic,
then place standbys the same way. They differ in one comparison only: the legacy one breaks equal
loads by larger capacity (``hasMoreAvailableCapacityThan``), the public one does not
(``capacity_tiebreak``). Everything else the assignors do (rack optimisation, which tasks get
standbys in which order, the result type) stays in the assignor modules.

Ties are decided by the iteration order of Java HashMaps/HashSets, reproduced with
``taskassign.internals.java_order`` (JDK 17) from how the golden cases were produced (tests/golden/README.md):
clients in a HashMap filled in ProcessId order, all tasks the key set of a HashMap filled in TaskId
order. Clients and tasks are dense indices here (ProcessId order, TaskId order) for speed.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from taskassign.assignors._least_loaded import OrderedLoads
from taskassign.assignors._task_pairs import TaskPairs
from taskassign.errors import TaskAssignmentException
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import (
    HashSubsetOrder,
    JavaHashMap,
    grown_capacity,
    hash_iteration_order,
    hashset_copy_capacity,
    leader_task_order,
)
from taskassign.model import ApplicationState

__all__ = ("StickyPlacement", "warn_standby_shortfalls")


_NOBODY: frozenset[int] = frozenset()


class StickyPlacement:
    """Mutable scratch state of one sticky assignment: per-client tasks and loads, TaskPairs, Java orders.

    ``capacity_tiebreak``: True for LegacySticky (equal load: the larger capacity is less loaded),
    False for the public StickyTaskAssignor.
    """

    def __init__(self, state: ApplicationState, *, capacity_tiebreak: bool) -> None:
        self.task_ids: tuple[TaskId, ...] = tuple(state.task_ids)
        self.process_ids: tuple[ProcessId, ...] = state.process_ids
        self.task_index: dict[TaskId, int] = {t: i for i, t in enumerate(self.task_ids)}
        states = state.kafka_streams_states(False)
        self.capacity: list[int] = [states[p].num_processing_threads for p in self.process_ids]
        for pid, cap in zip(self.process_ids, self.capacity, strict=True):
            if cap <= 0:
                raise TaskAssignmentException(f"client {pid} has no processing threads, so it cannot take tasks")
        num_tasks, num_clients = len(self.task_ids), len(self.process_ids)
        self.active: list[set[int]] = [set() for _ in range(num_clients)]
        self.standby: list[set[int]] = [set() for _ in range(num_clients)]
        self.count: list[int] = [0] * num_clients
        self.holders: list[set[int]] = [set() for _ in range(num_tasks)]
        self._tiebreak = capacity_tiebreak
        self.key: list[Any] = [self._key_of(c) for c in range(num_clients)]
        self._min_heap: list[tuple[Any, int]] = [(k, c) for c, k in enumerate(self.key)]
        heapq.heapify(self._min_heap)
        #: Per walk order over every client (by id; the orders are kept alive here): its OrderedLoads.
        self._ordered: dict[int, tuple[Sequence[int], OrderedLoads]] = {}
        self.pairs = TaskPairs(num_tasks, num_clients)

        pid_hash = [p.java_hash() for p in self.process_ids]
        task_hash = [t.java_hash() for t in self.task_ids]
        # The clients map (a HashMap filled in ProcessId order offline; on the leader in the order it met the
        # clients, which decides process ids sharing a bucket) and sets built by walking it.
        arrival = state.client_arrival_order
        client_index = {p: c for c, p in enumerate(self.process_ids)}
        filled = range(num_clients) if arrival is None else [client_index[p] for p in arrival]
        self.clients_order: list[int] = hash_iteration_order(filled, hash_of=pid_hash.__getitem__)
        self._client_sets = HashSubsetOrder(self.clients_order, pid_hash.__getitem__)
        # allTasks().keySet(): a HashMap filled in TaskId order.
        walk = state.subtopology_walk_order
        if walk is None or not capacity_tiebreak:
            self.all_tasks_order: list[int] = hash_iteration_order(range(num_tasks), hash_of=task_hash.__getitem__)
        else:  # the legacy assignor on the leader: PartitionGrouper's task map, filled walking the subtopologies
            self.all_tasks_order = [self.task_index[t] for t in leader_task_order(self.task_ids, walk)]
        self._task_hash = task_hash
        self._prev_active_order, self._prev_active_owner = self._previous_actives(states)
        self._prev_standby, self._prev_standby_copy = self._previous_standbys(states)

    # -- previous assignment (Kafka's mapPreviousTaskAssignment) ---------------------------------

    def _previous_actives(self, states: Mapping[ProcessId, Any]) -> tuple[list[TaskId], dict[TaskId, int]]:
        """HashMap task -> previous owner, filled walking the clients map (a later owner overwrites)."""
        table: JavaHashMap[TaskId] = JavaHashMap()
        owner: dict[TaskId, int] = {}
        for c in self.clients_order:
            for task in states[self.process_ids[c]].previous_active_tasks:
                table.put(task)
                owner[task] = c
        return table.keys(), owner

    def _previous_standbys(self, states: Mapping[ProcessId, Any]) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        """Per task: the HashSet of previous standby clients, and its ``new HashSet<>(set)`` copy's order."""
        members: dict[int, set[int]] = {}
        for c in self.clients_order:
            for task in states[self.process_ids[c]].previous_standby_tasks:
                t = self.task_index.get(task)
                if t is not None:
                    members.setdefault(t, set()).add(c)
        own: dict[int, list[int]] = {}
        copy: dict[int, list[int]] = {}
        for t, clients in members.items():
            order = self._client_sets.subset(clients, len(clients))
            own[t] = order
            copy[t] = hash_iteration_order(
                order, initial_capacity=hashset_copy_capacity(len(order)), hash_of=self._client_sets.hash_of
            )
        return own, copy

    # -- loads ---------------------------------------------------------------------------------

    def _key_of(self, client: int) -> Any:
        """Smaller = less loaded. Legacy: (load, -capacity), i.e. hasMoreAvailableCapacityThan."""
        load = self.count[client] / self.capacity[client]
        return (load, -self.capacity[client]) if self._tiebreak else load

    def _refresh(self, client: int) -> None:
        key = self._key_of(client)
        self.key[client] = key
        heapq.heappush(self._min_heap, (key, client))
        for _, ordered in self._ordered.values():
            ordered.refresh(client)

    def _min_key(self) -> Any:
        heap, key = self._min_heap, self.key
        while heap[0][0] != key[heap[0][1]]:
            heapq.heappop(heap)
        return heap[0][0]

    def should_balance(self, client: int) -> bool:
        """The client is full (tasks >= threads) and some client is strictly less loaded."""
        return self.count[client] >= self.capacity[client] and self._min_key() < self.key[client]

    # -- placing -----------------------------------------------------------------------------

    def place(self, task: int, client: int, *, active: bool) -> None:
        """Kafka's finalize: record the task's pairs with the client's tasks, then assign it."""
        self.pairs.add(task, client)
        (self.active if active else self.standby)[client].add(task)
        self.holders[task].add(client)
        self.count[client] += 1
        self._refresh(client)

    def least_loaded(self, task: int, order: Sequence[int], excluded: AbstractSet[int] = _NOBODY) -> int | None:
        """Kafka's leastLoaded over the clients of ``order`` (iteration order) not in ``excluded``: an
        empty client at once; else the least loaded one that would get a new pair (first on ties);
        if none would, the least loaded one."""
        if len(order) == len(self.count):  # a walk over every client: its heaps answer (_least_loaded)
            entry = self._ordered.get(id(order))
            if entry is None:
                entry = self._ordered[id(order)] = (order, OrderedLoads(order, self.key, self.count))
            pairs = self.pairs
            partners_of_task: list[Any] = []

            def has_new_pair(c: int) -> bool:
                if not partners_of_task:
                    partners_of_task.append(pairs.partners(task))
                return pairs.has_new_pair(c, partners_of_task[0])

            return entry[1].least_loaded(excluded, has_new_pair)
        count, key = self.count, self.key
        best = -1
        best_key: Any = None
        partners = -1
        for c in order:
            if c in excluded:
                continue
            if count[c] == 0:
                return c
            k = key[c]
            if best < 0 or k < best_key:
                if partners < 0:
                    partners = self.pairs.partners(task)
                if self.pairs.has_new_pair(c, partners):
                    best, best_key = c, k
        if best >= 0:
            return best
        for c in order:
            if c in excluded:
                continue
            k = key[c]
            if best < 0 or k < best_key:
                best, best_key = c, k
        return best if best >= 0 else None

    def _least_loaded_previous_standby(self, task: int, excluded: AbstractSet[int]) -> int | None:
        ids = self._prev_standby_copy.get(task)
        return None if ids is None else self.least_loaded(task, ids, excluded)

    def find_best_client(self, task: int, order: Sequence[int], excluded: AbstractSet[int] = _NOBODY) -> int:
        """Kafka's findClient / findBestClientForTask over the candidates: the clients of ``order``
        (their iteration order) not in ``excluded``. The previous owner unless it should shed load,
        then a previous standby owner, else the least loaded candidate."""
        if len(order) - len(excluded) == 1:
            return next(c for c in order if c not in excluded)
        owner = self._prev_active_owner.get(self.task_ids[task])
        previous = owner if owner is not None and owner not in excluded else None
        if previous is None:
            previous = self._least_loaded_previous_standby(task, excluded)
        if previous is None:
            return self._must(self.least_loaded(task, order, excluded))
        if self.should_balance(previous):
            standby = self._least_loaded_previous_standby(task, excluded)
            if standby is None or self.should_balance(standby):
                return self._must(self.least_loaded(task, order, excluded))
            return standby
        return previous

    @staticmethod
    def _must(client: int | None) -> int:
        if client is None:  # pragma: no cover - only for an empty candidate list, which callers exclude
            raise TaskAssignmentException("no client can take the task")
        return client

    # -- the two phases ---------------------------------------------------------------------

    def assign_actives(self, *, must_preserve: bool, ceil_quota: bool = False) -> None:
        """Step 1 of both sticky assignors: previous owners within quota (all of them when ``must_preserve``),
        then previous standby owners within quota, then the rest in TaskId order.

        The quota of a client is ``threads x floor(tasks / all threads)``; with ``ceil_quota`` (the public
        StickyTaskAssignor from Kafka 4.4 on, KAFKA-20198) ``ceil(tasks x threads / all threads)``.
        """
        total = sum(self.capacity)
        if total == 0:
            raise TaskAssignmentException("the application has no processing threads to assign tasks to")
        num_tasks = len(self.task_ids)
        active, index = self.active, self.task_index
        if ceil_quota:
            quota = [(num_tasks * cap + total - 1) // total for cap in self.capacity]
        else:
            quota = [cap * (num_tasks // total) for cap in self.capacity]
        assigned = [False] * len(self.task_ids)
        for task_id in self._prev_active_order:
            t = index.get(task_id)
            if t is None:
                continue
            c = self._prev_active_owner[task_id]
            if must_preserve or len(active[c]) < quota[c]:
                self.place(t, c, active=True)
                assigned[t] = True
        # new HashSet<>(allTasks.keySet()): a pre-sized copy of the key set.
        unassigned = hash_iteration_order(
            self.all_tasks_order,
            initial_capacity=hashset_copy_capacity(len(self.all_tasks_order)),
            hash_of=self._task_hash.__getitem__,
        )
        for t in unassigned:
            if assigned[t]:
                continue
            for c in self._prev_standby.get(t, ()):
                if len(active[c]) < quota[c]:
                    self.place(t, c, active=True)
                    assigned[t] = True
                    break
        everyone = self.clients_order
        for t in range(len(self.task_ids)):  # TaskId order
            if not assigned[t]:
                self.place(t, self.find_best_client(t, everyone), active=True)

    def assign_standbys(self, tasks: Iterable[int], replicas: int) -> list[tuple[TaskId, int]]:
        """Up to ``replicas`` standbys per task, each on the best client not holding it yet.

        Returns (task, standbys placed) for every task that got fewer than asked (too few clients).
        """
        short: list[tuple[TaskId, int]] = []
        num_clients = len(self.process_ids)
        for t in tasks:
            holders = self.holders[t]
            for placed in range(replicas):
                free = num_clients - len(holders)
                if free == 0:
                    short.append((self.task_ids[t], placed))
                    break
                order = self._client_sets.order(grown_capacity(free))  # the HashSet of clients without t
                self.place(t, self.find_best_client(t, order, holders), active=False)
        return short

    # -- after a rack optimisation ---------------------------------------------------------

    def replace(self, new_sets: Mapping[ProcessId, Iterable[TaskId]], *, active: bool) -> None:
        """Adopt the active (or standby) sets an optimiser produced; pairs are not refreshed (Kafka)."""
        target = self.active if active else self.standby
        for c, pid in enumerate(self.process_ids):
            tasks = {self.task_index[t] for t in new_sets.get(pid, ())}
            if tasks == target[c]:
                continue
            for t in target[c] - tasks:
                self.holders[t].discard(c)
            for t in tasks - target[c]:
                self.holders[t].add(c)
            target[c] = tasks
            self.count[c] = len(self.active[c]) + len(self.standby[c])
            self._refresh(c)
            self.pairs.restart(c, sorted(self.active[c] | self.standby[c]))

    def sets_by_process(self, *, active: bool) -> dict[ProcessId, set[TaskId]]:
        """Every client's active (or standby) tasks as TaskIds."""
        source = self.active if active else self.standby
        ids = self.task_ids
        return {pid: {ids[t] for t in source[c]} for c, pid in enumerate(self.process_ids)}


def warn_standby_shortfalls(log: logging.Logger, short: Sequence[tuple[TaskId, int]], replicas: int) -> None:
    """One warning for every task that got fewer standbys than configured (Kafka warns per task)."""
    if short:
        preview = ", ".join(f"{task} ({placed}/{replicas})" for task, placed in short[:10])
        more = f", ... (+{len(short) - 10} more)" if len(short) > 10 else ""
        log.warning("not enough clients to place %d standby replicas of %d task(s): %s%s",
                    replicas, len(short), preview, more)
