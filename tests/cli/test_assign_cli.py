from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR, GOLDEN_DIR, scenario_doc

runner = CliRunner()
EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def test_assign_prints_a_table() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity"])
    assert result.exit_code == 0, result.output
    assert "two-racks-one-standby" in result.output
    # text output: clients by their client.id (the consumers' prefix), deadlines relative to the leader's clock,
    # state in bytes, no box drawing
    assert "app-1b6f" in result.output and "1b6f8a52-0c1e" not in result.output
    assert "8.3 GB of state" in result.output
    assert not set("│┃━╇") & set(result.output)


def test_assign_text_shows_the_followup_deadline_relative_to_now() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "in 10 min" in result.output  # probing.rebalance.interval.ms = 600000 after now_ms
    assert "1700000600000" not in result.output


def test_assign_writes_an_assignment_file(tmp_path: Path) -> None:
    out = tmp_path / "out.assignment.json"
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity", "-o", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["format"] == "taskassign/assignment/v1" and doc["error"] == "NONE"
    assert doc["clients"]["1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11"]["active"] == ["0_0", "0_1", "1_0", "1_1"]


def test_assign_json_to_stdout_is_byte_identical_across_runs() -> None:
    a = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity", "--json"])
    b = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "identity", "--json"])
    assert a.exit_code == 0 and a.stdout == b.stdout
    assert json.loads(a.stdout)["assignor"] == "identity"


def test_custom_assignor_by_file_path() -> None:
    spec = f"{EXAMPLES_DIR / 'custom_assignor.py'}:StateWeightedStickyAssignor"
    result = runner.invoke(app, ["assign", str(EXAMPLE), "--assignor", spec, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["error"] == "NONE" and doc["completeness"]["complete"] is True


def test_malformed_scenario_exits_2_without_traceback(tmp_path: Path) -> None:
    doc = scenario_doc()
    doc["tasks"][1]["id"] = "0_0"
    bad = tmp_path / "bad.scenario.json"
    bad.write_text(json.dumps(doc))
    result = runner.invoke(app, ["assign", str(bad), "-a", "identity"])
    assert result.exit_code == 2
    assert "$.tasks[1].id" in result.output and "duplicate task id" in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_missing_file_and_unknown_assignor_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["assign", str(tmp_path / "nope.json"), "-a", "identity"]).exit_code == 2
    unknown = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "nope"])
    assert unknown.exit_code == 2 and "built-in assignors" in unknown.output


def test_directory_mode(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for name in ("ha-spec-e1", "ha-spec-e3"):
        (src / f"{name}.scenario.json").write_text((GOLDEN_DIR / "high_availability" /
                                                     f"{name}.scenario.json").read_text())
    (src / "ignored.json").write_text("{}")
    out = tmp_path / "out"
    result = runner.invoke(app, ["assign", str(src), "--out-dir", str(out), "-a", "identity"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["ha-spec-e1.assignment.json", "ha-spec-e3.assignment.json"]


def test_directory_mode_reports_bad_files_and_continues(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.scenario.json").write_text(json.dumps(scenario_doc()))
    (src / "b.scenario.json").write_text("{not json")
    out = tmp_path / "out"
    result = runner.invoke(app, ["assign", str(src), "--out-dir", str(out), "-a", "identity"])
    assert result.exit_code == 2
    assert (out / "a.assignment.json").exists() and not (out / "b.assignment.json").exists()
    assert "invalid JSON" in result.output


def test_directory_needs_out_dir(tmp_path: Path) -> None:
    result = runner.invoke(app, ["assign", str(tmp_path), "-a", "identity"])
    assert result.exit_code == 2 and "--out-dir" in result.output


def test_invalid_assignment_exits_1(tmp_path: Path) -> None:
    plugin = tmp_path / "dup.py"
    plugin.write_text(
        "from taskassign import BaseTaskAssignor, KafkaStreamsAssignment, TaskAssignment\n"
        "class Dup(BaseTaskAssignor):\n"
        "    def assign(self, s):\n"
        "        return TaskAssignment(tuple(KafkaStreamsAssignment.of_tasks(p, s.all_tasks()) for p in s.clients))\n"
    )
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", f"{plugin}:Dup", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"] == "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"


def test_a_relative_looking_assignor_spec_exits_2() -> None:
    result = runner.invoke(app, ["assign", str(EXAMPLE), "-a", "../../x:Y"])
    assert result.exit_code == 2, result.output
    assert "neither a module name" in " ".join(result.output.split())


def test_a_scenario_without_clients_exits_2_naming_the_path(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["clients"] = []
    bad = tmp_path / "no-clients.scenario.json"
    bad.write_text(json.dumps(doc))
    result = runner.invoke(app, ["assign", str(bad)])
    assert result.exit_code == 2, result.output
    assert "$.clients" in result.output and "at least one client" in " ".join(result.output.split())
