"""An application's result as rows of the pipeline's output tables (docs/pipeline.md, Outputs).

The Python side flattens results itself, so Spark writes flat rows and never explodes nested ones.
"""

from __future__ import annotations

from typing import Any

from taskassign.analysis.metrics import metric_fields
from taskassign.fleet.application import AppResult

__all__ = ("app_row", "client_rows", "consumer_rows")

_APP_COLUMNS = ("app_id", "status", "reason_code", "reason", "assignor", "error", "probing_rebalance_needed",
                "end_offsets_known", "source_rows", "build_seconds", "engine_seconds", "metrics_seconds")


def app_row(result: AppResult) -> dict[str, Any]:
    """The app_metrics row (status, outcome, every summary metric; null metrics when the engine did not
    measure the application), plus what the manifest reads: source rows used and timings."""
    metrics = result["metrics"] or {}
    row: dict[str, Any] = {name: result[name] for name in _APP_COLUMNS}  # type: ignore[literal-required]
    row.update({f.name: metrics.get(f.name) for f in metric_fields()})
    return row


def client_rows(result: AppResult) -> list[dict[str, Any]]:
    """One client_assignments row per client of an application the engine ran."""
    return [{"app_id": result["app_id"], "status": result["status"], **client,
             "num_active": len(client["active_tasks"]), "num_standby": len(client["standby_tasks"])}
            for client in result["clients"]]


def consumer_rows(result: AppResult) -> list[dict[str, Any]]:
    """One consumer_assignments row per consumer (thread), when the leader spread the tasks over threads."""
    return [{"app_id": result["app_id"], **consumer} for consumer in result["consumers"]]
