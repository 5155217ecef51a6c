"""Judging assignors against each other: the better value per metric and the run totals."""

from __future__ import annotations

from taskassign.analysis.compare import TOTAL_FIELDS, Comparison, RunTotals, best_values, run_totals
from taskassign.analysis.metrics import metric_fields


def _row(**values: float) -> dict[str, int | float]:
    row: dict[str, int | float] = {f.name: f.type(0) for f in metric_fields()}
    row.update(values)
    return row


def test_the_better_value_follows_each_metrics_direction() -> None:
    best = best_values({
        "a": _row(records_to_restore=10, active_tasks=8, tasks=8, thread_state_imbalance=1.5),
        "b": _row(records_to_restore=3, active_tasks=7, tasks=8, thread_state_imbalance=1.5),
        "c": _row(records_to_restore=3, active_tasks=6, tasks=8, thread_state_imbalance=1.1),
    })
    assert best["records_to_restore"] == ("b", "c")  # lower is better; a tie marks both
    assert best["active_tasks"] == ("a",)  # higher is better
    assert best["thread_state_imbalance"] == ("c",)
    assert best["tasks"] == ()  # equal everywhere: nothing to choose
    assert best["previously_unowned_tasks"] == ()


def test_a_size_has_no_better_value_even_when_the_values_differ() -> None:
    best = best_values({"a": _row(standby_replicas=4), "b": _row(standby_replicas=6)})
    assert best["standby_replicas"] == ()


def test_run_totals_sum_the_rebalances_and_settle_only_when_converged() -> None:
    rows = [{"active_moves": 4, "standby_moves": 1, "records_to_restore": 100},
            {"active_moves": 2, "standby_moves": 0, "records_to_restore": 50}, {}]
    totals = run_totals(rows, probing_rebalances=1, settled_at_ms=60_000, converged=True)
    assert totals == RunTotals(3, 1, True, 60_000, 6, 1, 150)
    assert run_totals(rows, probing_rebalances=1, settled_at_ms=60_000, converged=False).settled_at_ms is None
    assert list(totals.to_dict()) == [f.name for f in TOTAL_FIELDS]


def test_a_run_that_never_settled_loses_to_one_that_did() -> None:
    settled = RunTotals(50, 0, True, 3_600_000, 100, 0, 10)
    never = RunTotals(10, 0, False, None, 10, 0, 10)
    comparison = Comparison({"a": _row(), "b": _row()}, {"a": settled, "b": never})
    best = comparison.best_totals()
    assert best["settled_at_ms"] == ("a",) and best["converged"] == ("a",)
    assert best["rebalances"] == ("b",) and best["records_to_restore"] == ()


def test_the_document_has_metrics_totals_and_the_better_values() -> None:
    comparison = Comparison({"a": _row(active_moves=1), "b": _row(active_moves=5)}, {})
    doc = comparison.to_dict()
    assert list(doc["assignors"]) == ["a", "b"]
    assert doc["assignors"]["a"]["totals"] is None and doc["assignors"]["b"]["metrics"]["active_moves"] == 5
    assert doc["best"] == {"metrics": {"active_moves": ["a"]}, "totals": {}}
