"""Scale benchmark of the sticky family on Kafka's StreamsAssignmentScaleTest cases (scale_cases.py).

For every legacy_sticky / fallback_prior / sticky case: round 1 ("cold", a fresh group) and round 2
("churn", every client reports what it got in round 1). Each round is timed twice: the assignor's
``assign(ApplicationState)`` alone and the whole ``leader.rebalance`` (assign + validation +
follow-ups), as medians over ``--repeats`` runs, wall clock and CPU. Results go to
benchmarks/results/sticky.json, one row per case and round in the same shape as the assignor
benchmark's rows, so the two fold together.

    PYTHONPATH=src python benchmarks/bench_sticky.py [--repeats 5] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._results import timed
from benchmarks.scale_cases import SCALE_CASES, ScaleCase, churn_state, cold_state
from taskassign.assignors.registry import create_assignor
from taskassign.leader import rebalance
from taskassign.model import ApplicationState

ASSIGNORS = ("legacy_sticky", "fallback_prior", "sticky")
RESULTS = Path(__file__).resolve().parent / "results" / "sticky.json"
#: Kafka's public StickyTaskAssignor on the same case on this machine (ms; the issue quotes one figure per
#: case, so it stands for both rounds).
KAFKA_MS: dict[str, float] = {
    "sticky-large-partition-count": 220_000.0,
    "sticky-many-standbys": 69_000.0,
}


def _round(case: ScaleCase, name: str, state: ApplicationState, repeats: int) -> tuple[dict[str, Any], Any]:
    assign = timed(lambda: create_assignor(case.assignor, {}).assign(state), repeats)
    whole = timed(lambda: rebalance(state, create_assignor(case.assignor, {})), repeats)
    result = rebalance(state, create_assignor(case.assignor, {}))
    kafka = KAFKA_MS.get(case.name)
    row: dict[str, Any] = {
        "case": case.name, "assignor": case.assignor, "round": name, "tasks": case.partitions,
        "clients": case.clients, "threads_per_client": case.threads, "standbys": case.standbys,
        "assign_ms": assign["ms"], "rebalance_ms": whole["ms"],
        "assign_cpu_ms": assign["cpu_ms"], "rebalance_cpu_ms": whole["cpu_ms"],
        "assign_runs_ms": assign["runs_ms"], "rebalance_runs_ms": whole["runs_ms"],
        "kafka_ms": kafka, "speedup_vs_kafka": round(kafka / whole["ms"], 1) if kafka else None,
        "error": result.error.name, "probing_rebalance_needed": result.probing_rebalance_needed,
    }
    return row, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--case", action="append", default=[], help="run only these cases (repeatable)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # the many-standbys cases warn about unplaceable replicas
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    rows = []
    for case in SCALE_CASES:
        if case.assignor not in ASSIGNORS or (args.case and case.name not in args.case):
            continue
        cold_row, cold = _round(case, "cold", cold_state(case), args.repeats)
        churn_row, _ = _round(case, "churn", churn_state(case, cold.group), args.repeats)
        for row in (cold_row, churn_row):
            rows.append(row)
            print(f"{row['case']:36s} {row['round']:5s} assign {row['assign_ms']:9.1f} ms (cpu "
                  f"{row['assign_cpu_ms']:.1f})  rebalance {row['rebalance_ms']:9.1f} ms (cpu "
                  f"{row['rebalance_cpu_ms']:.1f})", flush=True)
    document = {
        "benchmark": "sticky family on Kafka's StreamsAssignmentScaleTest cases",
        "command": "PYTHONPATH=src python benchmarks/bench_sticky.py " + " ".join(argv or sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_start": load_at_start,
                    "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "note": f"medians of {args.repeats} runs; the machine is shared (2 cores, other jobs), so single runs "
                "are noisy; CPU ms are less disturbed than wall-clock ms",
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
