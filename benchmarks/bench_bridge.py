"""The bridge's overhead per rebalance: a `taskassign serve` round trip against the assignor alone.

For applications of 100, 1,000 and 10,000 tasks (benchmarks/scale_app.py's shape: half the subtopologies
stateful, one standby, churned owners, 1 client per 100 tasks, at least 3), the request the Java assignor would
post (``request_from_scenario``: KIP-924's view) is POSTed to a `taskassign serve` subprocess on loopback, a new
connection each time as the Java side makes it, ``--repeat`` times; the rows keep the median wall-clock of the
round trip, the service's own decision time (its audit log's ``took_ms``: parse, build the scenario, assign,
validate, audit), the assignor alone in this process (``assign_scenario``), and the request and answer sizes.
Round trip minus the assignor alone is what the bridge adds. The 1/5/15-minute load averages are recorded: the
machine is shared.

    PYTHONPATH=src python -m benchmarks.bench_bridge [--sizes 100,1000,10000] [--assignors sticky,state_aware]
        [--repeat 5] [--write]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks._results import load_average, report, timed
from benchmarks.scale_app import scenario as scale_scenario
from taskassign.bridge.audit import read_audit
from taskassign.bridge.request import request_from_scenario
from taskassign.formats.scenario import parse_scenario
from taskassign.leader.assign import assign_scenario


def _post(url: str, body: bytes) -> tuple[float, int]:
    started = time.perf_counter()
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        size = len(response.read())
    return (time.perf_counter() - started) * 1000.0, size


def measure(url: str, audit: Path, tasks: int, assignor: str, repeat: int) -> dict[str, Any]:
    clients = max(3, tasks // 100)
    scenario = parse_scenario(scale_scenario(tasks, clients))
    body = json.dumps(request_from_scenario(scenario, f"bench-{assignor}")).encode()
    trips, sizes = [], []
    for _ in range(repeat):
        ms, size = _post(url + "/v1/assign", body)
        trips.append(ms)
        sizes.append(size)
    records = [r for r in read_audit(audit) if r.get("application_id") == f"bench-{assignor}"][-repeat:]
    assert all(r["source"] == "computed" for r in records), [r.get("error") for r in records]
    alone = timed(lambda: assign_scenario(scenario, assignor), repeat)
    trip = statistics.median(trips)
    return {
        "tasks": tasks, "clients": clients, "assignor": assignor,
        "request_bytes": len(body), "answer_bytes": sizes[0],
        "round_trip_ms": round(trip, 2),
        "service_decision_ms": round(statistics.median(r["took_ms"] for r in records), 2),
        "assignor_alone_ms": alone["ms"], "bridge_overhead_ms": round(trip - alone["ms"], 2),
        "round_trips_ms": [round(t, 2) for t in trips],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--assignors", default="sticky,state_aware")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="save benchmarks/results/bridge.json")
    args = parser.parse_args(argv)
    rows = []
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            for assignor in args.assignors.split(","):
                rows.append(measure_with(size, assignor, args.repeat, Path(tmp)))
                print(json.dumps(rows[-1]), file=sys.stderr)
    result = {"benchmark": "bridge", "python": sys.version.split()[0], "repeat": args.repeat,
              "load_average_before": load_before, "load_average_after": load_average(), "rows": rows}
    report("bridge", result, write=args.write)


def measure_with(tasks: int, assignor: str, repeat: int, tmp: Path) -> dict[str, Any]:
    """``measure`` against a fresh service configured for the ``bench-<assignor>`` application."""
    config = tmp / f"serve-{assignor}.json"
    audit = tmp / f"audit-{tasks}-{assignor}.jsonl"
    config.write_text(json.dumps({"applications": {f"bench-{assignor}": {"assignor": assignor}}}))
    process = subprocess.Popen([sys.executable, "-m", "taskassign", "serve", "--listen", "127.0.0.1:0", "--config",
                                str(config), "--audit-log", str(audit), "--deadline-ms", "600000"],
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        match = re.search(r"listening on (http://[0-9.]+:[0-9]+)", process.stderr.readline())
        assert match, "serve did not start"
        return measure(match[1], audit, tasks, assignor, repeat)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


if __name__ == "__main__":
    main()
