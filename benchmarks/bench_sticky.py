"""Scale benchmark of the sticky family on Kafka's StreamsAssignmentScaleTest cases (scale_cases.py).

For every legacy_sticky / fallback_prior / sticky case: round 1 ("cold", a fresh group) and round 2
("churn", every client reports what it got in round 1). Each round is timed twice: the assignor's
``assign(ApplicationState)`` alone and the whole ``leader.rebalance`` (assign + validation +
follow-ups), as medians over ``--repeats`` runs. Results go to benchmarks/results/sticky.json
(same shape as the other assignor benchmarks, so the lead can fold them together).

    PYTHONPATH=src python benchmarks/bench_sticky.py [--repeats 5] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scale_cases import SCALE_CASES, ScaleCase, churn_state, cold_state
from taskassign.assignors.registry import create_assignor
from taskassign.leader import rebalance
from taskassign.model import ApplicationState

ASSIGNORS = ("legacy_sticky", "fallback_prior", "sticky")
RESULTS = Path(__file__).resolve().parent / "results" / "sticky.json"
#: Kafka's own time for the same case on this machine (warm JVM), where measured.
KAFKA_SECONDS: dict[str, float] = {
    "sticky-large-partition-count": 220.0,
    "sticky-many-standbys": 69.0,
}


def _timed(fn: Callable[[], Any], repeats: int) -> tuple[dict[str, Any], Any]:
    runs, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        runs.append(time.perf_counter() - start)
    summary = {"median": round(statistics.median(runs), 4), "min": round(min(runs), 4),
               "max": round(max(runs), 4), "runs": [round(r, 4) for r in runs]}
    return summary, result


def _round(case: ScaleCase, name: str, state: ApplicationState, repeats: int) -> tuple[dict[str, Any], Any]:
    assign_s, _ = _timed(lambda: create_assignor(case.assignor, {}).assign(state), repeats)
    rebalance_s, result = _timed(lambda: rebalance(state, create_assignor(case.assignor, {})), repeats)
    row: dict[str, Any] = {
        "case": case.name, "assignor": case.assignor, "round": name, "tasks": case.partitions,
        "clients": case.clients, "threads_per_client": case.threads, "standbys": case.standbys,
        "assign_s": assign_s, "rebalance_s": rebalance_s,
    }
    kafka = KAFKA_SECONDS.get(case.name)
    if kafka is not None:
        row["kafka_s"] = kafka
        row["speedup_vs_kafka"] = round(kafka / rebalance_s["median"], 1)
    return row, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--case", action="append", default=[], help="run only these cases (repeatable)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the many-standbys cases warn about unplaceable replicas
    rows = []
    for case in SCALE_CASES:
        if case.assignor not in ASSIGNORS or (args.case and case.name not in args.case):
            continue
        cold_row, cold = _round(case, "cold", cold_state(case), args.repeats)
        churn_row, _ = _round(case, "churn", churn_state(case, cold.group), args.repeats)
        for row in (cold_row, churn_row):
            rows.append(row)
            print(f"{row['case']:36s} {row['round']:5s} assign {row['assign_s']['median']:7.3f} s  "
                  f"rebalance {row['rebalance_s']['median']:7.3f} s", flush=True)
    document = {
        "benchmark": "sticky family on Kafka's StreamsAssignmentScaleTest cases",
        "command": "PYTHONPATH=src python benchmarks/bench_sticky.py " + " ".join(argv or sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "repeats": args.repeats,
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
