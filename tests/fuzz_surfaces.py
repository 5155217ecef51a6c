"""The robustness harness for issue 32's surfaces (tests/fuzz_inputs.py has the readers and the first commands):
streams-group files, the what-if flags, ``diff``, ``compare``, ``streams-migration``, ``check-assignor``,
output-path collisions, and capture's network side against a fake broker answering malformed frames.

Each attempt ends ``accepted`` (a result: exit 0 or 1), ``refused`` (exit 2 with one ``error:`` line, or a
UserInputError) or is a *finding* (a traceback, another exit code, a collision that overwrote a file). Every
input is drawn from one ``random.Random``: a seed reproduces it. benchmarks/fuzz_inputs.py and
benchmarks/fuzz_wire.py run them at volume; tests/test_robustness.py runs a few of each.

The output-path collisions expect the rule of issue 32 point 1 (no command overwrites a file it did not write
without ``--force``; an output path equal to an input is always refused, exit 2): until that rule is in, they
are findings by design.
"""

from __future__ import annotations

import contextlib
import json
import random
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.fuzz_inputs import EXAMPLES, HOSTILE, Outcome, _json, _text, mutate_bytes, mutated_text, scenarios

STREAMS_GROUPS = sorted((EXAMPLES / "streams-groups").glob("*.json"))
GROUP = EXAMPLES / "groups" / "orders-app.group.json"
SCENARIO = EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"


# -- streams-group files --------------------------------------------------------------------------------------

def make_streams_group(rng: random.Random) -> bytes:
    return mutated_text(_json(rng.choice(STREAMS_GROUPS)), rng)


def read_streams_group(data: bytes, rng: random.Random) -> None:
    """Parsed, then through both broker-side assignors and written as their output document; Kafka's own
    throws (StreamsAssignorError) are a result, as in Kafka."""
    from taskassign.errors import StreamsAssignorError
    from taskassign.streams_protocol import run_assignor
    from taskassign.streams_protocol.format import parse_streams_group

    group = parse_streams_group(_text(data))
    for name in ("sticky", "balanced"):
        with contextlib.suppress(StreamsAssignorError):  # Kafka throws there too
            run_assignor(group, name)


def attempt_streams_group(rng: random.Random) -> Outcome:
    from taskassign.errors import UserInputError

    data = make_streams_group(rng)
    try:
        read_streams_group(data, rng)
    except UserInputError as exc:
        return Outcome("streams_group", "refused", type(exc).__name__)
    except Exception as exc:
        return Outcome("streams_group", "finding", repr(exc)[:300], traceback.format_exc(limit=8)[-2000:],
                       data.decode("utf-8", "backslashreplace")[:2000])
    return Outcome("streams_group", "accepted")


# -- commands -------------------------------------------------------------------------------------------------

def _what_if_flags(rng: random.Random) -> list[str]:
    configs = ("num.standby.replicas", "acceptable.recovery.lag", "max.warmup.replicas",
               "probing.rebalance.interval.ms", "rack.aware.assignment.strategy", "rack.aware.assignment.tags",
               "task.assignor.class", "taskassign.kafka.version", "no.such.config")
    flags: list[str] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(("set", "set", "add", "remove", "rack"))
        value = str(rng.choice(HOSTILE)) if rng.random() < 0.5 else rng.choice(
            ["0", "1", "3", "59999", "60000", str(2**63 - 1), str(2**63), "sticky", "min_traffic", "zone", "x.y:Z"])
        if kind == "set":
            flags += ["--set", f"{rng.choice(configs)}={value}"]
        elif kind == "add":
            count = rng.choice(["1", "3", "10000", "0", "-1", "x", str(2**63)])
            shape = rng.choice(["", ":threads=2", ":threads=100000", ":rack=r9", ":tag.zone=z", ":threads=0",
                                f":threads={value}", ":bogus=1"])
            flags += ["--add-clients", count + shape]
        elif kind == "remove":
            flags += ["--remove-client", rng.choice(["00000000", "0", "", "zz", value])]
        else:
            flags += ["--rack-down", rng.choice(["rack-a", "r1", "", value])]
    return flags


def _write(workdir: Path, name: str, data: bytes) -> Path:
    path = workdir / name
    path.write_bytes(data)
    return path


