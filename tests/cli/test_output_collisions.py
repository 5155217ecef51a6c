"""Every command that writes, under one rule (formats.output_paths, docs/commands.md "Output files"): a file
taskassign did not write is refused (exit 2, one line naming the path and --force, its bytes unchanged),
replaced with --force; an output that is an input is refused even with --force; taskassign's own output is
replaced without a word (issue 32, point 1)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.bridge.audit import AUDIT_FORMAT
from taskassign.cli import app
from taskassign.formats.output_paths import OutputGuard, written_by_taskassign
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import SubscriptionInfo
from tests.helpers import EXAMPLES_DIR, GOLDEN_DIR, running_service

runner = CliRunner()
SCENARIO = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
EVENTS = EXAMPLES_DIR / "events" / "scale-out.events.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
OPTIMIZE = GOLDEN_DIR / "rack_optimize_active" / "optact-spec-e8.scenario.json"
HEX = SubscriptionInfo.of(11, ProcessId.of_ints(0, 1), {TaskId(0, 0): -2}, user_endpoint="h:1").encode().hex()
FOREIGN = b"the user's own bytes\n"
RAISING_PLUGIN = '''
from taskassign import BaseTaskAssignor


class Raising(BaseTaskAssignor):
    def assign(self, application_state):
        raise RuntimeError("no")
'''


@dataclass(frozen=True)
class Writer:
    """A command that writes: ``argv(tmp, out, input)``; ``input`` is a copy of its input in ``tmp`` (None:
    the default copy). ``target`` is the file at risk: ``out`` itself, or ``out / name`` for a directory.
    ``ok`` is its exit code on success."""

    argv: Callable[[Path, Path, Path], list[str]]
    source: Path | None
    name: str | None = None
    ok: int = 0
    #: The file the command writes into, as an input (the same path as ``target``); None: no such case.
    input_at_target: bool = True

    def target(self, out: Path) -> Path:
        return out / self.name if self.name else out


def _audit(tmp: Path) -> Path:
    log = tmp / "audit.jsonl"
    scenario = json.loads(SCENARIO.read_text())
    record = {"format": AUDIT_FORMAT, "decision_id": "d1", "source": "computed", "assignor": "high_availability",
              "scenario": scenario}
    log.write_text(json.dumps(record) + "\n")
    return log


def _plugin(tmp: Path) -> str:
    path = tmp / "raising_plugin.py"
    path.write_text(RAISING_PLUGIN)
    return f"{path}:Raising"


WRITERS: dict[str, Writer] = {
    "assign": Writer(lambda t, o, i: ["assign", str(i), "-o", str(o)], SCENARIO),
    "assign --out-dir": Writer(lambda t, o, i: ["assign", str(i.parent), "--out-dir", str(o)], SCENARIO,
                               name="two-racks-one-standby.assignment.json", input_at_target=False),
    "rebalance": Writer(lambda t, o, i: ["rebalance", str(i), "-o", str(o)], GROUP),
    "streams-migration": Writer(lambda t, o, i: ["streams-migration", str(i), "-o", str(o)], SCENARIO),
    "optimize": Writer(lambda t, o, i: ["optimize", str(i), "--active", "-o", str(o)], OPTIMIZE),
    "simulate": Writer(lambda t, o, i: ["simulate", str(i), "--events", str(EVENTS), "--out", str(o)], SCENARIO,
                       name="final.scenario.json"),
    "compare": Writer(lambda t, o, i: ["compare", str(i), "-a", "high_availability,sticky", "--out", str(o)],
                      SCENARIO, name="compare.json"),
    "check-assignor": Writer(lambda t, o, i: ["check-assignor", _plugin(t), "--scenarios", str(i), "--random", "0",
                                              "--save-failures", str(o)],
                             SCENARIO, name="two-racks-one-standby.scenario.json", ok=1),
    "plan": Writer(lambda t, o, i: ["plan", str(i), "-a", "high_availability", "-o", str(o)], GROUP),
    "bridge replay": Writer(lambda t, o, i: ["bridge", "replay", str(i), "--out-dir", str(o)], None,
                            name="d1.scenario.json"),
    "decode": Writer(lambda t, o, i: ["decode", "subscription-info", f"@{i}", "-o", str(o)], None),
    "encode": Writer(lambda t, o, i: ["encode", str(i), "-o", str(o)], None),
    "report": Writer(lambda t, o, i: ["report", str(i), "--out", str(o)], None),
}


def _source(command: str, tmp: Path) -> Path:
    """A copy of the command's input in ``tmp/in``."""
    folder = tmp / "in"
    folder.mkdir(exist_ok=True)
    writer = WRITERS[command]
    if writer.source is not None:
        return Path(shutil.copy(writer.source, folder / writer.source.name))
    if command == "bridge replay":
        return _audit(folder)
    if command == "decode":
        path = folder / "message.bin"
        path.write_bytes(bytes.fromhex(HEX))
        return path
    if command == "encode":
        decoded = runner.invoke(app, ["decode", "subscription-info", HEX])
        path = folder / "message.json"
        path.write_text(decoded.stdout)
        return path
    assert command == "report"
    sim = folder / "sim"
    assert runner.invoke(app, ["simulate", str(SCENARIO), "--events", str(EVENTS), "--out", str(sim)]).exit_code == 0
    return sim / "simulation.json"


