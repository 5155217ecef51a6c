"""What the fleet page shows, read from a pipeline output with pyarrow (no Spark): outcomes per assignor, the
main metrics' values, the applications that need attention with every reason, the rejected input rows, and the
assignor comparison. Only the columns the page shows are read, so a 10,000-application output reads in a
moment.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskassign.pipeline.results import FleetOutput, read_fleet_output
from taskassign.report.svg import short_number

__all__ = ("APP_COLUMNS", "DISTRIBUTIONS", "MAX_REJECTED_ROWS", "Attention", "FleetData", "read_fleet_data")

#: The metrics drawn as distributions, in page order (each defined in docs/metrics.md).
DISTRIBUTIONS = ("tasks", "clients", "active_load_skew", "thread_active_skew", "state_load_imbalance",
                 "active_moves", "records_to_restore", "missing_standby_replicas", "cross_rack_partitions")
#: The columns of the applications table on the page.
APP_COLUMNS = ("app_id", "assignor", "status", "tasks", "clients", "active_moves", "records_to_restore",
               "state_load_imbalance", "missing_standby_replicas", "cross_rack_partitions", "reason_code")
#: Rejected rows the page carries (the counts cover them all; the rest are in the errors table).
MAX_REJECTED_ROWS = 5_000
#: Characters of a rejected row's source shown (a raw line can be megabytes; the errors table has all of it).
MAX_SOURCE_CHARS = 600


@dataclass(frozen=True)
class Attention:
    """One application (under one assignor) to look at, with every reason: the needs-attention metrics it is among
    the worst of, and the flags of the errors table."""

    app_id: str
    assignor: str
    status: str
    reasons: tuple[str, ...]
    #: The assignor the application ran with (its own, or the run's ``--assignor``): the one to assign it with.
    ran_with: str = ""


@dataclass(frozen=True)
class FleetData:
    """One pipeline output as the page shows it. ``assignors`` is empty for a single run; per-assignor mappings
    are keyed by assignor name, or by ``""`` for a single run."""

    source: str
    manifest: Mapping[str, Any]
    assignors: tuple[str, ...]
    by_status: Mapping[str, Mapping[str, int]]
    fleet_metrics: Mapping[str, Sequence[Mapping[str, Any]]]
    distributions: Mapping[str, Mapping[str, Sequence[float]]]
    attention: Sequence[Attention]
    apps: Sequence[Sequence[Any]]
    rejected_counts: Sequence[tuple[str, str, int]]
    rejected_rows: Sequence[tuple[str, str, str, str, str]]
    rejected_total: int
    comparison: Sequence[Mapping[str, Any]]

    @property
    def keys(self) -> tuple[str, ...]:
        """The per-assignor keys: the assignors, or ``("",)`` for a single run."""
        return self.assignors or ("",)

    @property
    def snapshot(self) -> str:
        """The snapshot directory the run read (for the commands the page suggests)."""
        return str(self.manifest.get("input", {}).get("directory") or "SNAPSHOT")


def _key(row: Mapping[str, Any], assignors: Sequence[str]) -> str:
    return str(row.get("assignor") or "") if assignors else ""


def _attention(output: FleetOutput, assignors: Sequence[str]) -> list[Attention]:
    """Every application of needs_attention or flagged in errors, worst metric rank first, then by id."""
    reasons: dict[tuple[str, str], list[str]] = defaultdict(list)
    status: dict[tuple[str, str], str] = {}
    best_rank: dict[tuple[str, str], int] = {}
    for row in output.read("needs_attention").to_pylist():
        key = (str(row["app_id"]), _key(row, assignors))
        reasons[key].append(f"{row['metric']} {short_number(float(row['value']))} (worst #{row['rank']})")
        status[key] = str(row["status"])
        best_rank[key] = min(best_rank.get(key, 10**9), int(row["rank"]))
    errors = output.read("errors")
    columns = ["app_id", "effect", "reason_code", "reason", *(["assignor"] if assignors else [])]
    for row in errors.select(columns).to_pylist():
        if row["effect"] != "flagged":
            continue
        key = (str(row["app_id"]), _key(row, assignors))
        reasons[key].append(f"{row['reason_code']}: {row['reason']}")
        best_rank.setdefault(key, 10**9)
    ran_with: dict[tuple[str, str], str] = {}
    for row in output.read("app_metrics", ["app_id", "assignor", "status"]).to_pylist():
        key = (str(row["app_id"]), _key(row, assignors))
        status.setdefault(key, str(row["status"]))
        ran_with[key] = str(row["assignor"] or "")
    order = sorted(reasons, key=lambda k: (best_rank[k], k[0], assignors.index(k[1]) if k[1] in assignors else 0))
    return [Attention(app, assignor, status.get((app, assignor), ""), tuple(reasons[(app, assignor)]),
                      ran_with.get((app, assignor), assignor)) for app, assignor in order]


def _rejected(output: FleetOutput, assignors: Sequence[str]) -> tuple[list[tuple[str, str, int]],
                                                                       list[tuple[str, str, str, str, str]], int]:
    """Rejected input rows: counts by (table, reason_code), and the first MAX_REJECTED_ROWS rows (the baseline's,
    in a comparison run, where every pass rejects the same rows)."""
    columns = ["table", "app_id", "effect", "reason_code", "reason", "source_row", *(["assignor"] if assignors else [])]
    counts: Counter[tuple[str, str]] = Counter()
    rows: list[tuple[str, str, str, str, str]] = []
    total = 0
    for batch in output.read("errors", columns).to_batches():
        for row in batch.to_pylist():
            if row["effect"] != "rejected" or (assignors and row.get("assignor") != assignors[0]):
                continue
            total += 1
            counts[(str(row["table"]), str(row["reason_code"]))] += 1
            if len(rows) < MAX_REJECTED_ROWS:
                source = str(row["source_row"] or "")
                if len(source) > MAX_SOURCE_CHARS:
                    source = f"{source[:MAX_SOURCE_CHARS]}… ({len(source) - MAX_SOURCE_CHARS:,} more characters)"
                rows.append((str(row["table"]), str(row["app_id"] or ""), str(row["reason_code"]),
                             str(row["reason"] or ""), source))
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(table, code, n) for (table, code), n in ordered], rows, total


def read_fleet_data(path: str | Path) -> FleetData:
    """The fleet page's data from the pipeline output at ``path``."""
    output = read_fleet_output(path)
    assignors = output.assignors
    keys = assignors or ("",)
    schema = output.columns("app_metrics")
    wanted = [c for c in dict.fromkeys((*APP_COLUMNS, *DISTRIBUTIONS)) if c in schema]
    app_rows = output.read("app_metrics", wanted).to_pylist()
    by_status: dict[str, Counter[str]] = {k: Counter() for k in keys}
    distributions: dict[str, dict[str, list[float]]] = {k: {m: [] for m in DISTRIBUTIONS} for k in keys}
    apps: list[list[Any]] = []
    for row in app_rows:
        key = _key(row, assignors)
        by_status.setdefault(key, Counter())[str(row["status"])] += 1
        if row["status"] != "REJECTED":
            for metric in DISTRIBUTIONS:
                value = row.get(metric)
                if value is not None:
                    distributions.setdefault(key, {m: [] for m in DISTRIBUTIONS})[metric].append(float(value))
        apps.append([row.get(c) for c in APP_COLUMNS])
    fleet: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
    for row in output.read("fleet_metrics").to_pylist():
        fleet.setdefault(_key(row, assignors), []).append(row)
    comparison = output.read("assignor_comparison").to_pylist() if "assignor_comparison" in output.tables else []
    counts, rows, total = _rejected(output, assignors)
    return FleetData(
        source=str(path), manifest=output.manifest, assignors=assignors,
        by_status={k: dict(v) for k, v in by_status.items()}, fleet_metrics=fleet, distributions=distributions,
        attention=_attention(output, assignors), apps=apps, rejected_counts=counts, rejected_rows=rows,
        rejected_total=total, comparison=comparison,
    )
