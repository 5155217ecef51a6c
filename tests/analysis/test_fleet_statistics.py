"""Fleet-wide statistics: which metrics may be summed, the comparison of assignors and the needs-attention view."""

from __future__ import annotations

import pytest

from taskassign.analysis.attention import needs_attention
from taskassign.analysis.fleet_comparison import LOWER_IS_BETTER, compare_assignors
from taskassign.analysis.fleet_statistics import is_additive, percentile
from taskassign.analysis.metrics import metric_fields


def test_only_counts_are_additive() -> None:
    additive = {f.name for f in metric_fields() if is_additive(f.name)}
    assert {"tasks", "active_moves", "records_to_restore", "missing_standby_replicas", "cross_rack_partitions",
            "standby_replicas"} <= additive
    for name in ("active_load_skew", "state_load_imbalance", "state_load_max", "thread_active_min",
                 "subtopology_skew_max", "total_load_skew"):
        assert not is_additive(name), name
    assert not is_additive("thread_state_imbalance")  # a metric still to come is classified by its name


def test_percentile_interpolates_linearly() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([1, 2, 3, 4], 90) == pytest.approx(3.7)
    assert percentile([], 50) is None


def _apps(**values: list[float | None]) -> dict[str, dict[str, float | None]]:
    """app-i -> {metric: values[metric][i]}."""
    count = len(next(iter(values.values())))
    return {f"app-{i}": {m: v[i] for m, v in values.items()} for i in range(count)}


def test_wins_ties_and_differences_against_the_baseline() -> None:
    rows = compare_assignors({
        "ha": _apps(active_moves=[5, 3, 2, 0], records_to_restore=[10, 10, 10, 10]),
        "sa": _apps(active_moves=[1, 3, 4, 0], records_to_restore=[0, 20, 10, 40]),
    })
    by = {(r.metric, r.assignor): r for r in rows}
    ha, sa = by["active_moves", "ha"], by["active_moves", "sa"]
    assert (ha.apps, ha.wins, ha.ties) == (4, 1, 2) and (sa.wins, sa.ties) == (1, 2)
    assert ha.diff_p50 is None and ha.baseline == "ha" == sa.baseline
    assert sa.diff_p50 == 0.0 and sa.diff_p10 == pytest.approx(-2.8) and sa.diff_p90 == pytest.approx(1.4)
    restore = by["records_to_restore", "sa"]
    assert (restore.wins, restore.ties, by["records_to_restore", "ha"].wins) == (1, 1, 2)
    assert restore.diff_p90 == pytest.approx(24.0)  # diffs -10, 0, 10, 30: 10 + 0.7 x 20
    assert [r.metric for r in rows] == ["active_moves", "active_moves", "records_to_restore", "records_to_restore"]


def test_an_application_counts_only_where_every_assignor_measured_it() -> None:
    rows = compare_assignors({
        "a": {"x": {"active_moves": 1}, "y": {"active_moves": None}, "only-a": {"active_moves": 9}},
        "b": {"x": {"active_moves": 2}, "y": {"active_moves": 0}},
        "c": {"x": {"active_moves": 1}, "y": {"active_moves": 0}},
    })
    by = {r.assignor: r for r in rows}
    assert {r.apps for r in rows} == {1}
    assert (by["a"].wins, by["a"].ties, by["b"].ties, by["c"].ties) == (0, 1, 0, 1)
    assert by["b"].diff_p50 == 1.0 and by["c"].diff_p50 == 0.0


def test_comparing_takes_two_assignors_and_skips_unmeasured_metrics() -> None:
    with pytest.raises(ValueError, match="at least two"):
        compare_assignors({"a": {}})
    rows = compare_assignors({"a": _apps(active_moves=[1]), "b": _apps(active_moves=[1])})
    assert {r.metric for r in rows} == {"active_moves"}
    assert "thread_state_imbalance" in LOWER_IS_BETTER  # compared as soon as the engine measures it


def test_needs_attention_lists_the_worst_over_each_threshold() -> None:
    apps = [
        {"app_id": "b", "assignor": "ha", "status": "ASSIGNED", "state_load_imbalance": 1.5,
         "missing_standby_replicas": 0, "records_to_restore": 7},
        {"app_id": "a", "assignor": "ha", "status": "ASSIGNED", "state_load_imbalance": 1.5,
         "missing_standby_replicas": 2, "records_to_restore": 0},
        {"app_id": "c", "assignor": "ha", "status": "KEPT_PREVIOUS", "state_load_imbalance": 1.0,
         "missing_standby_replicas": None, "records_to_restore": 900},
        {"app_id": "d", "assignor": "ha", "status": "ASSIGNED", "state_load_imbalance": 3.0,
         "missing_standby_replicas": 1, "records_to_restore": 8},
    ]
    rows = [(r.metric, r.rank, r.app_id, r.value) for r in needs_attention(apps, 2)]
    assert rows == [
        ("state_load_imbalance", 1, "d", 3.0), ("state_load_imbalance", 2, "a", 1.5),  # a before b: a tie
        ("missing_standby_replicas", 1, "a", 2.0), ("missing_standby_replicas", 2, "d", 1.0),
        ("records_to_restore", 1, "c", 900.0), ("records_to_restore", 2, "d", 8.0),
    ]
    assert needs_attention(apps, 0) == []
    with pytest.raises(ValueError):
        needs_attention(apps, -1)
