"""``taskassign pipeline run --assignor streams_sticky`` on the shipped example fleet: every application the
default run assigns is assigned under the streams protocol too, each thread's row is its member's target, and
each equals ``taskassign assign -a streams_sticky`` on the application's exported scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.formats.scenario import parse_scenario, scenario_to_dict
from taskassign.leader.assign import assign_scenario
from taskassign.pipeline.export import export_scenarios
from tests.pipeline.conftest import EXAMPLE_FLEET

pytestmark = pytest.mark.spark


def rows(output: Path, name: str) -> list[dict[str, Any]]:
    return list(pq.read_table(output / name).to_pylist())


def test_the_example_fleet_under_streams_sticky(spark: Any, example_run: tuple[Path, str], tmp_path: Path) -> None:
    output = tmp_path / "streams-out"
    result = CliRunner().invoke(app, ["pipeline", "run", "--input", str(EXAMPLE_FLEET), "--output", str(output),
                                      "--assignor", "streams_sticky"])
    assert result.exit_code == 0, result.output
    metrics = {r["app_id"]: r for r in rows(output, "app_metrics")}
    classic = {r["app_id"]: r for r in rows(example_run[0], "app_metrics")}
    assert {a: r["status"] for a, r in metrics.items()} == {a: r["status"] for a, r in classic.items()}
    assigned = sorted(a for a, r in metrics.items() if r["status"] == "ASSIGNED")
    assert len(assigned) >= 15
    assert {metrics[a]["assignor"] for a in assigned} == {"streams_sticky"}
    assert not any(metrics[a]["probing_rebalance_needed"] for a in assigned)
    consumers = rows(output, "consumer_assignments")
    exported = export_scenarios(spark, EXAMPLE_FLEET)
    for app_id in assigned:
        scenario = exported[app_id].scenario
        assert scenario is not None
        expected = assign_scenario(parse_scenario(json.loads(json.dumps(scenario_to_dict(scenario)))),
                                   "streams_sticky")
        assert expected.group.consumers is not None
        want = {c: [str(t) for t in sorted(s.active)] for per in expected.group.consumers.values()
                for c, s in per.items()}
        got = {r["consumer_id"]: r["active_tasks"] for r in consumers if r["app_id"] == app_id}
        assert got == want, app_id
