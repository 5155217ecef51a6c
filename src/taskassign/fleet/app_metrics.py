"""Per-application assignment metrics for the fleet pipeline: balance, movement, restore cost, racks.

Each metric is one flat column of the pipeline's ``app_metrics`` table (``METRIC_COLUMNS`` lists them
with their type and definition; docs/pipeline.md repeats them). "Previous" is what the application
state says the clients owned before the rebalance; lags are those of the state (spec 2.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from taskassign.ids import ProcessId, TaskId
from taskassign.model import LATEST_OFFSET, ApplicationState, GroupAssignment, compute_lag
from taskassign.validation import CompletenessReport

__all__ = ("METRIC_COLUMNS", "MetricColumn", "client_restore", "compute_app_metrics")


@dataclass(frozen=True, slots=True)
class MetricColumn:
    name: str
    type: str  # Spark DDL: "long" or "double"
    doc: str


METRIC_COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("tasks", "long", "tasks of the application"),
    MetricColumn("stateful_tasks", "long", "tasks with a changelog (the ones with lags and standbys)"),
    MetricColumn("clients", "long", "clients (KafkaStreams instances) in the rebalance"),
    MetricColumn("threads", "long", "consumers (StreamThreads) over all clients"),
    MetricColumn("unassigned_tasks", "long", "tasks without an active owner"),
    MetricColumn("standby_replicas_missing", "long",
                 "standby replicas short of min(num.standby.replicas, clients - 1), summed over stateful tasks"),
    MetricColumn("active_tasks_per_client_spread", "long", "max - min active tasks over clients"),
    MetricColumn("active_tasks_per_thread_spread", "double", "max - min over clients of active tasks per thread"),
    MetricColumn("state_weight_per_client_spread", "long",
                 "max - min over clients of the summed state weight (state_bytes, else store count) of actives"),
    MetricColumn("moved_active_tasks", "long",
                 "active tasks placed on a client other than their previous active owner, when that owner "
                 "is still in the group"),
    MetricColumn("new_standby_tasks", "long", "standby replicas placed on a client that owned nothing of the task"),
    MetricColumn("records_to_restore", "long",
                 "changelog records the new owners must restore: the sum of non-negative lags of every "
                 "assigned (active and standby) stateful task on its client"),
    MetricColumn("cross_rack_active_partitions", "long",
                 "source partitions of active tasks none of whose replicas is on the client's rack "
                 "(only where both racks are known)"),
)


def client_restore(
    state: ApplicationState, pid: ProcessId, tasks: tuple[TaskId, ...], reported_lags: Mapping[TaskId, int]
) -> tuple[int, int]:
    """(records to restore, tasks with an unknown lag) for ``tasks`` placed on client ``pid``.

    A lag the client reported comes from the pipeline's lag stage; a task it never reported lags by
    the task's whole end-offset sum. -2 (running here) costs nothing, -3 (unknown) is counted apart.
    """
    ends = state.changelog_end_offset_sums
    records = unknown = 0
    for tid in tasks:
        end = ends.get(tid)
        if end is None:
            continue
        lag = reported_lags.get(tid)
        if lag is None:
            lag = compute_lag(end, 0)
        if lag == LATEST_OFFSET:
            continue
        if lag < 0:
            unknown += 1
        else:
            records += lag
    return records, unknown


def compute_app_metrics(
    state: ApplicationState,
    group: GroupAssignment,
    completeness: CompletenessReport,
    reported_lags: Mapping[ProcessId, Mapping[TaskId, int]],
) -> dict[str, int | float]:
    """The METRIC_COLUMNS of one assigned application, in that order."""
    clients = state.clients
    prev_active: dict[TaskId, set[ProcessId]] = {}
    prev_any: dict[TaskId, set[ProcessId]] = {}
    for pid, c in clients.items():
        for t in c.previous_active_tasks:
            prev_active.setdefault(t, set()).add(pid)
            prev_any.setdefault(t, set()).add(pid)
        for t in c.previous_standby_tasks:
            prev_any.setdefault(t, set()).add(pid)
    active_counts: list[int] = []
    per_thread: list[float] = []
    weights: list[int] = []
    moved = new_standby = records = cross_rack = 0
    for pid, assignment in group.clients.items():
        client = clients.get(pid)
        active = assignment.active_tasks()
        standby = assignment.standby_tasks()
        active_counts.append(len(active))
        if client is not None and client.num_processing_threads:
            per_thread.append(len(active) / client.num_processing_threads)
        weights.append(sum(state.tasks[t].state_weight for t in active if t in state.tasks))
        for t in active:
            owners = prev_active.get(t)
            if owners and pid not in owners:
                moved += 1
            info = state.tasks.get(t)
            rack = client.rack_id if client is not None else None
            if info is not None and rack is not None:
                for p in info.source_partitions:
                    if p.rack_ids and rack not in p.rack_ids:
                        cross_rack += 1
        new_standby += sum(1 for t in standby if pid not in prev_any.get(t, ()))
        restore, _ = client_restore(state, pid, tuple(active) + tuple(standby), reported_lags.get(pid, {}))
        records += restore
    return {
        "tasks": len(state.tasks),
        "stateful_tasks": len(state.stateful_task_ids),
        "clients": len(clients),
        "threads": sum(c.num_processing_threads for c in clients.values()),
        "unassigned_tasks": len(completeness.unassigned_tasks),
        "standby_replicas_missing": sum(s.wanted - s.placed for s in completeness.standby_shortfalls),
        "active_tasks_per_client_spread": _spread(active_counts),
        "active_tasks_per_thread_spread": float(max(per_thread) - min(per_thread)) if per_thread else 0.0,
        "state_weight_per_client_spread": _spread(weights),
        "moved_active_tasks": moved,
        "new_standby_tasks": new_standby,
        "records_to_restore": records,
        "cross_rack_active_partitions": cross_rack,
    }


def _spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0
