"""The what-if flags on the commands: the altered input is run, the output says it was altered, bad flags exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

runner = CliRunner()
EXAMPLE = str(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
GROUP = str(EXAMPLES_DIR / "groups" / "orders-app.group.json")
EVENTS = str(EXAMPLES_DIR / "events" / "scale-out.events.json")


def test_assign_runs_the_altered_input_and_says_so() -> None:
    result = runner.invoke(app, ["assign", EXAMPLE, "--rack-down", "rack-a", "--add-clients", "2:rack=rack-c",
                                 "--set", "num.standby.replicas=2", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    clients = {pid for pid, c in doc["clients"].items()}
    assert "1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11" not in clients and len(clients) == 4
    assert doc["what_if"][0] == "num.standby.replicas=2 (was 1)"
    # every stateful task gets its two standbys on the altered application
    assert doc["completeness"]["complete"] is True
    assert sum(len(c["standby"]) for c in doc["clients"].values()) >= 2 * 4  # warm-ups may come on top
    assert "what-if: input altered" in result.stderr


def test_assign_text_output_starts_with_the_what_if() -> None:
    result = runner.invoke(app, ["assign", GROUP, "--remove-client", "1b6f"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("what-if: input altered: removed client orders-app-1b6f (1b6f8a52")


@pytest.mark.parametrize("command", [
    ["assign", EXAMPLE], ["simulate", EXAMPLE, "--events", EVENTS], ["rebalance", GROUP],
    ["validate", EXAMPLE, EXAMPLE], ["optimize", EXAMPLE, "--active"], ["streams-migration", EXAMPLE],
    ["compare", EXAMPLE, "-a", "sticky"],
])
def test_a_bad_flag_exits_2_naming_it(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--set", "num.standby.replicas=many"])
    assert result.exit_code == 2, result.output
    assert "--set 'num.standby.replicas=many'" in result.stderr and "Traceback" not in result.output


def test_simulate_starts_from_the_altered_input() -> None:
    plain = runner.invoke(app, ["simulate", EXAMPLE, "--events", EVENTS, "--json"])
    altered = runner.invoke(app, ["simulate", EXAMPLE, "--events", EVENTS, "--json", "--add-clients", "1"])
    assert plain.exit_code == 0 and altered.exit_code == 0, altered.output
    first = [json.loads(r.stdout)["rebalances"][0]["metrics"]["clients"] for r in (plain, altered)]
    assert first[1] == first[0] + 1


def test_rebalance_drops_members_of_a_down_rack() -> None:
    result = runner.invoke(app, ["rebalance", GROUP, "--rack-down", "rack-a", "--json"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)
    assert doc["members"] and all("1b6f" not in m for m in doc["members"])
    assert "rack rack-a down" in result.stderr


def test_the_input_task_assignor_class_needs_allow_plugins_for_a_plugin(tmp_path: Path) -> None:
    doc = json.loads(Path(EXAMPLE).read_text())
    doc["configs"]["task.assignor.class"] = "examples.custom_assignor.StateWeightedStickyAssignor"
    path = tmp_path / "plugin.scenario.json"
    path.write_text(json.dumps(doc))
    refused = runner.invoke(app, ["assign", str(path)])
    assert refused.exit_code == 2 and "--allow-plugins" in refused.stderr
    doc["configs"]["task.assignor.class"] = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"
    path.write_text(json.dumps(doc))
    kafka_named = runner.invoke(app, ["assign", str(path), "--json"])
    assert kafka_named.exit_code == 0 and json.loads(kafka_named.stdout)["assignor"] == "sticky"
