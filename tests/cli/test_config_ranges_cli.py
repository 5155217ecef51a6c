"""Issue 32 point 5: a config value past Kafka's range is refused wherever it comes from, so that what taskassign
writes it reads back; a config a command cannot honour is refused, not announced as applied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.helpers import EXAMPLES_DIR

SCENARIO = EXAMPLES_DIR / "scenarios" / "new-client-joins.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"
STREAMS_GROUP = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"
LONG_MAX = 2**63 - 1


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


def test_a_probing_interval_past_long_max_with_the_inputs_clock_is_refused(tmp_path: Path) -> None:
    doc = json.loads(SCENARIO.read_text())
    doc["now_ms"] = 1_700_000_000_000
    scenario = tmp_path / "late.scenario.json"
    scenario.write_text(json.dumps(doc))
    out = tmp_path / "a.json"
    code, output = _run("assign", str(scenario), "--set", f"probing.rebalance.interval.ms={LONG_MAX}", "-o", str(out))
    assert code == 2 and "--set: the input's now_ms must be between 0 and" in output and not out.exists(), output
    # at the bound it is written, and validate reads back what assign wrote
    code, _ = _run("assign", str(scenario), "--set", f"probing.rebalance.interval.ms={LONG_MAX - 1_700_000_000_000}",
                   "-o", str(out))
    assert code == 0
    code, output = _run("validate", str(scenario), str(out))
    assert code == 0, output


@pytest.mark.parametrize(("config", "message"), [
    ("probing.rebalance.interval.ms=59999", "must be >= 60000"),
    (f"probing.rebalance.interval.ms={LONG_MAX + 1}", "does not fit a Java long"),
    ("acceptable.recovery.lag=-1", "must be >= 0"),
    ("num.standby.replicas=-1", "must be >= 0"),
    ("num.standby.replicas=2147483648", "does not fit a Java int"),
    ("max.warmup.replicas=0", "must be >= 1"),
    ("taskassign.state_aware.movement_cost=inf", "expected a finite number"),  # a traceback before issue 32
    ("taskassign.state_aware.traffic_cost=nan", "expected a finite number"),
])
@pytest.mark.parametrize("command", ["assign", "rebalance", "streams-migration"])
def test_every_what_if_holds_kafkas_ranges(command: str, config: str, message: str, tmp_path: Path) -> None:
    source = GROUP if command == "rebalance" else SCENARIO
    code, output = _run(command, str(source), "--set", config, "-o", str(tmp_path / "out.json"))
    assert code == 2 and message in output, output


def test_rebalance_honours_set_task_assignor_class(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, output = _run("rebalance", str(GROUP), "--set", "task.assignor.class=sticky", "-o", str(out))
    assert code == 0 and "assignor sticky" in output, output
    assert json.loads(out.read_text())["assignor"] == "sticky"


def test_streams_migration_honours_set_task_assignor_class() -> None:
    result = CliRunner().invoke(app, ["streams-migration", str(SCENARIO), "--set", "task.assignor.class=sticky",
                                      "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["runs"][0]["assignor"] == "sticky"


def test_what_if_flags_on_a_streams_capture_are_refused() -> None:
    code, output = _run("rebalance", str(STREAMS_GROUP), "--set", "num.standby.replicas=2")
    assert code == 2 and "cannot apply" in output, output


def test_the_services_configs_hold_kafkas_ranges_at_start(tmp_path: Path) -> None:
    from taskassign.bridge.service import read_service_config
    from taskassign.errors import ScenarioError

    config = tmp_path / "serve.json"
    config.write_text(json.dumps({"applications": {"orders": {"configs": {"probing.rebalance.interval.ms": 1000}}}}))
    with pytest.raises(ScenarioError, match=r"applications\.orders\.configs: .*must be >= 60000"):
        read_service_config(config)
