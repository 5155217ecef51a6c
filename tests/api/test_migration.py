"""The migration what-if: the same application under the classic assignor and the two broker-side ones, each
measured exactly as `taskassign assign --metrics` measures it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from taskassign.analysis.metrics import compute_metrics
from taskassign.api.migration import MIGRATION_FORMAT, migration_what_if
from taskassign.cli import app
from taskassign.errors import UserInputError
from taskassign.formats.scenario import read_scenario
from taskassign.leader.assign import assign_scenario
from tests.helpers import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def test_three_runs_measured_like_assign() -> None:
    scenario = read_scenario(EXAMPLE)
    what_if = migration_what_if(scenario)
    assert [(r.assignor, r.protocol) for r in what_if.runs] == [
        ("high_availability", "classic"), ("streams_sticky", "streams"), ("streams_balanced", "streams")]
    for run in what_if.runs:
        alone = assign_scenario(scenario, run.assignor)
        assert run.result == alone
        assert run.metrics == compute_metrics(scenario.state, alone.group)
    classic, sticky, balanced = (r.metrics for r in what_if.runs)
    assert classic is not None and sticky is not None and balanced is not None
    # the shipped example, as docs/streams-protocol.md shows it
    assert (classic.active_moves, sticky.active_moves, balanced.active_moves) == (4, 2, 6)
    assert (classic.records_to_restore, sticky.records_to_restore, balanced.records_to_restore) == (
        340_000, 253_000, 352_000)
    assert (classic.extra_standby_replicas, sticky.extra_standby_replicas) == (2, 0)
    assert what_if.runs[0].result is not None and what_if.runs[0].result.probing_rebalance_needed
    assert not any(r.result and r.result.probing_rebalance_needed for r in what_if.runs[1:])


def test_notes_say_what_the_metrics_cannot() -> None:
    notes = " ".join(migration_what_if(read_scenario(EXAMPLE)).notes)
    assert "probing rebalance" in notes and "2 warm-up replica(s)" in notes
    assert "read neither racks nor client tags (rack.aware.assignment.tags: zone" in notes


def test_the_classic_side_must_be_classic() -> None:
    with pytest.raises(UserInputError, match="--classic"):
        migration_what_if(read_scenario(EXAMPLE), "streams_sticky")


def test_the_command() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["streams-migration", str(EXAMPLE), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["format"] == MIGRATION_FORMAT and doc["scenario"] == "two-racks-one-standby"
    assert [r["assignor"] for r in doc["runs"]] == ["high_availability", "streams_sticky", "streams_balanced"]
    assert doc["runs"][1]["metrics"]["active_moves"] == 2 and doc["runs"][1]["error"] == "NONE"
    text = runner.invoke(app, ["streams-migration", str(EXAMPLES_DIR / "groups" / "orders-app.group.json"),
                               "--classic", "legacy_sticky"])
    assert text.exit_code == 0, text.output
    assert "legacy_sticky" in text.output and "streams_balanced" in text.output and "note:" in text.output
    bad = runner.invoke(app, ["streams-migration", str(EXAMPLE), "--classic", "nope"])
    assert bad.exit_code == 2


def test_the_worked_comparison_of_the_docs() -> None:
    """docs/streams-protocol.md's table, row by row."""
    runs = migration_what_if(read_scenario(EXAMPLE)).runs
    table = {
        "active_load_skew": (0.5, 1.0, 0.5),
        "thread_total_skew": (1, 0, 2),
        "active_moves": (4, 2, 6),
        "records_to_restore_active": (0, 0, 254_000),
        "records_to_restore": (340_000, 253_000, 352_000),
        "standby_replicas": (6, 4, 4),
        "extra_standby_replicas": (2, 0, 0),
        "rack_spread_shortfall": (0, 2, 1),
    }
    for name, expected in table.items():
        assert tuple(r.metrics.to_dict()[name] for r in runs if r.metrics is not None) == expected, name
