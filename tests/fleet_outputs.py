"""A pipeline output written straight with pyarrow (the run's own schemas, no Spark run): for the fleet page and
``pipeline export`` at any size, 10,000 applications included, in a second."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark", reason="the output schemas are Spark's (pip install 'taskassign[spark]')")

from pyspark.sql.pandas.types import to_arrow_schema

from taskassign.analysis.metrics import metric_fields
from taskassign.pipeline.schemas import ASSIGNOR_COMPARISON, OUTPUT_SCHEMAS

__all__ = ("write_fleet_output",)


def _table(name: str, rows: list[dict[str, Any]], assignors: tuple[str, ...]) -> pa.Table:
    schema = to_arrow_schema(ASSIGNOR_COMPARISON if name == "assignor_comparison" else OUTPUT_SCHEMAS[name])
    if assignors and "assignor" not in schema.names:
        schema = schema.append(pa.field("assignor", pa.string()))
    return pa.Table.from_pylist(rows, schema=schema)


def _metrics(rng: random.Random, tasks: int) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for f in metric_fields():
        values[f.name] = round(rng.random() * 3, 3) if f.type is float else rng.randrange(0, tasks + 1)
    values.update(tasks=tasks, clients=rng.randrange(2, 12), records_to_restore=rng.randrange(0, 10**7),
                  missing_standby_replicas=rng.choice((0, 0, 0, 1, 3)))
    return values


def write_fleet_output(directory: Path, apps: int, *, assignors: tuple[str, ...] = (), seed: int = 1,
                       rejected: int = 2) -> Path:
    """A complete output of ``apps`` applications (the last ``rejected`` REJECTED, one flagged
    END_OFFSETS_UNKNOWN), run by each of ``assignors`` (a comparison run) or by high_availability."""
    rng = random.Random(seed)
    passes = assignors or ("high_availability",)
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in OUTPUT_SCHEMAS}
    for i in range(apps):
        app_id = f"app-{i:05d}"
        tasks = rng.randrange(4, 200)
        is_rejected = i >= apps - rejected
        for assignor in passes:
            tag = {"assignor": assignor} if assignors else {}
            if is_rejected:
                tables["app_metrics"].append({"app_id": app_id, "status": "REJECTED", "reason_code": "INVALID_CONFIG",
                                              "reason": "config 'num.standby.replicas': must be >= 0, got -1",
                                              "assignor": assignor})
                tables["errors"].append({"table": "applications", "app_id": app_id, "effect": "rejected",
                                         "reason_code": "INVALID_CONFIG", "reason": "config 'num.standby.replicas': "
                                         "must be >= 0, got -1", "source_row": json.dumps({"app_id": app_id}),
                                         **tag})
                continue
            tables["app_metrics"].append({"app_id": app_id, "status": "ASSIGNED", "assignor": assignor,
                                          "error": "NONE", "probing_rebalance_needed": False,
                                          "end_offsets_known": i != 0, **_metrics(rng, tasks)})
            tables["client_assignments"].append({"app_id": app_id, "process_id": "p1", "status": "ASSIGNED",
                                                 "rack": "rack-a", "num_threads": 1, "num_active": 1,
                                                 "num_standby": 0, "active_tasks": ["0_0"], "standby_tasks": [],
                                                 "followup_rebalance_deadline_ms": None, "records_to_restore": 0,
                                                 "state_load": 1, "active_moves_in": 0, **tag})
            if i == 0:
                tables["errors"].append({"table": "applications", "app_id": app_id, "effect": "flagged",
                                         "reason_code": "END_OFFSETS_UNKNOWN", "reason": "a changelog partition "
                                         "has no end offset", "source_row": "{}", **tag})
    for assignor in passes:
        ran = [r for r in tables["app_metrics"] if r["status"] != "REJECTED" and r["assignor"] == assignor]
        tag = {"assignor": assignor} if assignors else {}
        for metric in ("state_load_imbalance", "records_to_restore"):
            worst = sorted(ran, key=lambda r, m=metric: (-r[m], r["app_id"]))[:10]
            tables["needs_attention"] += [{"metric": metric, "rank": n + 1, "app_id": r["app_id"],
                                           "assignor": assignor, "status": "ASSIGNED", "value": float(r[metric])}
                                          for n, r in enumerate(worst)]
        for f in metric_fields():
            values = sorted(float(r[f.name]) for r in ran)
            tables["fleet_metrics"].append({"metric": f.name, "apps": len(values), "sum": sum(values),
                                            "mean": sum(values) / len(values), "min": values[0],
                                            "p50": values[len(values) // 2], "p90": values[len(values) * 9 // 10],
                                            "p95": values[len(values) * 19 // 20], "max": values[-1], **tag})
    if assignors:
        tables["assignor_comparison"] = [
            {"metric": "active_moves", "assignor": a, "baseline": assignors[0], "apps": apps - rejected,
             "wins": 3, "ties": 1, "diff_p10": None if a == assignors[0] else -2.0,
             "diff_p50": None if a == assignors[0] else -1.0, "diff_p90": None if a == assignors[0] else 0.0}
            for a in assignors]
    directory.mkdir(parents=True, exist_ok=True)
    outputs = {}
    for name, rows in tables.items():
        (directory / name).mkdir()
        pq.write_table(_table(name, rows, assignors), directory / name / "part-00000.parquet")
        outputs[name] = {"path": name, "rows": len(rows)}
    by_status = {"ASSIGNED": apps - rejected, "REJECTED": rejected} if rejected else {"ASSIGNED": apps}
    manifest = {
        "format": "taskassign/pipeline-manifest/v1", "complete": True, "taskassign_version": "0.1.0",
        "started_at": "2026-11-21T18:30:00+00:00",
        "input": {"directory": "/data/snapshot", "tables": {}},
        "options": {"assignor": None, "attention": 10, **({"assignors": list(assignors)} if assignors else {})},
        "rows": {"applications": {"in": apps, "used": apps - rejected, "rejected": rejected}},
        "reconciled": True, "applications": {"total": apps, "by_status": by_status},
        "errors": {"rejected": {"INVALID_CONFIG": rejected}}, "outputs": outputs,
    }
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return directory
