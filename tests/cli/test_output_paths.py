"""Every command that writes: an output option naming an existing directory where a file goes, a file where
a directory goes, or a path under a file, is exit code 2 with a message naming the path; no traceback, and
nothing is left behind (issue 18, point 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.formats.json_io import dump_json, write_output_bytes
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import SubscriptionInfo
from tests.helpers import EXAMPLES_DIR, GOLDEN_DIR

runner = CliRunner()
SCENARIO = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
SCENARIOS = str(EXAMPLES_DIR / "scenarios")
EVENTS = str(EXAMPLES_DIR / "events" / "scale-out.events.json")
GROUP = str(EXAMPLES_DIR / "groups" / "orders-app.group.json")
OPTIMIZE = str(GOLDEN_DIR / "rack_optimize_active" / "optact-spec-e8.scenario.json")
HEX = SubscriptionInfo.of(11, ProcessId.of_ints(0, 1), {TaskId(0, 0): -2}, user_endpoint="h:1").encode().hex()
OUT = "{out}"

#: Commands that write a file at OUT.
FILE_WRITERS = {
    "assign": ["assign", SCENARIO, "-o", OUT],
    "optimize": ["optimize", OPTIMIZE, "--active", "-o", OUT],
    "rebalance": ["rebalance", GROUP, "-o", OUT],
    "report": ["report", "{sim}", "--out", OUT],
    "decode": ["decode", "subscription-info", HEX, "-o", OUT],
    "encode": ["encode", "{wire}", "-o", OUT],
}
#: Commands that write a directory at OUT.
DIRECTORY_WRITERS = {
    "simulate": ["simulate", SCENARIO, "--events", EVENTS, "--out", OUT],
    "assign-dir": ["assign", SCENARIOS, "--out-dir", OUT],
    "fleet-generate": ["fleet", "generate", "--apps", "1", "--out", OUT],
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("inputs")
    sim = base / "sim"
    assert runner.invoke(app, ["simulate", SCENARIO, "--events", EVENTS, "--out", str(sim)]).exit_code == 0
    decoded = runner.invoke(app, ["decode", "subscription-info", HEX])
    wire = base / "m.json"
    wire.write_text(decoded.stdout)
    return {"sim": str(sim), "wire": str(wire)}


def invoke(args: list[str], out: Path, inputs: dict[str, str]) -> tuple[int, str]:
    argv = [a.replace(OUT, str(out)).replace("{sim}", inputs["sim"]).replace("{wire}", inputs["wire"]) for a in args]
    result = runner.invoke(app, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("command", sorted(FILE_WRITERS))
def test_a_directory_where_a_file_goes(command: str, tmp_path: Path, inputs: dict[str, str]) -> None:
    out = tmp_path / "existing"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code, output = invoke(FILE_WRITERS[command], out, inputs)
    assert code == 2, output
    assert str(out) in output and "is a directory" in output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("command", sorted(DIRECTORY_WRITERS))
def test_a_file_where_a_directory_goes(command: str, tmp_path: Path, inputs: dict[str, str]) -> None:
    out = tmp_path / "existing"
    out.write_text("mine")
    code, output = invoke(DIRECTORY_WRITERS[command], out, inputs)
    assert code == 2, output
    assert str(out) in output and "not a directory" in output
    assert out.read_text() == "mine"


@pytest.mark.parametrize("command", sorted(FILE_WRITERS) + sorted(DIRECTORY_WRITERS))
def test_a_path_under_a_file(command: str, tmp_path: Path, inputs: dict[str, str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    out = blocker / "sub" / "out"
    code, output = invoke({**FILE_WRITERS, **DIRECTORY_WRITERS}[command], out, inputs)
    assert code == 2, output
    assert str(out) in output and f"{blocker} is in the way" in output
    assert blocker.read_text() == "mine"


def test_the_writers_name_the_path(tmp_path: Path) -> None:
    from taskassign.errors import OutputFileError

    with pytest.raises(OutputFileError, match="is a directory"):
        dump_json({}, tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputFileError, match="is in the way"):
        write_output_bytes(b"", tmp_path / "f" / "g")
    write_output_bytes(b"new", tmp_path / "a" / "b" / "c.bin")
    assert (tmp_path / "a" / "b" / "c.bin").read_bytes() == b"new"
