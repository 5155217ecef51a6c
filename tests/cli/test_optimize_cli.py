from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import GOLDEN_DIR

runner = CliRunner()
ACTIVE = GOLDEN_DIR / "rack_optimize_active" / "optact-spec-e8.scenario.json"
STANDBY = GOLDEN_DIR / "rack_optimize_standby" / "optsb-033-t10-c12-r1-mt-tags.scenario.json"


def test_optimize_writes_kafkas_result_with_the_kafka_solver(tmp_path: Path) -> None:
    out = tmp_path / "e8.assignment.json"
    result = runner.invoke(app, ["optimize", str(ACTIVE), "--active", "--solver", "kafka", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "optimizer cost 4" in result.output and "initial cost 40" in result.output
    ours = json.loads(out.read_text())
    golden = json.loads(ACTIVE.with_name("optact-spec-e8.assignment.json").read_text())
    assert ours["optimizer_cost"] == golden["optimizer_cost"] == 4
    assert {p: c["active"] for p, c in ours["clients"].items()} == {
        p: c["active"] for p, c in golden["clients"].items()}
    assert ours["details"]["solver"] == "kafka"


def test_kafka_compat_selects_the_kafka_solver_and_json_goes_to_stdout() -> None:
    result = runner.invoke(app, ["optimize", str(STANDBY), "--standby", "--kafka-compat", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["assignor"], doc["details"]["solver"], doc["optimizer_cost"]) == ("rack_optimize_standby", "kafka", 20)


def test_bad_invocations_are_input_errors(tmp_path: Path) -> None:
    both = runner.invoke(app, ["optimize", str(ACTIVE), "--active", "--standby"])
    assert both.exit_code == 2 and "exactly one of --active or --standby" in both.output
    doc = json.loads(ACTIVE.read_text())
    del doc["current_assignment"]
    bare_file = tmp_path / "bare.scenario.json"
    bare_file.write_text(json.dumps(doc))
    bare = runner.invoke(app, ["optimize", str(bare_file), "--active"])
    assert bare.exit_code == 2 and "has no current_assignment" in bare.output


def test_public_api_reports_a_skip_without_failing() -> None:
    result = runner.invoke(app, ["optimize", str(ACTIVE), "--active", "--api", "public", "--tasks", "stateless"])
    assert result.exit_code == 0, result.output
    assert "nothing moved" in result.output
