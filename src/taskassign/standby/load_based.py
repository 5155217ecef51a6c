"""Kafka's ``DefaultStandbyTaskAssignor``: each standby goes to the least loaded client.

Load is tasks (active and standby) per thread, so standbys fill the clients with spare capacity
first; a task never gets two replicas on one client.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskassign.ids import TaskId
from taskassign.internals.client_state import ClientState
from taskassign.internals.constrained_priority_set import PoolFactory
from taskassign.standby.base import (
    StandbyMovePredicate,
    always_allowed,
    log_shortfalls,
    not_holding_by_assigned_load,
    place_all_least_loaded,
    place_least_loaded,
)

__all__ = ("LoadBasedStandbyTaskAssignor",)


class LoadBasedStandbyTaskAssignor:
    """Places up to ``num_standby_replicas`` standbys per stateful task on the least loaded clients."""

    def assign(
        self,
        clients: Sequence[ClientState],
        stateful_tasks: Sequence[int],
        num_standby_replicas: int,
        make_pool: PoolFactory,
        task_ids: Sequence[TaskId],
    ) -> None:
        """Tasks are served in the order given (TaskId order in the high-availability assignor)."""
        if make_pool.true_minimum:
            short = place_all_least_loaded(clients, stateful_tasks, num_standby_replicas)
        else:
            pool = make_pool(*not_holding_by_assigned_load(clients))
            pool.offer_all(range(len(clients)))
            short = [task for task in stateful_tasks
                     if place_least_loaded(clients, pool, task, num_standby_replicas) > 0]
        log_shortfalls((task_ids[t] for t in short), num_standby_replicas)

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        """Any standby may move between any two clients."""
        return True

    def is_allowed_task_movement_for_task(
        self, source: ClientState, destination: ClientState, task: int, clients: Sequence[ClientState]
    ) -> bool:
        return True

    def standby_move_predicate(self, clients: Sequence[ClientState]) -> StandbyMovePredicate:
        return always_allowed
