"""``taskassign assign --explain``: the assignor's own reasons, or the bare moves for other assignors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
JOINS = EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json"
TWO_RACKS = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def test_state_aware_says_why() -> None:
    result = runner.invoke(app, ["assign", str(TWO_RACKS), "-a", "state_aware", "--explain"])
    assert result.exit_code == 0, result.output
    assert "explain:" in result.output
    assert "balance of state per thread" in result.output.replace("\n", " ")


def test_explanations_go_into_the_assignment_file() -> None:
    result = runner.invoke(app, ["assign", str(JOINS), "-a", "state_aware", "--json", "--explain"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["explanations"] and all(s.startswith("Task ") for s in doc["explanations"])
    # state_aware explains itself even without --explain: the sentences are part of its result
    plain = json.loads(runner.invoke(app, ["assign", str(JOINS), "-a", "state_aware", "--json"]).stdout)
    assert plain["explanations"] == doc["explanations"]


def test_other_assignors_list_their_moves_without_a_reason() -> None:
    result = runner.invoke(app, ["assign", str(TWO_RACKS), "-a", "high_availability", "--json", "--explain"])
    assert result.exit_code == 0, result.output
    sentences = json.loads(result.stdout)["explanations"]
    assert sentences and all(s.endswith("the assignor gave no reason.") for s in sentences)
    assert "explanations" not in json.loads(
        runner.invoke(app, ["assign", str(TWO_RACKS), "-a", "high_availability", "--json"]).stdout)


def test_nothing_moved() -> None:
    result = runner.invoke(app, ["assign", str(TWO_RACKS), "-a", "identity", "--explain"])
    assert result.exit_code == 0, result.output
    assert "no task moved" in result.output
