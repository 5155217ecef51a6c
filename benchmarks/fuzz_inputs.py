"""Fuzz every input reader, the pipeline's row checks and the commands: each input must be accepted (and what
follows works) or refused cleanly (a UserInputError; exit code 2 with an error line). Anything else is a
finding, recorded with its input. The harness is tests/fuzz_inputs.py (tests/test_robustness.py drives it
with Hypothesis); here it runs at volume from plain seeds.

    PYTHONPATH=src python -m benchmarks.fuzz_inputs --inputs 10000 --cli-inputs 300 --seed 1
"""

from __future__ import annotations

import argparse
import logging
import platform
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.fuzz_inputs import COMMANDS, READERS, Outcome, attempt, cli_attempt, read_snapshot_bucket
from tests.fuzz_surfaces import SURFACES, attempt_streams_group, collision_outcomes, surface_attempt

from benchmarks._results import load_average, report

#: What this fuzz (and issue 18's) found while it was being built, each fixed with a test that fails without
#: the fix: the record of why the readers are what they are.
FOUND_AND_FIXED = (
    "snapshot_bucket: one topic_partitions row with partition 2147483647 made the bucket allocate 2^31 tasks "
    "(MemoryError, the worker killed): partitions at or above 1,000,000 are BAD_VALUE, and an application "
    "with more than 1,000,000 tasks is INVALID_TOPOLOGY (model.MAX_PARTITIONS, MAX_TASKS)",
    "group: a subscription given as JSON that does not encode (latest_supported_version below version) "
    "raised an EncodeError without the member's path: it names $.members[i].subscription now",
    "every JSON reader: 100,000 levels of nesting (RecursionError), an unpaired surrogate escape (a "
    "UnicodeEncodeError when the value was written), /dev/zero or a FIFO as the file (unbounded read)",
    "snapshot_bucket: invalid UTF-8 in a string (UnicodeDecodeError for the whole bucket), an unusable "
    "subtopologies row (the application assigned on part of its tasks), values past Long.MAX_VALUE in the "
    "outputs (OverflowError for the whole bucket)",
)


def _count(outcomes: list[Outcome]) -> dict[str, Any]:
    kinds = Counter(o.kind for o in outcomes)
    refusals = Counter(o.error for o in outcomes if o.kind == "refused")
    findings = [{"error": o.error, "input": o.input, "traceback": o.detail} for o in outcomes if o.kind == "finding"]
    return {"inputs": len(outcomes), "accepted": kinds["accepted"], "refused": kinds["refused"],
            "refusals_by_type": dict(sorted(refusals.items())), "findings": len(findings),
            "finding_examples": findings[:5]}


def run(inputs: int, cli_inputs: int, seed: int) -> dict[str, Any]:
    logging.disable(logging.WARNING)
    start = time.perf_counter()
    readers: dict[str, Any] = {}
    for name in sorted(READERS):
        rng = random.Random(f"{seed}:{name}")
        readers[name] = _count([attempt(name, rng) for _ in range(inputs)])
    rng = random.Random(f"{seed}:snapshot_bucket")
    readers["snapshot_bucket"] = _count([read_snapshot_bucket(rng) for _ in range(inputs)])
    rng = random.Random(f"{seed}:streams_group")
    readers["streams_group"] = _count([attempt_streams_group(rng) for _ in range(inputs)])
    commands: dict[str, Any] = {}
    surfaces: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name in sorted(COMMANDS):
            rng = random.Random(f"{seed}:cli:{name}")
            commands[name] = _count([cli_attempt(name, rng, Path(workdir)) for _ in range(cli_inputs)])
        for name in sorted(SURFACES):  # issue 32's surfaces
            rng = random.Random(f"{seed}:surface:{name}")
            surfaces[name] = _count([surface_attempt(name, rng, Path(workdir)) for _ in range(cli_inputs)])
        collisions = collision_outcomes(Path(workdir) / "collisions")
    collision_report = {"cases": len(collisions), "refused": sum(o.kind == "refused" for o in collisions),
                        "findings": [f"{o.reader}: {o.error}" for o in collisions if o.kind == "finding"],
                        "note": "issue 32 point 1's rule (no overwriting without --force, output == input "
                                "refused, exit 2) comes with branch i32-files; before it these are findings"}
    findings = sum(r["findings"] for r in (*readers.values(), *commands.values(), *surfaces.values()))
    return {
        "benchmark": "fuzz_inputs",
        "command": f"PYTHONPATH=src python -m benchmarks.fuzz_inputs --inputs {inputs} --cli-inputs {cli_inputs} "
                   f"--seed {seed}",
        "seed": seed,
        "inputs_tried": inputs * len(readers) + cli_inputs * (len(commands) + len(surfaces)) + len(collisions),
        "readers": readers,
        "commands": commands,
        "surfaces": surfaces,
        "output_path_collisions": collision_report,
        "findings": findings,
        "collision_findings": len(collision_report["findings"]),
        "found_and_fixed": list(FOUND_AND_FIXED),
        "seconds": round(time.perf_counter() - start, 1),
        "load_average_at_end": load_average(),
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs per reader")
    parser.add_argument("--cli-inputs", type=int, default=300, help="input files per command")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print only, do not update results/fuzz_inputs.json")
    args = parser.parse_args()
    result = run(args.inputs, args.cli_inputs, args.seed)
    report("fuzz_inputs", result, write=not args.no_write)
    if result["findings"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
