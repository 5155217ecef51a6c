"""Before -> after: what changes between two assignments of one application, in the manner of Cruise Control's
proposal summary: totals first (replicas moved, actives moved, data to move), then per client the tasks gained and
lost (active and standby) and the metrics that changed.

A *replica* is a task held by a client, as active or standby. Moving one means restoring its state on the new
client; an active that moves to a client already holding the task as standby moves no data (a promotion). What
the data costs needs the application (state sizes, the clients' lags): without it the diff says so rather than
guessing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskassign.analysis.metrics import AssignmentMetrics
from taskassign.ids import ProcessId, TaskId, saturated_long
from taskassign.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    AssignedTask,
    KafkaStreamsAssignment,
)

__all__ = ("DIFF_FORMAT", "AssignmentDiff", "ClientDiff", "MetricChange", "diff_assignments")

DIFF_FORMAT = "taskassign/assignment-diff/v1"
Number = int | float
#: Per-client metrics compared (``ClientMetrics`` attributes), in output order.
CLIENT_METRICS = ("active", "standby", "active_load", "total_load", "state_load", "records_to_restore")


@dataclass(frozen=True, slots=True)
class MetricChange:
    """One metric whose value differs: ``before`` or ``after`` is None where that side has no value."""

    name: str
    before: Number | None
    after: Number | None


@dataclass(frozen=True, slots=True)
class ClientDiff:
    """One client's change: ``status`` is ``kept``, ``added`` (only after) or ``removed`` (only before)."""

    process_id: ProcessId
    status: str
    active_gained: tuple[TaskId, ...]
    active_lost: tuple[TaskId, ...]
    standby_gained: tuple[TaskId, ...]
    standby_lost: tuple[TaskId, ...]
    tasks_before: int
    tasks_after: int
    metrics: tuple[MetricChange, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.status != "kept" or self.active_gained or self.active_lost or self.standby_gained
                    or self.standby_lost or self.metrics)


@dataclass(frozen=True, slots=True)
class AssignmentDiff:
    """The whole change; ``data_bytes`` / ``records_to_restore`` are None when the application is unknown, and
    ``unavailable`` says what could not be computed and why."""

    replicas_moved: int
    actives_moved: int
    standbys_moved: int
    promotions: int
    data_bytes: int | None
    records_to_restore: int | None
    clients_before: int
    clients_after: int
    clients: tuple[ClientDiff, ...]
    metrics: tuple[MetricChange, ...]
    unavailable: tuple[str, ...]

    @property
    def changed_clients(self) -> tuple[ClientDiff, ...]:
        return tuple(c for c in self.clients if c.changed)

    def to_document(self) -> dict[str, Any]:
        """The diff as JSON-ready data (full values, task ids as strings)."""
        return {
            "format": DIFF_FORMAT,
            "totals": {
                "replicas_moved": self.replicas_moved, "actives_moved": self.actives_moved,
                "standbys_moved": self.standbys_moved, "promotions": self.promotions,
                "data_bytes_to_move": self.data_bytes, "records_to_restore": self.records_to_restore,
                "clients_before": self.clients_before, "clients_after": self.clients_after,
            },
            "metrics": {m.name: {"before": m.before, "after": m.after} for m in self.metrics},
            "clients": {
                str(c.process_id): {
                    "status": c.status,
                    "active_gained": [str(t) for t in c.active_gained],
                    "active_lost": [str(t) for t in c.active_lost],
                    "standby_gained": [str(t) for t in c.standby_gained],
                    "standby_lost": [str(t) for t in c.standby_lost],
                    "tasks_before": c.tasks_before, "tasks_after": c.tasks_after,
                    "metrics": {m.name: {"before": m.before, "after": m.after} for m in c.metrics},
                }
                for c in self.changed_clients
            },
            "unavailable": list(self.unavailable),
        }