def _assignment_pair(rng: random.Random, workdir: Path) -> tuple[Path, Path]:
    from tests.fuzz_inputs import _written

    before = _written()["assignment"]
    after = json.loads(json.dumps(before))
    return _write(workdir, "before.json", mutated_text(before, rng) if rng.random() < 0.5 else
                  json.dumps(before).encode()), _write(workdir, "after.json", mutated_text(after, rng))


def _argv_what_if(rng: random.Random, workdir: Path) -> list[str]:
    command = rng.choice(["assign", "compare", "streams-migration", "simulate", "rebalance"])
    source = GROUP if command == "rebalance" else SCENARIO
    argv = [command, str(source), *_what_if_flags(rng)]
    if command == "compare":
        argv += ["-a", "high_availability,sticky"]
    if command == "simulate":
        argv += ["--events", str(EXAMPLES / "events" / "scale-out.events.json"), "--out", str(workdir / "sim")]
    return argv


def _argv_diff(rng: random.Random, workdir: Path) -> list[str]:
    before, after = _assignment_pair(rng, workdir)
    return ["diff", str(before), str(after), *(["--json"] if rng.random() < 0.5 else [])]


def _argv_compare(rng: random.Random, workdir: Path) -> list[str]:
    path = _write(workdir, "input.json", mutated_text(rng.choice(scenarios()), rng))
    return ["compare", str(path), "-a", "high_availability,sticky,streams_balanced", "--json"]


def _argv_streams_migration(rng: random.Random, workdir: Path) -> list[str]:
    path = _write(workdir, "input.json", mutated_text(rng.choice(scenarios()), rng))
    return ["streams-migration", str(path), "--json"]


def _argv_check_assignor(rng: random.Random, workdir: Path) -> list[str]:
    path = _write(workdir, "input.scenario.json", mutated_text(rng.choice(scenarios()), rng))
    return ["check-assignor", rng.choice(["high_availability", "sticky", "state_aware"]), "--scenarios", str(path),
            "--random", "0", "--json"]


def _argv_streams_group(rng: random.Random, workdir: Path) -> list[str]:
    path = _write(workdir, "input.streams-group.json", make_streams_group(rng))
    return ["assign", str(path), "-a", rng.choice(["streams_sticky", "streams_balanced"]), "--json"]


#: Each surface with how one attempt's arguments are made (files it needs written into the work directory).
SURFACES: Mapping[str, Callable[[random.Random, Path], list[str]]] = {
    "what_if": _argv_what_if,
    "diff": _argv_diff,
    "compare": _argv_compare,
    "streams_migration": _argv_streams_migration,
    "check_assignor": _argv_check_assignor,
    "streams_group_assign": _argv_streams_group,
}


def run_cli(name: str, argv: list[str], shown: str = "") -> Outcome:
    """``taskassign ARGV``: exit 0 or 1 is a result, exit 2 with an ``error:`` line a refusal; an escaping
    exception, a traceback or another exit code is a finding."""
    from typer.testing import CliRunner

    from taskassign.cli import app

    result = CliRunner().invoke(app, argv)
    escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
    shown = shown or " ".join(argv)[:2000]
    if escaped or result.exit_code not in (0, 1, 2) or "Traceback" in result.output:
        detail = "".join(traceback.format_exception(result.exception)) if escaped and result.exception else ""
        return Outcome(name, "finding", f"exit {result.exit_code}: {result.exception!r}"[:300],
                       (detail or result.output)[-2000:], shown)
    if result.exit_code == 2:
        if "error:" not in result.output:
            return Outcome(name, "finding", "exit 2 without an error line", result.output[-2000:], shown)
        return Outcome(name, "refused", "exit 2", " ".join(result.output.split())[:300])
    return Outcome(name, "accepted")


def surface_attempt(name: str, rng: random.Random, workdir: Path) -> Outcome:
    return run_cli(name, SURFACES[name](rng, workdir))


# -- output-path collisions -----------------------------------------------------------------------------------

