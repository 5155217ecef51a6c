"""Assignors compared over a fleet: for every metric where lower is better, on how many applications each
assignor is best (alone, or tied), and by how much each differs from the first (the baseline).

The input is each assignor's metrics per application (the pipeline's app_metrics rows of one assignor).
An application counts for a metric only when every assignor measured it (an application rejected, or a
metric unknown, under one assignor is left out of that metric's comparison), so counts are comparable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskassign.analysis.fleet_statistics import percentile

__all__ = ("LOWER_IS_BETTER", "MetricComparison", "compare_assignors")

#: The metrics compared, in output order: each is better lower (a skew, an imbalance, a move, a shortfall, traffic).
#: Metrics the assignor does not choose (tasks, clients) or whose better direction depends on the aim
#: (standby replicas placed, warm-ups) are not compared.
LOWER_IS_BETTER = (
    "unassigned_tasks",
    "missing_standby_replicas",
    "active_load_skew",
    "total_load_skew",
    "thread_active_skew",
    "subtopology_skew_max",
    "state_load_imbalance",
    "thread_state_imbalance",
    "active_moves",
    "standby_moves",
    "records_to_restore",
    "cross_rack_partitions",
    "cross_rack_cost",
    "rack_spread_shortfall",
    "tag_spread_shortfall",
)


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """One metric under one assignor, over the applications every assignor measured (``apps``).

    ``wins``: applications where this assignor alone has the lowest value; ``ties``: where it shares the lowest
    value with another assignor (all of them tying included). ``diff_*``: percentiles of (this assignor's value -
    the baseline's) per application, negative meaning better than the baseline; None for the baseline itself.
    """

    metric: str
    assignor: str
    baseline: str
    apps: int
    wins: int
    ties: int
    diff_p10: float | None
    diff_p50: float | None
    diff_p90: float | None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def compare_assignors(
    metrics: Mapping[str, Mapping[str, Mapping[str, Any]]], names: Sequence[str] = LOWER_IS_BETTER
) -> list[MetricComparison]:
    """``metrics``: assignor -> application id -> that application's metrics (in the order given: the first
    assignor is the baseline). One row per metric of ``names`` that some application has, and assignor."""
    assignors = list(metrics)
    if len(assignors) < 2:
        raise ValueError("comparing assignors takes at least two")
    baseline = assignors[0]
    common = sorted(set.intersection(*(set(metrics[a]) for a in assignors)))
    rows: list[MetricComparison] = []
    for name in names:
        if not any(name in metrics[a][app] for a in assignors for app in common):
            continue  # a metric this run's engine does not measure
        table = [[_number(metrics[a][app].get(name)) for a in assignors] for app in common]
        compared = [values for values in table if None not in values]
        wins = dict.fromkeys(assignors, 0)
        ties = dict.fromkeys(assignors, 0)
        for values in compared:
            best = min(v for v in values if v is not None)
            at_best = [a for a, v in zip(assignors, values, strict=True) if v == best]
            for a in at_best:
                (wins if len(at_best) == 1 else ties)[a] += 1
        for position, assignor in enumerate(assignors):
            diffs = [float(values[position] - values[0]) for values in compared  # type: ignore[operator]
                     ] if position else []
            rows.append(MetricComparison(
                name, assignor, baseline, len(compared), wins[assignor], ties[assignor],
                percentile(diffs, 10), percentile(diffs, 50), percentile(diffs, 90)))
    return rows


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
