from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import GOLDEN_DIR

runner = CliRunner()
CASE = GOLDEN_DIR / "high_availability" / "ha-spec-e5"


def test_golden_assignment_validates() -> None:
    result = runner.invoke(app, ["validate", f"{CASE}.scenario.json", f"{CASE}.assignment.json"])
    assert result.exit_code == 0, result.output
    assert "NONE" in result.output and "complete" in result.output


def test_invalid_assignment_exits_1_and_names_error(tmp_path: Path) -> None:
    doc = json.loads(Path(f"{CASE}.assignment.json").read_text())
    first = next(iter(doc["clients"]))
    del doc["clients"][first]
    bad = tmp_path / "bad.assignment.json"
    bad.write_text(json.dumps(doc))
    result = runner.invoke(app, ["validate", f"{CASE}.scenario.json", str(bad)])
    assert result.exit_code == 1
    assert "MISSING_PROCESS_ID" in result.output


def test_incomplete_but_valid_passes_unless_strict(tmp_path: Path) -> None:
    doc = json.loads(Path(f"{CASE}.assignment.json").read_text())
    for client in doc["clients"].values():
        client["standby"] = []
    lax = tmp_path / "lax.assignment.json"
    lax.write_text(json.dumps(doc))
    ok = runner.invoke(app, ["validate", f"{CASE}.scenario.json", str(lax)])
    assert ok.exit_code == 0 and "fewer standbys" in ok.output
    strict = runner.invoke(app, ["validate", f"{CASE}.scenario.json", str(lax), "--strict"])
    assert strict.exit_code == 1
