"""Time Kafka's scale-test cases through taskassign's assignors (Kafka's StreamsAssignmentScaleTest).

For every case of ``benchmarks/scale_cases.py`` (one case list for every assignor) whose assignor is
selected: round 1 ("cold", a fresh group) and round 2 ("churn", every client reporting what it got in
round 1). Each round times the assignor alone (``assign(ApplicationState)``), the leader without the
thread level (``leader.rebalance(distribute_threads=False)``: assign, validation, follow-ups, callback,
completeness report) and the whole leader rebalance (with each client's tasks spread over its
threads), ``--repeat`` times each, keeping the medians of wall-clock and of CPU time. Results go to
``benchmarks/results/assignors.json`` next to Kafka's own timings (warm JVM, median, this machine)
where we have them; rows of cases not re-run are kept.

    PYTHONPATH=src python -m benchmarks.bench_assignors [--assignors legacy_sticky] [--cases ha-] [--repeat 5]
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

from benchmarks._results import RESULTS_DIR, load_average, timed
from benchmarks.scale_cases import SCALE_CASES, ScaleCase, churn_state, cold_state
from taskassign.assignors.registry import BUILTIN_ASSIGNORS, create_assignor
from taskassign.leader.run import rebalance
from taskassign.model import ApplicationState, GroupAssignment

RESULTS = RESULTS_DIR / "assignors.json"

#: Kafka's StreamsAssignmentScaleTest timings of the whole leader assign() (ms, warm JVM, median).
KAFKA_MS: dict[tuple[str, str], float] = {
    ("ha-large-partition-count", "cold"): 30.0,
    ("ha-large-partition-count", "churn"): 30.0,
    ("ha-large-num-consumers", "cold"): 2_800.0,
    ("ha-large-num-consumers", "churn"): 8_000.0,
    ("ha-many-standbys", "churn"): 5_200.0,
    ("ha-many-threads-per-client", "cold"): 15.0,
    ("ha-many-threads-per-client", "churn"): 15.0,
    # the public StickyTaskAssignor is not in Kafka's scale test; measured the same way on this machine
    ("sticky-large-partition-count", "cold"): 220_000.0,
    ("sticky-large-partition-count", "churn"): 220_000.0,
    ("sticky-many-standbys", "cold"): 69_000.0,
    ("sticky-many-standbys", "churn"): 69_000.0,
}
ALL_ASSIGNORS = ",".join(dict.fromkeys(case.assignor for case in SCALE_CASES))


def measure(case: ScaleCase, round_name: str, state: ApplicationState, repeat: int) -> tuple[dict[str, Any],
                                                                                              GroupAssignment]:
    """One row: the assignor alone, the leader without and with the thread-level distribution, on ``state``."""
    assign = timed(lambda: create_assignor(case.assignor).assign(state), repeat)
    leader = timed(lambda: rebalance(state, create_assignor(case.assignor), distribute_threads=False), repeat)
    whole = timed(lambda: rebalance(state, create_assignor(case.assignor)), repeat)
    result = rebalance(state, create_assignor(case.assignor))
    kafka = KAFKA_MS.get((case.name, round_name))
    row: dict[str, Any] = {
        "case": case.name, "assignor": case.assignor, "round": round_name, "tasks": case.partitions,
        "clients": case.clients, "threads_per_client": case.threads, "standbys": case.standbys,
        "assign_ms": assign["ms"], "rebalance_ms": whole["ms"], "rebalance_without_threads_ms": leader["ms"],
        "assign_cpu_ms": assign["cpu_ms"], "rebalance_cpu_ms": whole["cpu_ms"],
        "rebalance_without_threads_cpu_ms": leader["cpu_ms"],
        "assign_runs_ms": assign["runs_ms"], "rebalance_runs_ms": whole["runs_ms"],
        "kafka_ms": kafka,
        "speedup_vs_kafka": round(kafka / whole["ms"], 1) if kafka else None,
        "speedup_vs_kafka_cpu": round(kafka / whole["cpu_ms"], 1) if kafka else None,
        "error": result.error.name, "probing_rebalance_needed": result.probing_rebalance_needed,
    }
    return row, result.group


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignors", default=ALL_ASSIGNORS,
                        help=f"comma-separated registered assignors to run (default: {ALL_ASSIGNORS})")
    parser.add_argument("--cases", default="", help="only cases whose name contains this text")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (medians kept)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    wanted = {a.strip() for a in args.assignors.split(",") if a.strip()}
    logging.disable(logging.WARNING)  # the single-standby-client cases warn about unplaceable replicas
    load_at_start = load_average()

    rows = []
    for case in SCALE_CASES:
        if args.cases not in case.name or case.assignor not in wanted or case.assignor not in BUILTIN_ASSIGNORS:
            continue
        cold, group = measure(case, "cold", cold_state(case), args.repeat)
        print(_line(cold), flush=True)
        churn, _ = measure(case, "churn", churn_state(case, group), args.repeat)
        print(_line(churn), flush=True)
        rows += [cold, churn]

    previous = json.loads(args.output.read_text()) if args.output.exists() else {}
    fresh = {(r["case"], r["round"]) for r in rows}
    kept = [r for r in previous.get("results", []) if (r["case"], r["round"]) not in fresh]
    document = {
        "benchmark": "Kafka StreamsAssignmentScaleTest cases (benchmarks/scale_cases.py)",
        "command": "PYTHONPATH=src python -m benchmarks.bench_assignors " + " ".join(argv or sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_start": load_at_start, "load_average_at_end": load_average()},
        "note": f"medians of {args.repeat} runs; the machine is shared (2 cores, other jobs), so wall-clock "
                "times are noisy; CPU ms (this process only) are less disturbed",
        "results": sorted(kept + rows, key=lambda r: (r["case"], r["round"] != "cold")),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0


def _line(row: dict[str, Any]) -> str:
    kafka = f"  kafka {row['kafka_ms']:.0f} ms (x{row['speedup_vs_kafka']})" if row["kafka_ms"] else ""
    return (f"{row['case']:<28} {row['round']:<5} assign {row['assign_ms']:7.1f} ms "
            f"(cpu {row['assign_cpu_ms']:.1f})  no threads {row['rebalance_without_threads_ms']:7.1f} ms "
            f"(cpu {row['rebalance_without_threads_cpu_ms']:.1f})  rebalance {row['rebalance_ms']:7.1f} ms "
            f"(cpu {row['rebalance_cpu_ms']:.1f}){kafka}")


if __name__ == "__main__":
    raise SystemExit(main())
