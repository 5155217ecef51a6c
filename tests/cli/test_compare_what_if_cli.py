"""``compare`` with a what-if: one assignor gives the before -> after diff, several compare on the altered input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
EXAMPLE = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
EVENTS = str(EXAMPLES_DIR / "events" / "scale-out.events.json")


def test_one_assignor_and_a_what_if_print_the_diff() -> None:
    result = runner.invoke(app, ["compare", EXAMPLE, "-a", "high_availability", "--rack-down", "rack-a"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("what-if: input altered: rack rack-a down")
    assert "the input as it is -> with the what-if" in lines[1]
    assert any(line.split()[:2] == ["replicas", "moved"] for line in lines)
    assert any(line.split()[:4] == ["clients", "3", "->", "2"] for line in lines)
    assert any(line.split()[:2] == ["app-1b6f", "(removed)"] for line in lines)
    assert any(line.startswith("verdict") for line in lines)


def test_the_diff_as_json_matches_two_assign_runs() -> None:
    result = runner.invoke(app, ["compare", EXAMPLE, "-a", "high_availability", "--add-clients", "1", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    plain = json.loads(runner.invoke(app, ["assign", EXAMPLE, "--json"]).stdout)
    altered = json.loads(runner.invoke(app, ["assign", EXAMPLE, "--json", "--add-clients", "1"]).stdout)
    added = [pid for pid, c in doc["diff"]["clients"].items() if c["status"] == "added"]
    assert added == [pid for pid in altered["clients"] if pid not in plain["clients"]]
    gained = doc["diff"]["clients"][added[0]]["active_gained"]
    assert gained == altered["clients"][added[0]]["active"]
    assert doc["what_if"] and set(doc["assignors"]) == {"as is", "what-if"}
    assert doc["assignors"]["what-if"]["metrics"]["clients"] == doc["assignors"]["as is"]["metrics"]["clients"] + 1


def test_simulated_what_if_shows_both_runs_totals() -> None:
    result = runner.invoke(app, ["compare", EXAMPLE, "-a", "state_aware", "--events", EVENTS,
                                 "--set", "num.standby.replicas=2"])
    assert result.exit_code == 0, result.output
    assert "run totals" in result.stdout and "as is" in result.stdout and "what-if" in result.stdout


def test_several_assignors_compare_on_the_altered_input() -> None:
    result = runner.invoke(app, ["compare", EXAMPLE, "-a", "high_availability,state_aware", "--add-clients", "2",
                                 "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {m["metrics"]["clients"] for m in doc["assignors"].values()} == {5}
    assert "what-if: input altered" in result.stderr


def test_out_with_one_assignor_and_a_what_if_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", EXAMPLE, "-a", "sticky", "--rack-down", "rack-b", "--out",
                                 str(tmp_path / "cmp")])
    assert result.exit_code == 2 and "--out" in result.stderr
