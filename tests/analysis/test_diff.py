"""Before -> after diffs of assignments: totals, per client gains and losses, metric changes, data to move."""

from __future__ import annotations

from taskassign.analysis.diff import diff_assignments
from taskassign.analysis.metrics import compute_metrics
from taskassign.api.application import read_application
from taskassign.api.assign import assign
from taskassign.ids import ProcessId, TaskId
from taskassign.model import KafkaStreamsAssignment
from tests.helpers import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
P1, P2, P3 = (ProcessId(f"00000000-0000-0000-0000-00000000000{i}") for i in (1, 2, 3))
T = [TaskId.parse(t) for t in ("0_0", "0_1", "0_2")]


def _a(pid: ProcessId, active: list[TaskId], standby: list[TaskId] = []) -> KafkaStreamsAssignment:  # noqa: B006
    return KafkaStreamsAssignment.of_tasks(pid, active, standby)


def test_totals_and_per_client_changes_without_an_application() -> None:
    before = {P1: _a(P1, [T[0], T[1]], [T[2]]), P2: _a(P2, [T[2]], [T[0]])}
    # 0_0 is promoted on P2 (it held the standby), 0_1 moves to the new client P3, P1 keeps 0_2's standby
    after = {P1: _a(P1, [], [T[2]]), P2: _a(P2, [T[2], T[0]]), P3: _a(P3, [T[1]], [T[0]])}
    diff = diff_assignments(before, after)
    assert (diff.replicas_moved, diff.actives_moved, diff.promotions, diff.standbys_moved) == (2, 2, 1, 1)
    assert (diff.clients_before, diff.clients_after) == (2, 3)
    by_pid = {c.process_id: c for c in diff.clients}
    assert by_pid[P1].active_lost == (T[0], T[1]) and not by_pid[P1].active_gained
    assert by_pid[P2].active_gained == (T[0],) and by_pid[P2].standby_lost == (T[0],)
    assert by_pid[P3].status == "added" and by_pid[P3].active_gained == (T[1],)
    assert diff.data_bytes is None and diff.records_to_restore is None
    assert any("needs the application" in u for u in diff.unavailable)
    assert any(u.startswith("metrics: none for before and after") for u in diff.unavailable)


def test_identical_assignments_change_nothing() -> None:
    same = {P1: _a(P1, [T[0]], [T[1]])}
    diff = diff_assignments(same, same)
    assert diff.replicas_moved == diff.actives_moved == 0 and not diff.changed_clients


def test_with_the_application_data_and_metrics_are_compared() -> None:
    scenario = read_application(EXAMPLE)
    before = assign(scenario, "identity").result.group.clients
    after = assign(scenario, "high_availability").result.group.clients
    diff = diff_assignments(before, after, state=scenario.state, before_metrics=compute_metrics(scenario.state, before),
                            after_metrics=compute_metrics(scenario.state, after))
    # every new replica of a changelog task restores its new holder's lag: the same total the metrics report
    assert diff.records_to_restore == compute_metrics(scenario.state, after).records_to_restore
    assert diff.data_bytes is not None and diff.data_bytes > 0
    names = {m.name for m in diff.metrics}
    assert "standby_replicas" in names and "tasks" not in names  # unchanged metrics are left out
    assert all(m.before != m.after for m in diff.metrics)
    assert any(m.name == "state_load" for c in diff.clients for m in c.metrics)
    assert diff.to_document()["totals"]["records_to_restore"] == diff.records_to_restore
