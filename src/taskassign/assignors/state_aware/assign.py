"""The state-aware assignment end to end: target actives, target standbys, safe transition, sentences."""

from __future__ import annotations

from types import MappingProxyType

from taskassign.assignors.state_aware.actives import plan_actives, settle_actives
from taskassign.assignors.state_aware.explain import explain
from taskassign.assignors.state_aware.flow import remap_actives
from taskassign.assignors.state_aware.movement import plan_transition
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.settings import Settings
from taskassign.assignors.state_aware.standbys import plan_standbys
from taskassign.errors import TaskassignError
from taskassign.model import (
    ACTIVE,
    STANDBY,
    ApplicationState,
    AssignedTask,
    KafkaStreamsAssignment,
    TaskAssignment,
    new_assigned_task,
)

__all__ = ("assign_state_aware",)


def assign_state_aware(application_state: ApplicationState, settings: Settings | None = None) -> TaskAssignment:
    """Assign every task of ``application_state`` (docs/state-aware.md). ``settings`` default to the
    ``taskassign.assignors.state_aware.*`` configs of the state."""
    if not application_state.clients:
        if application_state.tasks:
            raise TaskassignError("the application has tasks but no clients to run them")
        return TaskAssignment(())
    p = Problem(application_state, settings or Settings.from_configs(application_state.configs))
    plan = settle_actives(p, remap_actives(p, plan_actives(p)))
    standbys = plan_standbys(p, plan.owner)
    now = plan_transition(p, plan.owner, standbys.holders, plan.bins)
    active_of: list[list[int]] = [[] for _ in range(p.num_clients)]
    standby_of: list[list[int]] = [[] for _ in range(p.num_clients)]
    for t, c in enumerate(now.active):
        active_of[c].append(t)
    for t, holders in enumerate(now.standby):
        for c in holders:
            standby_of[c].append(t)
    assignments = []
    task_ids = p.task_ids  # TaskId order: sorting task numbers sorts the ids
    for c, pid in enumerate(p.pids):
        kinds: dict[int, AssignedTask.Type] = dict.fromkeys(active_of[c], ACTIVE)
        kinds.update(dict.fromkeys(standby_of[c], STANDBY))
        entries = {task_ids[t]: new_assigned_task(task_ids[t], kind) for t, kind in sorted(kinds.items())}
        assignments.append(KafkaStreamsAssignment(pid, MappingProxyType(entries)))
    details = {
        "explanations": explain(p, plan, standbys, now),
        "pending_active_moves": len(now.pending),
        "warmup_replicas": len(now.warmups),
    }
    return TaskAssignment(tuple(assignments), now.probing_rebalance_needed, details)
