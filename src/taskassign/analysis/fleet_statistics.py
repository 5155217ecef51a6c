"""Statistics over a fleet's per-application metrics, shared by the fleet summary, the assignor comparison and
the needs-attention view: which metrics may be summed, and percentiles computed one way everywhere.

A sum over applications means something only for counts of things (tasks, moves, records to restore,
partitions read across racks): the fleet's total. A skew, an imbalance, a largest or smallest load is a
property of one application; summed over a fleet it is a number of no unit, so it is summarised by its
distribution (median, p90, max) instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ("NON_ADDITIVE_SUFFIXES", "is_additive", "percentile")

#: Metric names ending so are per-application properties (a maximum, minimum, difference or ratio): never summed.
NON_ADDITIVE_SUFFIXES = ("_max", "_min", "_skew", "_imbalance")


def is_additive(metric: str) -> bool:
    """True for a metric whose sum over applications is a fleet total (a count of tasks, moves, records...)."""
    return not metric.endswith(NON_ADDITIVE_SUFFIXES)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``values`` (linear interpolation between neighbours, as numpy's default
    and Spark's ``percentile``); None for no values."""
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))
