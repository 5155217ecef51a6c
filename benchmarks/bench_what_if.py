"""What-if and diff (issue 19, point 2), answered and timed.

1. The question operators bring, on the 288-task application of bench_compare (high_availability's steady state,
   12 clients x 2 threads, one standby): "what if one instance goes and two new ones come, and standbys go to
   two?", through ``compare -a A`` with a what-if for high_availability and state_aware: replicas and actives
   moved, records to restore, and the balance after.
2. The cost at scale, on Kafka's ha-large-num-consumers case (1,000 tasks, 1,000 clients, one standby, round 2):
   applying the what-if (remove 10 clients, add 10), diffing two assignments with metrics, and the text output's
   short process ids. Median of 5 runs (wall and CPU ms; the machine is shared).

    .venv/bin/python -m benchmarks.bench_what_if [--write]
"""

from __future__ import annotations

import argparse
from types import MappingProxyType
from typing import Any

from benchmarks._results import load_average, report, timed
from benchmarks.bench_compare import CASE
from benchmarks.bench_state_aware import application, steady_state
from benchmarks.scale_cases import SCALE_CASES, churn_state, cold_state
from taskassign.analysis.diff import diff_assignments
from taskassign.analysis.metrics import compute_metrics
from taskassign.api.what_if import apply_what_if, parse_what_if
from taskassign.api.what_if_compare import compare_what_if
from taskassign.formats.scenario import Scenario
from taskassign.formats.units import short_ids
from taskassign.leader.assign import assign_scenario

ASSIGNORS = ("high_availability", "state_aware")


def question() -> dict[str, Any]:
    cold = application(CASE)
    steady, _ = steady_state(CASE, cold, "high_availability")
    scenario = Scenario(CASE.name, steady, MappingProxyType(dict(CASE.configs)))
    first = str(scenario.state.process_ids[0])
    what_if = parse_what_if(sets=["num.standby.replicas=2"], add_clients=["2"], remove_clients=[first])
    altered, notes = apply_what_if(scenario, what_if)
    rows = {}
    for assignor in ASSIGNORS:
        outcome = compare_what_if(scenario, altered, notes, assignor)
        d, after = outcome.diff, outcome.after.metrics
        assert after is not None
        rows[assignor] = {"replicas_moved": d.replicas_moved, "actives_moved": d.actives_moved,
                          "promotions": d.promotions, "records_to_restore": d.records_to_restore,
                          "data_bytes": d.data_bytes, "clients_changed": len(d.changed_clients),
                          "after_thread_state_imbalance": round(after.thread_state_imbalance, 3),
                          "after_standby_shortfall_tasks": after.standby_shortfall_tasks}
    return {"case": CASE.name, "what_if": list(notes), "assignors": rows}


def scale(repeats: int) -> dict[str, Any]:
    case = next(c for c in SCALE_CASES if c.name == "ha-large-num-consumers")
    first = assign_scenario(Scenario(case.name, cold_state(case)), case.assignor).group
    scenario = Scenario(case.name, churn_state(case, first))
    what_if = parse_what_if(remove_clients=[str(p) for p in scenario.state.process_ids[:10]], add_clients=["10"])
    altered, _ = apply_what_if(scenario, what_if)
    before = assign_scenario(scenario, case.assignor).group.clients
    after = assign_scenario(altered, case.assignor).group.clients
    metrics = (compute_metrics(scenario.state, before), compute_metrics(altered.state, after))
    diff = diff_assignments(before, after, state=altered.state, before_metrics=metrics[0], after_metrics=metrics[1])
    return {
        "case": f"{case.name} ({case.partitions} tasks, {case.clients} clients, {case.standbys} standby)",
        "replicas_moved": diff.replicas_moved, "clients_changed": len(diff.changed_clients),
        "apply_what_if": timed(lambda: apply_what_if(scenario, what_if), repeats),
        "diff_with_metrics": timed(lambda: diff_assignments(before, after, state=altered.state,
                                                            before_metrics=metrics[0], after_metrics=metrics[1]),
                                   repeats),
        "short_ids": timed(lambda: short_ids(after), repeats),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/what_if.json")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    report("what_if", {"question": question(), "scale": scale(args.repeat), "load_average": load_average()},
           write=args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
