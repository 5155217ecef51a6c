"""The applications of a fleet that need attention first: the N worst by each of a few metrics an operator acts
on (state piled on one client, standbys short, records to restore before tasks are ready).

Only applications with something wrong count: a state imbalance above 1.0 (1.0 is even; 0.0 means no state),
a positive shortfall or restore. Ties are broken by application id, so the view is the same on every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ("ATTENTION_METRICS", "DEFAULT_ATTENTION", "AttentionRow", "needs_attention")

#: Metric -> the value above which an application needs attention, in the view's order.
ATTENTION_METRICS: Mapping[str, float] = {
    "state_load_imbalance": 1.0,
    "thread_state_imbalance": 1.0,
    "missing_standby_replicas": 0,
    "records_to_restore": 0,
}
#: Applications per metric unless told otherwise (``pipeline run --attention N``).
DEFAULT_ATTENTION = 10


@dataclass(frozen=True, slots=True)
class AttentionRow:
    """One application among the ``rank``-th worst by ``metric`` (rank 1: the worst)."""

    metric: str
    rank: int
    app_id: str
    assignor: str | None
    status: str | None
    value: float

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def needs_attention(
    apps: Iterable[Mapping[str, Any]], limit: int = DEFAULT_ATTENTION,
    metrics: Mapping[str, float] = ATTENTION_METRICS,
) -> list[AttentionRow]:
    """The ``limit`` worst of ``apps`` (rows with ``app_id``, ``assignor``, ``status`` and metric columns) by each
    metric of ``metrics`` that the rows have, worst first."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    rows: Sequence[Mapping[str, Any]] = list(apps)
    found: list[AttentionRow] = []
    for metric, threshold in metrics.items():
        over = [r for r in rows if r.get(metric) is not None and r[metric] > threshold]
        over.sort(key=lambda r: (-r[metric], r["app_id"], r.get("assignor") or ""))
        found += [AttentionRow(metric, rank, r["app_id"], r.get("assignor"), r.get("status"), float(r[metric]))
                  for rank, r in enumerate(over[:limit], 1)]
    return found
