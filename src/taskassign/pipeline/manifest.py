"""The run manifest: what went in, what was used and rejected (reconciled per table), what came out.

Built from the tables the driver assembled (pipeline.assemble), so it costs no Spark job. ``rows[table]``:
``in`` counted from the snapshot as read, ``used`` summed from the per-application ``source_rows`` of the
applications the engine ran, ``rejected`` counted from the errors table; ``reconciled`` says
``in == used + rejected`` for every table, which is checked, not assumed: ``in`` is counted by Spark as it
reads, the other two by the buckets' Python side, and a row the Python side lost or counted twice breaks it.
"""

from __future__ import annotations

import importlib.metadata
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pyarrow.compute as pc

from taskassign.fleet import reasons
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.pipeline.assemble import Assembled

__all__ = ("OUTPUT_TABLES", "build_comparison_manifest", "build_manifest", "taskassign_version")

#: The tables a run writes, in the order the manifest lists them.
OUTPUT_TABLES = ("client_assignments", "consumer_assignments", "app_metrics", "fleet_metrics", "needs_attention",
                 "errors")
_TIMINGS = ("build_seconds", "engine_seconds", "metrics_seconds")


def build_manifest(assembled: Assembled, rows_in: Mapping[str, int], header: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest of a run: its ``assembled`` outputs and timings, and the input rows as read."""
    apps = assembled.apps
    ran = apps.filter(pc.not_equal(apps["status"], reasons.STATUS_REJECTED))
    used = {name: int(pc.sum(pc.struct_field(ran["source_rows"], name)).as_py() or 0) for name in INPUT_TABLES}
    errors = assembled.errors.select(["table", "effect", "reason_code"]).to_pylist()
    rejected = Counter(e["table"] for e in errors if e["effect"] == reasons.EFFECT_REJECTED)
    by_reason: dict[str, Counter[str]] = {reasons.EFFECT_REJECTED: Counter(), reasons.EFFECT_FLAGGED: Counter()}
    for e in errors:
        by_reason[e["effect"]][e["reason_code"]] += 1
    statuses = Counter(apps["status"].to_pylist())
    rows = {name: {"in": rows_in[name], "used": used[name], "rejected": rejected.get(name, 0)}
            for name in INPUT_TABLES}
    return {
        "taskassign_version": taskassign_version(),
        **header,
        "rows": rows,
        "reconciled": all(r["in"] == r["used"] + r["rejected"] for r in rows.values()),
        "applications": {"total": sum(statuses.values()), "by_status": dict(sorted(statuses.items()))},
        "errors": {effect: dict(sorted(codes.items())) for effect, codes in by_reason.items()},
        "outputs": {name: {"path": name, "rows": assembled.rows[name]}
                    for name in (*OUTPUT_TABLES, *sorted(set(assembled.rows) - set(OUTPUT_TABLES)))},
        "timings": {**assembled.timings,
                    **{name: round(float(pc.sum(apps[name]).as_py() or 0.0), 3) for name in _TIMINGS}},
    }


def build_comparison_manifest(
    assembled: Mapping[str, Assembled], written: Mapping[str, int], rows_in: Mapping[str, int],
    header: Mapping[str, Any],
) -> dict[str, Any]:
    """The manifest of a comparison run (one pass per assignor, ``assembled`` in the order given): the first
    assignor's accounting at the top, as a single run's, every assignor's under ``assignors``, ``reconciled``
    only when every pass reconciles, ``outputs`` the combined tables, ``timings`` summed over the passes."""
    manifests = {name: build_manifest(a, rows_in, header) for name, a in assembled.items()}
    first = next(iter(manifests.values()))
    timings = {key: round(sum(m["timings"][key] for m in manifests.values()), 3) for key in first["timings"]}
    return {
        **first,
        "reconciled": all(m["reconciled"] for m in manifests.values()),
        "assignors": {name: {key: m[key] for key in ("rows", "reconciled", "applications", "errors")}
                      for name, m in manifests.items()},
        "outputs": {name: {"path": name, "rows": rows} for name, rows in written.items()},
        "timings": timings,
    }


def taskassign_version() -> str:
    """The installed taskassign's version, for the manifest (read from the package metadata, so that
    the pipeline needs nothing from the package's top; "unknown" for an uninstalled source tree)."""
    try:
        return importlib.metadata.version("taskassign")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
