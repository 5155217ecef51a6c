"""At 80 columns every table fits, and no client name, assignor name or number is cut (no ellipsis)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

SCENARIO = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
GROUP = str(EXAMPLES_DIR / "groups" / "orders-app.group.json")
RACKS = str(EXAMPLES_DIR / "scenarios" / "rack-traffic.scenario.json")
EVENTS = str(EXAMPLES_DIR / "events" / "rolling-restart.events.json")
COMMANDS = {
    "assign --metrics": ["assign", GROUP, "--metrics"],
    "assign what-if": ["assign", GROUP, "--metrics", "--remove-client", "orders-app-5c2d"],
    "compare": ["compare", SCENARIO, "-a", "high_availability,sticky,legacy_sticky,state_aware"],
    "compare what-if": ["compare", SCENARIO, "-a", "high_availability", "--rack-down", "rack-a"],
    "streams-migration": ["streams-migration", SCENARIO],
    "rebalance": ["rebalance", GROUP],
    "rebalance what-if": ["rebalance", GROUP, "--remove-client", "orders-app-9e4a"],
    "simulate what-if": ["simulate", SCENARIO, "-e", EVENTS, "--add-clients", "1"],
    "optimize what-if": ["optimize", RACKS, "--active", "--set", "rack.aware.assignment.traffic_cost=1"],
}

#: Words that must appear whole in each command's output: client names, assignor names, numbers.
INTACT = {
    "assign --metrics": ("orders-app-1b6f", "orders-app-9e4a", "218", "restore"),
    "assign what-if": ("orders-app-1b6f", "verdict", "next"),
    "compare": ("high_availability;", "legacy_sticky;", "state_aware", "records_to_restore", "verdict"),
    "compare what-if": ("app-1b6f", "(removed)", "verdict"),
    "streams-migration": ("streams_balanced", "records_to_restore", "verdict"),
    "rebalance": ("orders-app-1b6f", "StreamThread-2"),
    "rebalance what-if": ("orders-app-1b6f", "verdict", "next"),
    "simulate what-if": ("rejoin", "restore", "verdict", "next"),
    "optimize what-if": ("verdict", "next"),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_line_fits_80_columns_and_nothing_is_cut(name: str) -> None:
    result = CliRunner().invoke(app, COMMANDS[name], env={"COLUMNS": "80"})
    assert result.exit_code in (0, 1), result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    assert "…" not in result.stdout  # rich's ellipsis: a cut name or number
    for text in INTACT[name]:
        assert any(text in line.split() for line in lines), text


def test_compare_keys_its_columns_when_the_assignor_names_do_not_fit() -> None:
    result = CliRunner().invoke(app, COMMANDS["compare"], env={"COLUMNS": "80"})
    assert "columns: A = high_availability; B = sticky; C = legacy_sticky; D = state_aware" in result.stdout
    assert any(line.split()[:2] == ["verdict", "high_availability"] for line in result.stdout.splitlines())


def test_every_verdict_is_in_the_json_too() -> None:
    runner = CliRunner()
    for args in (["compare", SCENARIO, "-a", "high_availability,sticky"],
                 ["compare", SCENARIO, "-a", "high_availability", "--rack-down", "rack-a"],
                 ["streams-migration", SCENARIO],
                 ["assign", SCENARIO, "--remove-client", "app-1b6f"],
                 ["rebalance", GROUP, "--remove-client", "orders-app-9e4a"],
                 ["simulate", SCENARIO, "-e", EVENTS, "--add-clients", "1"],
                 ["optimize", RACKS, "--active", "--set", "rack.aware.assignment.traffic_cost=1"]):
        result = runner.invoke(app, [*args, "--json"])
        assert result.exit_code in (0, 1), result.output
        verdict = json.loads(result.stdout)["verdict"]
        assert set(verdict) >= {"better", "headline", "reasons", "risks", "next_steps"}
        assert verdict["next_steps"] and verdict["next_steps"][0].startswith("taskassign ")


def test_assign_json_keeps_process_ids_and_adds_names() -> None:
    doc = json.loads(CliRunner().invoke(app, ["assign", GROUP, "--json"]).stdout)
    assert {c["name"] for c in doc["clients"].values()} == {"orders-app-1b6f", "orders-app-5c2d", "orders-app-9e4a"}
    assert "1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11" in doc["clients"]