def _collisions(work: Path) -> list[tuple[str, list[str], list[Path]]]:
    """(case, argv, files that must come out unchanged) for every command that writes, in ``work``."""
    scenario = work / "app.scenario.json"
    group = work / "app.group.json"
    mine = work / "notes.json"  # the user's file, which taskassign did not write
    out_dir = work / "dir"
    return [
        ("assign -o INPUT", ["assign", str(scenario), "-o", str(scenario)], [scenario]),
        ("assign -o USER_FILE", ["assign", str(scenario), "-o", str(mine)], [mine]),
        ("rebalance -o INPUT", ["rebalance", str(group), "-o", str(group)], [group]),
        ("rebalance -o USER_FILE", ["rebalance", str(group), "-o", str(mine)], [mine]),
        ("streams-migration -o INPUT", ["streams-migration", str(group), "-o", str(group)], [group]),
        ("streams-migration -o USER_FILE", ["streams-migration", str(scenario), "-o", str(mine)], [mine]),
        ("simulate --out DIR_WITH_USER_FILE", ["simulate", str(scenario), "-e",
                                              str(EXAMPLES / "events" / "scale-out.events.json"), "--out",
                                              str(out_dir)], [out_dir / "simulation.json"]),
        ("compare --out DIR_WITH_USER_FILE", ["compare", str(scenario), "-a", "high_availability,sticky",
                                             "--out", str(out_dir)], [out_dir / "report.html"]),
        ("check-assignor --save-failures DIR_WITH_USER_FILE",
         ["check-assignor", f"{Path(__file__).parent / 'assignors' / 'plugins.py'}:DropsEverything", "--scenarios",
          str(scenario), "--random", "0", "--save-failures", str(out_dir)],  # fails every case: it writes
         [out_dir / "two-racks-one-standby.scenario.json"]),  # the case's name: the scenario's own
    ]


def collision_outcomes(work: Path) -> list[Outcome]:
    """Every collision case on fresh copies: each must be refused (exit 2) with its files unchanged."""
    import shutil

    outcomes = []
    for case, argv, kept in _collisions(work):
        if work.exists():
            shutil.rmtree(work)
        (work / "dir").mkdir(parents=True)
        shutil.copy(SCENARIO, work / "app.scenario.json")
        shutil.copy(GROUP, work / "app.group.json")
        for path in (work / "notes.json", work / "dir" / "simulation.json", work / "dir" / "report.html",
                     work / "dir" / "two-racks-one-standby.scenario.json"):
            path.write_text('{"mine": true}\n')
        before = {p: p.read_bytes() for p in kept}
        outcome = run_cli(case, argv)
        changed = [p.name for p in kept if p.read_bytes() != before[p]]
        if changed:
            outcomes.append(Outcome(case, "finding", f"overwrote {', '.join(changed)} (exit {outcome.kind})"))
        elif outcome.kind != "refused":
            outcomes.append(Outcome(case, "finding", f"not refused ({outcome.kind}): expected exit 2"))
        else:
            outcomes.append(outcome)
    return outcomes


# -- capture against a fake broker ----------------------------------------------------------------------------

def capture_attempt(rng: random.Random, workdir: Path) -> Outcome:
    """``taskassign capture`` against a loopback broker replaying a recording (tests/capture/data/recordings)
    whose responses carry 1-3 mutations (bytes flipped, truncated, inserted, lengths overwritten): a capture,
    or exit 2 with one error line within the timeout; never a traceback."""
    from tests.capture.frames_server import load_frames, recording_dirs, serve_frames

    recording = rng.choice(recording_dirs())
    summary = json.loads((recording / "summary.json").read_text())
    frames = load_frames(recording / "frames.json")
    for _ in range(rng.randint(1, 3)):
        frame = rng.choice(frames)
        frame.response = frame.response[:4] + mutate_bytes(frame.response[4:], rng)
    out = workdir / "captured.streams-group.json"
    if out.exists():
        out.unlink()
    shown = f"{recording.parent.name}/{recording.name} with mutated responses (seeded)"
    with serve_frames(frames) as server:
        return run_cli("capture", ["capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group",
                                   summary["application_id"], "-o", str(out), "--timeout", "3"], shown)


def reproduce(name: str, seed: int, workdir: Path) -> Any:
    """One attempt of ``name`` from ``seed`` (what a finding's record needs to be run again)."""
    rng = random.Random(seed)
    if name == "streams_group":
        return attempt_streams_group(rng)
    if name == "capture":
        return capture_attempt(rng, workdir)
    return surface_attempt(name, rng, workdir)