def _run(argv: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, argv, env={"COLUMNS": "2000"})  # one line, however long the paths
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_foreign_file_is_refused_and_kept(command: str, tmp_path: Path) -> None:
    writer, out = WRITERS[command], tmp_path / "out"
    target = writer.target(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(FOREIGN)
    code, output = _run(writer.argv(tmp_path, out, _source(command, tmp_path)))
    assert code == 2, output
    assert str(target) in output and "taskassign did not write it" in output and "--force" in output, output
    assert target.read_bytes() == FOREIGN


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_force_replaces_a_foreign_file(command: str, tmp_path: Path) -> None:
    writer, out = WRITERS[command], tmp_path / "out"
    target = writer.target(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(FOREIGN)
    code, output = _run([*writer.argv(tmp_path, out, _source(command, tmp_path)), "--force"])
    assert code == writer.ok, output
    assert target.read_bytes() != FOREIGN
    assert command in ("decode", "encode") or written_by_taskassign(target)


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_its_own_output_is_replaced(command: str, tmp_path: Path) -> None:
    writer, out = WRITERS[command], tmp_path / "out"
    argv = writer.argv(tmp_path, out, _source(command, tmp_path))
    first, output = _run(argv)
    assert first == writer.ok, output
    assert command == "encode" or written_by_taskassign(writer.target(out))
    if command == "encode":  # raw bytes carry no header: an existing file needs --force, even its own
        code, output = _run(argv)
        assert code == 2 and "--force" in output, output
        return
    writer.target(out).touch()  # the first run's file is there (its bytes may carry a time: plan's do)
    second, output = _run(argv)
    assert second == writer.ok, output
    assert written_by_taskassign(writer.target(out))


@pytest.mark.parametrize("command", sorted(c for c, w in WRITERS.items() if w.input_at_target))
@pytest.mark.parametrize("force", [False, True])
def test_an_input_is_never_written_over(command: str, force: bool, tmp_path: Path) -> None:
    writer, out = WRITERS[command], tmp_path / "out"
    target = writer.target(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = _source(command, tmp_path)
    shutil.copy(source, target)
    before = target.read_bytes()
    code, output = _run([*writer.argv(tmp_path, out, target), *(["--force"] if force else [])])
    assert code == 2, output
    assert f"{target}: is the input" in output, output
    assert target.read_bytes() == before


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_link_to_the_input_is_the_input(link: str, tmp_path: Path) -> None:
    source = Path(shutil.copy(SCENARIO, tmp_path / "s.scenario.json"))
    alias = tmp_path / "alias.json"
    alias.symlink_to(source) if link == "symlink" else alias.hardlink_to(source)
    before = source.read_bytes()
    code, output = _run(["assign", str(source), "-o", str(alias), "--force"])
    assert code == 2 and "is the input" in output, output
    assert source.read_bytes() == before


def test_approve_into_a_state_directory(tmp_path: Path) -> None:
    plan = tmp_path / "p.plan.json"
    assert _run(["plan", str(GROUP), "-a", "high_availability", "-o", str(plan)])[0] == 0
    state = tmp_path / "state"
    code, output = _run(["approve", str(plan), "--state-dir", str(state)])
    assert code == 0, output
    (stored,) = (state / "plans").iterdir()
    assert _run(["approve", str(plan), "--state-dir", str(state)])[0] == 0  # its own: replaced
    stored.write_bytes(FOREIGN)
    code, output = _run(["approve", str(plan), "--state-dir", str(state)])
    assert code == 2 and str(stored) in output and "--force" in output, output
    assert stored.read_bytes() == FOREIGN
    assert _run(["approve", str(plan), "--state-dir", str(state), "--force"])[0] == 0
    assert written_by_taskassign(stored)
    code, output = _run(["approve", str(stored), "--state-dir", str(state), "--force"])
    assert code == 2 and "is the input" in output, output


def test_bridge_build_checks_before_compiling(tmp_path: Path) -> None:
    jar = tmp_path / "bridge.jar"
    jar.write_bytes(FOREIGN)
    libs = tmp_path / "libs"
    libs.mkdir()
    code, output = _run(["bridge", "build", "--kafka-libs", str(libs), "-o", str(jar)])
    assert code == 2 and "taskassign did not write it" in output, output
    code, output = _run(["bridge", "build", "--kafka-libs", str(libs), "-o", str(jar), "--force"])
    assert code == 2 and "kafka-streams" in output, output  # past the guard: no jars to compile against
    assert jar.read_bytes() == FOREIGN


def test_capture_checks_before_connecting(tmp_path: Path) -> None:
    out = tmp_path / "GROUP.json"
    out.write_bytes(FOREIGN)
    base = ["capture", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--timeout", "0.5"]
    code, output = _run([*base, "-o", str(out)])
    assert code == 2 and "taskassign did not write it" in output, output
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=PLAINTEXT\n")
    code, output = _run([*base, "--command-config", str(config), "-o", str(config), "--force"])
    assert code == 2 and "is the input" in output, output
    assert config.read_text() == "security.protocol=PLAINTEXT\n" and out.read_bytes() == FOREIGN


def test_serve_appends_only_to_its_own_audit_log(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_bytes(FOREIGN)
    code, output = _run(["serve", "--listen", "127.0.0.1:0", "--audit-log", str(log)])
    assert code == 2 and str(log) in output and "--force" in output, output
    assert log.read_bytes() == FOREIGN
    config = tmp_path / "service.json"
    config.write_text("{}")
    code, output = _run(["serve", "--config", str(config), "--audit-log", str(config), "--force"])
    assert code == 2 and "is the input" in output, output
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"format": AUDIT_FORMAT, "decision_id": "x"}) + "\n")
    with running_service("--audit-log", str(own)):
        pass
    with running_service("--audit-log", str(log), "--force"):
        pass


def test_pipeline_output_is_never_its_input(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap"
    assert _run(["fleet", "generate", "--apps", "1", "--out", str(snapshot)])[0] == 0
    for out in (snapshot, tmp_path):
        code, output = _run(["pipeline", "run", "--input", str(snapshot), "--output", str(out)])
        assert code == 2 and str(out) in output and "input" in output, output
    foreign = tmp_path / "a.scenario.json"
    foreign.write_bytes(FOREIGN)
    code, output = _run(["pipeline", "export-scenario", "--input", str(snapshot), "--app", "a", "-o", str(foreign)])
    assert code == 2 and "taskassign did not write it" in output, output  # refused before Spark starts
    assert foreign.read_bytes() == FOREIGN


def test_the_guard_knows_taskassign_files(tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    html.write_text('<!DOCTYPE html>\n<html><head><meta name="generator" content="taskassign"></head></html>')
    json_file = tmp_path / "x.json"
    json_file.write_text('{\n  "format": "taskassign/scenario/v1"}')
    other = tmp_path / "y.json"
    other.write_text('{"name": "x", "format": "taskassign/scenario/v1"}')
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert written_by_taskassign(html) and written_by_taskassign(json_file)
    assert not written_by_taskassign(other) and not written_by_taskassign(fifo)
    with pytest.raises(ValueError, match="taskassign did not write it"):
        OutputGuard().file(other)
    assert OutputGuard(force=True).file(other) == other
    empty = tmp_path / "mktemp"
    empty.touch()
    assert OutputGuard().file(empty) == empty  # nothing to lose
    with pytest.raises(ValueError, match="taskassign did not write it"):
        OutputGuard().file(fifo)


def test_a_capture_of_a_history_directory_is_an_input(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    capture = history / "g-epoch-0000000001.json"
    shutil.copy(EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json", capture)
    before = capture.read_bytes()
    code, output = _run(["rebalance", str(history), "-o", str(capture), "--force"])
    assert code == 2 and "is the input" in output, output
    assert capture.read_bytes() == before


def test_the_service_keeps_a_plan_only_where_taskassign_wrote(tmp_path: Path) -> None:
    plan = tmp_path / "p.plan.json"
    assert _run(["plan", str(GROUP), "-a", "high_availability", "-o", str(plan)])[0] == 0
    state = tmp_path / "state"
    with running_service("--state-dir", str(state)) as url:
        code, output = _run(["approve", str(plan), "--service", url])
        assert code == 0, output
        (stored,) = (state / "plans").iterdir()
        stored.write_bytes(FOREIGN)
        code, output = _run(["approve", str(plan), "--service", url])
        assert code == 2 and "HTTP 409" in output and "taskassign did not write it" in output, output
    assert stored.read_bytes() == FOREIGN


def test_capture_from_recorded_frames_replaces_its_own_file_and_a_forced_one(tmp_path: Path) -> None:
    from tests.capture.frames_server import load_frames, recording_dirs, serve_frames

    recording = next(iter(recording_dirs()), None)
    if recording is None:
        pytest.skip("no recorded broker frames")
    group = json.loads((recording / "summary.json").read_text())["application_id"]
    out = tmp_path / "group.json"
    out.write_bytes(FOREIGN)
    for extra, expected in (([], 2), (["--force"], 0), ([], 0)):  # refused, forced, then its own: replaced
        with serve_frames(load_frames(recording / "frames.json")) as server:
            code, output = _run(["capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group", group,
                                 "-o", str(out), "--timeout", "10", *extra])
        assert code == expected, output
        assert (out.read_bytes() == FOREIGN) == (expected == 2)
    assert written_by_taskassign(out)
