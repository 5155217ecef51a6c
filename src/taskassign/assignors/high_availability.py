"""Kafka's ``HighAvailabilityTaskAssignor`` (KIP-441), the default assignor, reproduced exactly.

It does not start from the previous assignment. Stateful actives are dealt round-robin and evened
out per thread; an active that lands on a client that is not caught up (lag above
``acceptable.recovery.lag``) goes to a caught-up client instead, and the planned client gets a
warm-up replica (at most ``max.warmup.replicas`` per rebalance) and a probing rebalance is requested,
so that the task migrates once the warm-up has caught up. Standbys go to the least loaded clients (or
by client tags), stateless tasks to the clients with the fewest actives per thread (KIP-441).

The result is Kafka's, bit for bit, including its quirks (docs/kafka-differences.md). Differences are
only in cost: no T x C lag tables, no pair scans that cannot move a task, and constrained priority
sets that answer a poll without popping every rejected client (see ``_constrained_priority_set``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence

from taskassign.assignors._task_movement import (
    WarmupBudget,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from taskassign.assignors._thread_balance import balance_tasks_over_threads
from taskassign.assignors.base import BaseTaskAssignor
from taskassign.configs import AssignmentConfigs
from taskassign.errors import TaskassignError
from taskassign.ids import TaskId
from taskassign.internals.client_state import ClientState, client_states, task_numbers, to_task_assignment
from taskassign.internals.constrained_priority_set import (
    PoolFactory,
    fast_pool_factory,
    java_pool_factory,
)
from taskassign.internals.lags import LagTable
from taskassign.model import ApplicationState, TaskAssignment
from taskassign.rack.cost import (
    DEFAULT_NON_OVERLAP_COST,
    DEFAULT_TRAFFIC_COST,
    STATELESS_NON_OVERLAP_COST,
    STATELESS_TRAFFIC_COST,
)
from taskassign.rack.internal import RackAwareTaskAssignor, make_rack_aware_assignor
from taskassign.standby import choose_standby_assignor
from taskassign.standby.base import StandbyMovePredicate
from taskassign.standby.client_tag_aware import ClientTagAwareStandbyTaskAssignor

__all__ = (
    "DEFAULT_NON_OVERLAP_COST",
    "DEFAULT_TRAFFIC_COST",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "HighAvailabilityTaskAssignor",
    "assign_high_availability",
    "make_rack_aware_assignor",
)



class HighAvailabilityTaskAssignor(BaseTaskAssignor):
    """Kafka's default assignor; when changelog end offsets are unknown the leader uses FallbackPrior."""

    name = "high_availability"
    fallback_when_lags_unknown = "fallback_prior"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return assign_high_availability(application_state)


def assign_high_availability(application_state: ApplicationState, *, java_heap: bool = False) -> TaskAssignment:
    """Run the high-availability assignment. ``java_heap`` runs every constrained priority set on the
    emulated Java heap (slow; the reference the default is tested against) and moves standbys as Kafka does
    (docs/kafka-differences.md, H10), as kafka_compat does."""
    configs = application_state.configs
    clients = client_states(application_state)
    task_ids = application_state.task_ids.items
    numbers = task_numbers(task_ids)
    stateful_ids = application_state.stateful_task_ids
    # (every task stateful, the usual case: its numbers are all of them, no TaskId hashed)
    stateful = (list(range(len(task_ids))) if len(stateful_ids) == len(task_ids)
                else [numbers[t] for t in stateful_ids])
    if not clients:
        if task_ids:
            raise TaskassignError("the application has tasks but no clients to run them")
        return TaskAssignment((), False)
    hashes = [c.process_id.java_hash() for c in clients]
    # Kafka's heap can turn invalid in the movement phases and then return a client that is not the
    # lightest (docs/kafka-differences.md, H9): replayed exactly under kafka_compat, else the lightest.
    make_pool: PoolFactory = (java_pool_factory(hashes) if java_heap
                              else fast_pool_factory(hashes, replay_java_heap=configs.kafka_compat))
    rack = _RackSteps.create(application_state, task_ids, numbers)

    for k, task in enumerate(stateful):  # round-robin, capacity ignored
        clients[k % len(clients)].active.add(task)
    balance_tasks_over_threads(clients, standby=False)
    if rack is not None:
        rack.optimize_actives(clients, stateful, rack.traffic_cost, rack.non_overlap_cost)

    standby_tags = None
    if configs.num_standby_replicas != 0:
        standby_assignor = choose_standby_assignor(configs)
        # (java_heap is the reference for Kafka's mechanism: it moves standbys as Kafka does too)
        if not (configs.kafka_compat or java_heap) and isinstance(standby_assignor, ClientTagAwareStandbyTaskAssignor):
            standby_tags = standby_assignor.tag_entries(clients)
        standby_assignor.assign(clients, stateful, configs.num_standby_replicas, make_pool, task_ids)
        balance_tasks_over_threads(clients, standby=True, allowed=standby_assignor.is_allowed_task_movement)
        if rack is not None:
            rack.optimize_standbys(clients, standby_assignor.standby_move_predicate(clients))

    budget = WarmupBudget(configs.max_warmup_replicas)
    lags = LagTable(application_state, numbers)
    warmups: dict[int, set[int]] = {}
    active_movements = assign_active_task_movements(clients, lags, warmups, budget, make_pool)
    # Kafka sends a standby that must move to a client whose lag only ties its holder's, ignoring tags: the
    # lowest ProcessId collects them (docs/kafka-differences.md, H8, H10); replayed under kafka_compat.
    standby_movements = assign_standby_task_movements(clients, lags, warmups, budget, make_pool,
                                                      kafka_ties=standby_tags is None, tags=standby_tags)

    stateless = [n for n in range(len(task_ids)) if n not in lags.ends] if len(lags.ends) < len(task_ids) else []
    _assign_stateless_by_active_load(clients, stateless, make_pool)
    if rack is not None:
        rack.optimize_actives(clients, stateless, STATELESS_TRAFFIC_COST, STATELESS_NON_OVERLAP_COST)

    details = {
        "active_movements": active_movements,
        "standby_movements": standby_movements,
        "warmup_replicas": min(configs.max_warmup_replicas, configs.max_warmup_replicas - budget.remaining),
    }
    return to_task_assignment(clients, task_ids, active_movements + standby_movements > 0, details)


