"""Time Kafka's scale-test cases through taskassign's assignors (host-and-wire spec 7.1).

For every case of ``benchmarks/scale_cases.py`` whose assignor is registered: round 1 ("cold", a fresh
group) and round 2 ("churn", every client reporting what it got in round 1). Each round times the
assignor alone (``assign(ApplicationState)``) and one whole leader rebalance (``leader.rebalance``:
assign, validation, callback, follow-ups, completeness report), ``--repeat`` times each, and keeps the
median. Results go to ``benchmarks/results/assignors.json`` next to Kafka's own timings (warm JVM,
median, measured on this machine) where we have them.

    PYTHONPATH=src python -m benchmarks.bench_assignors [--cases ha-] [--repeat 5]

Other assignors join by being registered: the case list is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.scale_cases import SCALE_CASES, ScaleCase, churn_state, cold_state
from taskassign.assignors.registry import BUILTIN_ASSIGNORS, create_assignor
from taskassign.leader import rebalance
from taskassign.model import ApplicationState, GroupAssignment

RESULTS = Path(__file__).parent / "results" / "assignors.json"

#: Kafka's StreamsAssignmentScaleTest timings of the whole leader assign() (ms, warm JVM, median).
KAFKA_MS: dict[tuple[str, str], float] = {
    ("ha-large-partition-count", "cold"): 30.0,
    ("ha-large-partition-count", "churn"): 30.0,
    ("ha-large-num-consumers", "cold"): 2_800.0,
    ("ha-large-num-consumers", "churn"): 8_000.0,
    ("ha-many-standbys", "churn"): 5_200.0,
    ("ha-many-threads-per-client", "cold"): 15.0,
    ("ha-many-threads-per-client", "churn"): 15.0,
}


def _median_ms(run: Callable[[], object], repeat: int) -> tuple[float, float, list[float]]:
    """Median wall-clock ms, median CPU ms of this process (less disturbed by other jobs), wall runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        cpus.append((time.process_time() - cpu) * 1000.0)
        walls.append((time.perf_counter() - wall) * 1000.0)
    return statistics.median(walls), statistics.median(cpus), [round(r, 2) for r in walls]


def _measure(case: ScaleCase, round_name: str, state: ApplicationState, repeat: int) -> tuple[dict[str, Any],
                                                                                               GroupAssignment]:
    assignor = create_assignor(case.assignor)
    assign_ms, assign_cpu_ms, assign_runs = _median_ms(lambda: assignor.assign(state), repeat)
    rebalance_ms, rebalance_cpu_ms, rebalance_runs = _median_ms(
        lambda: rebalance(state, create_assignor(case.assignor)), repeat)
    result = rebalance(state, create_assignor(case.assignor))
    kafka = KAFKA_MS.get((case.name, round_name))
    row: dict[str, Any] = {
        "case": case.name,
        "assignor": case.assignor,
        "round": round_name,
        "tasks": case.partitions,
        "clients": case.clients,
        "threads_per_client": case.threads,
        "standbys": case.standbys,
        "assign_ms": round(assign_ms, 2),
        "rebalance_ms": round(rebalance_ms, 2),
        "assign_cpu_ms": round(assign_cpu_ms, 2),
        "rebalance_cpu_ms": round(rebalance_cpu_ms, 2),
        "assign_runs_ms": assign_runs,
        "rebalance_runs_ms": rebalance_runs,
        "kafka_ms": kafka,
        "speedup_vs_kafka": round(kafka / rebalance_ms, 1) if kafka else None,
        "error": result.error.name,
        "probing_rebalance_needed": result.probing_rebalance_needed,
    }
    return row, result.group


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="", help="only cases whose name contains this text")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (median kept)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    rows = []
    for case in SCALE_CASES:
        if args.cases not in case.name or case.assignor not in BUILTIN_ASSIGNORS:
            continue
        cold, group = _measure(case, "cold", cold_state(case), args.repeat)
        print(_line(cold), flush=True)
        churn, _ = _measure(case, "churn", churn_state(case, group), args.repeat)
        print(_line(churn), flush=True)
        rows += [cold, churn]

    previous = json.loads(args.output.read_text()) if args.output.exists() else {}
    kept = [r for r in previous.get("results", []) if (r["case"], r["round"]) not in
            {(n["case"], n["round"]) for n in rows}]
    document = {
        "benchmark": "Kafka StreamsAssignmentScaleTest cases (benchmarks/scale_cases.py)",
        "command": "PYTHONPATH=src python -m benchmarks.bench_assignors " + " ".join(argv or sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "note": "medians of --repeat runs; the machine is shared (2 cores, other jobs), so single runs are noisy",
        "results": sorted(kept + rows, key=lambda r: (r["case"], r["round"] != "cold")),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0


def _line(row: dict[str, Any]) -> str:
    kafka = f"  kafka {row['kafka_ms']:.0f} ms (x{row['speedup_vs_kafka']})" if row["kafka_ms"] else ""
    return (f"{row['case']:<32} {row['round']:<5} assign {row['assign_ms']:8.1f} ms "
            f"(cpu {row['assign_cpu_ms']:.1f})  rebalance {row['rebalance_ms']:8.1f} ms "
            f"(cpu {row['rebalance_cpu_ms']:.1f}){kafka}")


if __name__ == "__main__":
    raise SystemExit(main())
