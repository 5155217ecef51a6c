"""Comparing assignors on the same input: which value of each metric is the better one, and the totals of
a simulated run (how many rebalances, how long to settle, how much moved and was restored).

The engine runs the assignors (``api/compare.py``); this module only judges numbers, so that ``taskassign
compare``, its HTML report and the simulation report all count and mark the same way:

    best = best_values({"high_availability": m1.to_dict(), "state_aware": m2.to_dict()})
    best["records_to_restore"]   # ("state_aware",): the assignors holding the better value
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from taskassign.analysis.metrics import HIGHER, LOWER, metric_fields

__all__ = ("TOTAL_FIELDS", "Comparison", "RunTotals", "TotalField", "best_values", "run_totals")

Number = int | float


@dataclass(frozen=True, slots=True)
class RunTotals:
    """A simulated run as a whole: every rebalance's moves and restores summed, and when it settled."""

    #: Rebalances of the run (the initial one included).
    rebalances: int
    probing_rebalances: int
    #: Whether the run ended with a valid assignment that asked for no further rebalance.
    converged: bool
    #: Offset of the last rebalance from the start when the run converged, else None (never settled).
    settled_at_ms: int | None
    #: Sums over the rebalances of the metrics of the same name.
    active_moves: int
    standby_moves: int
    records_to_restore: int

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in TOTAL_FIELDS}


@dataclass(frozen=True, slots=True)
class TotalField:
    """One run total: its key, which way is better, how it reads in a table, its definition."""

    name: str
    better: str
    label: str
    doc: str


#: The totals in output order. A run that never settled is worse than any that did (``settled_at_ms`` None
#: counts as infinitely late).
TOTAL_FIELDS: tuple[TotalField, ...] = (
    TotalField("rebalances", LOWER, "rebalances", "rebalances of the run, the initial one included"),
    TotalField("probing_rebalances", LOWER, "probing rebalances", "rebalances requested by a probing deadline"),
    TotalField("converged", HIGHER, "converged",
               "the run ended with a valid assignment that asked for no further rebalance"),
    TotalField("settled_at_ms", LOWER, "time to settle",
               "time from the start to the last rebalance, when the run converged"),
    TotalField("active_moves", LOWER, "active tasks moved", "active tasks moved, summed over the rebalances"),
    TotalField("standby_moves", LOWER, "standby replicas moved",
               "standby replicas placed on clients without a copy, summed over the rebalances"),
    TotalField("records_to_restore", LOWER, "records restored",
               "records the placements made clients restore, summed over the rebalances"),
)


def run_totals(
    rebalance_metrics: Iterable[Mapping[str, Number]], *, probing_rebalances: int, settled_at_ms: int | None,
    converged: bool,
) -> RunTotals:
    """The totals of a run from each rebalance's metrics (``AssignmentMetrics.to_dict()`` or a parsed copy;
    a rebalance without metrics, e.g. an invalid one, adds nothing)."""
    count = active = standby = records = 0
    for metrics in rebalance_metrics:
        count += 1
        active += int(metrics.get("active_moves", 0))
        standby += int(metrics.get("standby_moves", 0))
        records += int(metrics.get("records_to_restore", 0))
    return RunTotals(count, probing_rebalances, converged, settled_at_ms if converged else None, active, standby,
                     records)


def _best(values: Mapping[str, Any], better: str) -> tuple[str, ...]:
    """The names holding the better value; none when every value is the same (nothing to choose)."""
    if better not in (LOWER, HIGHER) or len(values) < 2:
        return ()
    keyed = {name: (float("inf") if value is None else float(value)) for name, value in values.items()}
    if len(set(keyed.values())) == 1:
        return ()
    target = min(keyed.values()) if better == LOWER else max(keyed.values())
    return tuple(name for name, value in keyed.items() if value == target)


def best_values(rows: Mapping[str, Mapping[str, Number]]) -> dict[str, tuple[str, ...]]:
    """Per metric (``metric_fields()`` order), the names of ``rows`` with the better value (ties: all of them;
    nothing when all are equal or the metric has no better direction)."""
    return {f.name: _best({name: row[f.name] for name, row in rows.items() if f.name in row}, f.better)
            for f in metric_fields()}


def _best_totals(rows: Mapping[str, RunTotals]) -> dict[str, tuple[str, ...]]:
    return {f.name: _best({name: getattr(t, f.name) for name, t in rows.items()}, f.better) for f in TOTAL_FIELDS}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Several assignors' metrics (and run totals, when simulated) on one input, with the better values marked."""

    #: Assignor name -> its metrics (``AssignmentMetrics.to_dict()``), in the order the user named them.
    metrics: Mapping[str, Mapping[str, Number]]
    #: Assignor name -> its run totals; empty when the input was assigned once (not simulated).
    totals: Mapping[str, RunTotals]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.metrics)

    def best_metrics(self) -> dict[str, tuple[str, ...]]:
        return best_values(self.metrics)

    def best_totals(self) -> dict[str, tuple[str, ...]]:
        return _best_totals(self.totals) if self.totals else {}

    def to_dict(self) -> dict[str, Any]:
        """``{"assignors": {NAME: {"metrics": {...}, "totals": {...} | None}}, "best": {...}}``; ``best`` names,
        per metric and total, the assignors holding the better value."""
        return {
            "assignors": {
                name: {"metrics": dict(self.metrics[name]),
                       "totals": self.totals[name].to_dict() if name in self.totals else None}
                for name in self.names
            },
            "best": {
                "metrics": {k: list(v) for k, v in self.best_metrics().items() if v},
                "totals": {k: list(v) for k, v in self.best_totals().items() if v},
            },
        }
