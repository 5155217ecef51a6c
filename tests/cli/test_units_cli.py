"""Human units in the text output of rebalance and simulate (assign's are in test_assign_cli.py)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
GROUP = str(EXAMPLES_DIR / "groups" / "orders-app.group.json")
EXAMPLE = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
EVENTS = str(EXAMPLES_DIR / "events" / "scale-out.events.json")


def test_rebalance_shows_client_names_and_json_full_process_ids() -> None:
    text = runner.invoke(app, ["rebalance", GROUP])
    assert text.exit_code in (0, 1), text.output
    rows = [line.split() for line in text.stdout.splitlines() if line.startswith("orders-app-")]
    assert rows and all(row[0] in ("orders-app-1b6f", "orders-app-5c2d", "orders-app-9e4a") for row in rows)
    assert not set("│┃━╇") & set(text.stdout)
    doc = json.loads(runner.invoke(app, ["rebalance", GROUP, "--json"]).stdout)
    assert any(len(m["process_id"]) == 36 for m in doc["members"].values())


def test_simulate_says_how_long_it_took_to_settle() -> None:
    result = runner.invoke(app, ["simulate", EXAMPLE, "--events", EVENTS])
    assert result.exit_code == 0, result.output
    assert "converged at +0:21:00 (21 min to settle); simulated 21 min" in result.output


def test_rebalance_gives_the_follow_up_relative_to_the_leaders_clock() -> None:
    result = runner.invoke(app, ["rebalance", GROUP])
    assert "the leader asked for a follow-up rebalance in 10 min" in " ".join(result.stdout.split())
    assert "1700000600000" not in result.stdout
    doc = json.loads(runner.invoke(app, ["rebalance", GROUP, "--json"]).stdout)
    assert "1700000600000" in json.dumps(doc)  # JSON keeps the absolute deadline