def diff_assignments(
    before: Mapping[ProcessId, KafkaStreamsAssignment],
    after: Mapping[ProcessId, KafkaStreamsAssignment],
    *,
    state: ApplicationState | None = None,
    before_metrics: AssignmentMetrics | Mapping[str, Number] | None = None,
    after_metrics: AssignmentMetrics | Mapping[str, Number] | None = None,
) -> AssignmentDiff:
    """What changes from ``before`` to ``after``. ``state`` is the application ``after`` was computed for (its
    state sizes and lags price the data to move); metrics, when given for both sides, are compared too (an
    ``AssignmentMetrics`` per client as well, a mapping such as an assignment file's ``metrics`` in total only)."""
    unavailable: list[str] = []
    pids = sorted(set(before) | set(after))
    clients = tuple(_client_diff(pid, before.get(pid), after.get(pid), before_metrics, after_metrics) for pid in pids)
    before_active = _owners(before, active=True)
    after_active = _owners(after, active=True)
    held_before = {(t, pid) for pid, a in before.items() for t in a.tasks}
    new_replicas = sorted({(t, pid) for pid, a in after.items() for t in a.tasks} - held_before)
    actives_moved = sum(1 for t, owner in after_active.items() if before_active.get(t, owner) != owner)
    promotions = sum(1 for t, owner in after_active.items()
                     if before_active.get(t, owner) != owner and (t, owner) in held_before)
    standbys_moved = sum(1 for t, pid in new_replicas if after[pid].tasks[t].type is AssignedTask.Type.STANDBY)
    data_bytes = records = None
    if state is None:
        unavailable.append("data to move (state bytes, records to restore): needs the application (--scenario)")
    else:
        data_bytes, records = _data_to_move(state, new_replicas, unavailable)
    metric_changes: tuple[MetricChange, ...] = ()
    if before_metrics is None or after_metrics is None:
        missing = " and ".join(side for side, m in (("before", before_metrics), ("after", after_metrics)) if m is None)
        unavailable.append(f"metrics: none for {missing} (write them with `assign --metrics`, or give --scenario; "
                           "a what-if's assignment needs its own --metrics)")
    else:
        metric_changes = _changes(_summary(before_metrics), _summary(after_metrics))
    return AssignmentDiff(
        replicas_moved=len(new_replicas), actives_moved=actives_moved, standbys_moved=standbys_moved,
        promotions=promotions, data_bytes=data_bytes, records_to_restore=records,
        clients_before=len(before), clients_after=len(after), clients=clients, metrics=metric_changes,
        unavailable=tuple(unavailable),
    )


def _owners(assignment: Mapping[ProcessId, KafkaStreamsAssignment], *, active: bool) -> dict[TaskId, ProcessId]:
    owners: dict[TaskId, ProcessId] = {}
    for pid in sorted(assignment):
        for t in (assignment[pid].active_tasks() if active else assignment[pid].standby_tasks()):
            owners.setdefault(t, pid)
    return owners


def _client_diff(pid: ProcessId, before: KafkaStreamsAssignment | None, after: KafkaStreamsAssignment | None,
                 before_metrics: object, after_metrics: object) -> ClientDiff:
    def tasks(a: KafkaStreamsAssignment | None, active: bool) -> set[TaskId]:
        if a is None:
            return set()
        return set(a.active_tasks() if active else a.standby_tasks())

    ab, aa, sb, sa = tasks(before, True), tasks(after, True), tasks(before, False), tasks(after, False)
    status = "kept" if before is not None and after is not None else ("added" if before is None else "removed")
    metrics: tuple[MetricChange, ...] = ()
    if isinstance(before_metrics, AssignmentMetrics) and isinstance(after_metrics, AssignmentMetrics):
        metrics = _changes(_client_row(before_metrics, pid), _client_row(after_metrics, pid))
    return ClientDiff(pid, status, tuple(sorted(aa - ab)), tuple(sorted(ab - aa)), tuple(sorted(sa - sb)),
                      tuple(sorted(sb - sa)), len(ab) + len(sb), len(aa) + len(sa), metrics)


def _client_row(metrics: AssignmentMetrics, pid: ProcessId) -> dict[str, Number]:
    for row in metrics.client_metrics:
        if row.process_id == pid:
            return {name: getattr(row, name) for name in CLIENT_METRICS}
    return {}


def _summary(metrics: AssignmentMetrics | Mapping[str, Number]) -> dict[str, Number]:
    return metrics.to_dict() if isinstance(metrics, AssignmentMetrics) else dict(metrics)


def _changes(before: Mapping[str, Number], after: Mapping[str, Number]) -> tuple[MetricChange, ...]:
    names = list(before) + [n for n in after if n not in before]
    return tuple(MetricChange(n, before.get(n), after.get(n)) for n in names if before.get(n) != after.get(n))


def _data_to_move(state: ApplicationState, new_replicas: list[tuple[TaskId, ProcessId]],
                  unavailable: list[str]) -> tuple[int | None, int]:
    """State bytes and changelog records the new replicas restore: each client's lag for the task (a client the
    application does not know, or an unknown lag, restores the whole changelog)."""
    sized = any(info.state_bytes is not None for info in state.tasks.values())
    data = records = 0
    for task, pid in new_replicas:
        info = state.tasks.get(task)
        if info is None:
            continue
        data = saturated_long(data + (info.state_bytes or 0))
        if task not in state.changelog_end_offset_sums:
            continue
        end = state.changelog_end_offset_sums[task]
        client = state.clients.get(pid)
        lag = client.lag_for(task) if client is not None else UNKNOWN_OFFSET_SUM
        restore = 0 if lag == LATEST_OFFSET else max(0, end) if lag == UNKNOWN_OFFSET_SUM else lag
        records = saturated_long(records + restore)
    if not sized:
        unavailable.append("data to move in bytes: the application gives no state_bytes (records are counted)")
    return (data if sized else None), records
