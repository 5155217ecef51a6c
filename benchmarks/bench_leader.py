"""The leader's part of the pipeline's engine time: ``assign_scenario`` minus the assignor's ``assign``.

``bench_bucket`` counts the whole engine (the assignor, then the leader's validation, ownership and spreading over
threads). This takes the applications of some buckets (the same bucket files), runs each assignor once to keep its
output, then times ``assign_scenario`` on freshly built scenarios with every ``assign`` answering that kept output:
what is left is the leader's own work, in this process's CPU time, best of ``--repeat``. The digest of the
assignment documents compares two revisions (the same digest: the same answers).

    python -m benchmarks.bench_leader --buckets 0-3 [--repeat 6]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks._results import load_average
from benchmarks.bench_bucket import BUCKETS, run_buckets


def _applications(files: Path, numbers: list[int]) -> list[tuple[Any, dict[str, Any], Any]]:
    """(application input, build options, resolved assignor) of every application the buckets assign."""
    from taskassign.fleet import application

    built: list[tuple[Any, dict[str, Any]]] = []
    found: list[tuple[Any, dict[str, Any], Any]] = []
    namespace = vars(application)  # the module's own names, replaced for the capture and put back
    build, assign = namespace["build_scenario"], namespace["assign_scenario"]

    def building(app: Any, **options: Any) -> Any:
        built.append((app, options))
        return build(app, **options)

    def assigning(scenario: Any, resolved: Any) -> Any:
        found.append((*built[-1], resolved))
        return assign(scenario, resolved)

    namespace["build_scenario"], namespace["assign_scenario"] = building, assigning
    try:
        run_buckets(files, numbers, None)
    finally:
        namespace["build_scenario"], namespace["assign_scenario"] = build, assign
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "taskassign-bench-pipeline")
    parser.add_argument("--files", default=f"buckets-uniform-1000x1000-seed7-{BUCKETS}",
                        help="the bucket files under --workdir (bench_bucket writes them)")
    parser.add_argument("--buckets", default="0-3", help="first-last")
    parser.add_argument("--repeat", type=int, default=6)
    args = parser.parse_args(argv)
    from taskassign.fleet.build import build_scenario
    from taskassign.leader.assign import assign_scenario, result_to_document

    first, last = map(int, args.buckets.split("-"))
    apps = _applications(args.workdir / args.files, list(range(first, last + 1)))

    def scenarios() -> list[tuple[Any, Any]]:
        return [(build_scenario(app, **options).scenario, resolved) for app, options, resolved in apps]

    classes = {type(resolved.create(scenario.raw_configs)) for scenario, resolved in scenarios()}
    own = {cls: cls.assign for cls in classes}
    outputs: list[Any] = []

    def keeping(self: Any, state: Any) -> Any:
        outputs.append(own[type(self)](self, state))
        return outputs[-1]

    for cls in classes:
        cls.assign = keeping
    [assign_scenario(scenario, resolved) for scenario, resolved in scenarios()]
    kept: list[Iterator[Any]] = [iter(())]
    for cls in classes:
        cls.assign = lambda self, state: next(kept[0])
    load_before = load_average()
    times, results = [], []
    for _ in range(args.repeat):
        fresh = scenarios()
        kept[0] = iter(outputs)
        gc.collect()
        started = time.process_time()
        results = [assign_scenario(scenario, resolved) for scenario, resolved in fresh]
        times.append(time.process_time() - started)
    text = json.dumps([result_to_document(r) for r in results], sort_keys=True, default=str)
    print(json.dumps({"buckets": args.buckets, "apps": len(apps), "leader_cpu_seconds_best": round(min(times), 3),
                      "leader_cpu_seconds": [round(t, 3) for t in times], "load_before": load_before,
                      "load_after": load_average(), "documents_sha256": hashlib.sha256(text.encode()).hexdigest()},
                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
