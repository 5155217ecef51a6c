"""``taskassign compare`` on an application of the size operators bring (issue 19): 288 tasks (252 stateful, skewed
sizes) on 12 clients x 2 threads with one standby, through a rolling restart of every client, with
high_availability, sticky and state_aware. Every assignor starts from the same input: high_availability's
steady state (what a cluster running Kafka's default looks like before the restart).

Recorded: each assignor's run totals and its last assignment's balance (the ``compare --json`` document), the
wall time of the comparison and of its HTML report, the page's size, and the load average (a shared machine).

    .venv/bin/python -m benchmarks.bench_compare [--write]
"""

from __future__ import annotations

import argparse
import time
from types import MappingProxyType
from typing import Any

from benchmarks._results import load_average, report
from benchmarks.bench_state_aware import Case, application, steady_state
from taskassign.api.compare import compare, report_runs
from taskassign.formats.scenario import Scenario
from taskassign.report import build_compare_report
from taskassign.simulate import parse_events

ASSIGNORS = ("high_availability", "sticky", "state_aware")
CASE = Case("rolling-restart-288", "252 stateful tasks (sigma 1.0) + 36 stateless on 12 x 2 threads, one standby; "
            "a rolling restart of every client", 7, 36, [2] * 12, 1.0,
            [{"type": "rolling_restart", "downtime_ms": 30_000, "interval_ms": 60_000}], stateless=1,
            configs={"num.standby.replicas": 1}, seed=7)
BALANCE = ("state_load_imbalance", "thread_state_imbalance", "thread_total_skew", "records_to_restore")


def run() -> dict[str, Any]:
    cold = application(CASE)
    steady, _ = steady_state(CASE, cold, "high_availability")
    scenario = Scenario(CASE.name, steady, MappingProxyType(dict(CASE.configs)))
    events = parse_events({"format": "taskassign/events/v1", "seed": CASE.seed, "restore_rate": CASE.restore_rate,
                           "events": [{"type": "append_rate", "records_per_s": CASE.append_rate}, *CASE.events]})
    started = time.perf_counter()
    outcome = compare(scenario, ASSIGNORS, events=events)
    compared = time.perf_counter() - started
    started = time.perf_counter()
    page = build_compare_report(report_runs(outcome), outcome.comparison, scenario=scenario.name)
    drawn = time.perf_counter() - started
    doc = outcome.to_document()
    return {
        "case": CASE.name,
        "description": CASE.description,
        "tasks": len(cold.tasks),
        "assignors": {name: {"totals": entry["totals"], **{k: entry["metrics"][k] for k in BALANCE}}
                      for name, entry in doc["assignors"].items()},
        "best_totals": doc["best"]["totals"],
        "compare_s": round(compared, 2),
        "report_s": round(drawn, 2),
        "report_kb": round(len(page.encode("utf-8")) / 1024),
        "load_average": load_average(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/compare.json")
    report("compare", run(), write=parser.parse_args(argv).write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