def _configured_or(value: int | None, default: int) -> int:
    return default if value is None else value


def _assign_stateless_by_active_load(
    clients: Sequence[ClientState], stateless: Sequence[int], make_pool: PoolFactory
) -> None:
    """Each stateless task to the client with the fewest active tasks per thread (ties: ProcessId)."""
    actives = [c.active for c in clients]
    capacities = [c.capacity for c in clients]
    if make_pool.true_minimum:
        # The pool would answer the lightest client every time and only the chosen one's load changes: a
        # plain heap of (load, index) gives the same answers at a fraction of the cost (10^5 tasks).
        pending = set(stateless)  # ClientState.assign_active's check, once for all: nobody holds one yet
        for client in clients:
            if not (pending.isdisjoint(client.active) and pending.isdisjoint(client.standby)):
                raise AssertionError(f"client {client.process_id} already holds a stateless task")
        heap = [(len(actives[c]) / capacities[c], c) for c in range(len(clients))]
        heapq.heapify(heap)
        replace = heapq.heapreplace
        for task in stateless:
            lightest = heap[0][1]
            own = actives[lightest]
            own.add(task)
            replace(heap, (len(own) / capacities[lightest], lightest))
        return
    pool = make_pool(lambda c, t: True, lambda c: len(actives[c]) / capacities[c])
    pool.offer_all(range(len(clients)))
    for task in stateless:
        chosen = pool.poll(task)
        assert chosen is not None
        clients[chosen].assign_active(task)
        pool.offer(chosen)


class _RackSteps:
    """The rack-aware optimiser seen through task numbers, with HA's costs."""

    __slots__ = ("_numbers", "_optimizer", "_task_ids", "non_overlap_cost", "traffic_cost")

    def __init__(self, optimizer: RackAwareTaskAssignor, task_ids: Sequence[TaskId], numbers: Mapping[TaskId, int],
                 configs: AssignmentConfigs) -> None:
        self._optimizer = optimizer
        self._task_ids = task_ids
        self._numbers = numbers
        self.traffic_cost = _configured_or(configs.rack_aware_traffic_cost, DEFAULT_TRAFFIC_COST)
        self.non_overlap_cost = _configured_or(configs.rack_aware_non_overlap_cost, DEFAULT_NON_OVERLAP_COST)

    @classmethod
    def create(cls, application_state: ApplicationState, task_ids: Sequence[TaskId],
               numbers: Mapping[TaskId, int]) -> _RackSteps | None:
        optimizer = make_rack_aware_assignor(application_state)
        return None if optimizer is None else cls(optimizer, task_ids, numbers, application_state.configs)

    def _ids(self, tasks: Iterable[int]) -> set[TaskId]:
        task_ids = self._task_ids
        return {task_ids[t] for t in tasks}

    def optimize_actives(self, clients: Sequence[ClientState], tasks: Sequence[int], traffic_cost: int,
                         non_overlap_cost: int) -> None:
        moves, _ = self._optimizer.active_number_moves(tasks, {c.process_id: c.active for c in clients},
                                                       traffic_cost, non_overlap_cost)
        by_id = {c.process_id: c for c in clients}
        for number, source, destination in moves:
            by_id[source].active.discard(number)
            by_id[destination].active.add(number)

    def optimize_standbys(self, clients: Sequence[ClientState], can_move: StandbyMovePredicate) -> None:
        moves = self._optimizer.standby_task_moves(
            {c.process_id: self._ids(c.active) for c in clients},
            {c.process_id: self._ids(c.standby) for c in clients},
            self.traffic_cost, self.non_overlap_cost, can_move)
        by_id = {c.process_id: c for c in clients}
        numbers = self._numbers
        for task, source, destination in moves:
            by_id[source].standby.discard(numbers[task])
            by_id[destination].standby.add(numbers[task])
