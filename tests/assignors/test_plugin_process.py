"""Issue 32 point 4 below the CLI: a plug-in runs in its own process (assignors.plugin_process), so its exit,
hang, allocation or stray output is a PluginAssignorError naming it, in the api and in the fleet's bucket (what
each Spark worker runs), which flags the application and runs on; the process restarts for the next use."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskassign.api.application import read_application
from taskassign.assignors.plugin_process import PluginLimits, set_plugin_limits
from taskassign.assignors.registry import resolve
from taskassign.errors import PluginAssignorError
from taskassign.fleet import reasons as R
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.leader.assign import assign_scenario
from tests.assignors.hostile_plugins import KINDS, spec
from tests.fleet.snapshots import APP, base_rows
from tests.helpers import EXAMPLES_DIR

SCENARIO = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


@pytest.fixture(autouse=True)
def _tight_limits() -> Iterator[None]:
    set_plugin_limits(PluginLimits(timeout_s=5, memory_mib=64))
    yield


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_api_raises_one_plugin_error_and_the_next_run_starts_afresh(kind: str) -> None:
    scenario = read_application(SCENARIO)
    for _ in range(2):  # the failure stopped its process; the second run starts another and fails the same way
        with pytest.raises(PluginAssignorError, match=KINDS[kind]) as caught:
            assign_scenario(scenario, spec(kind))
        assert caught.value.assignor == spec(kind) and caught.value.method == "assign()"
    assert assign_scenario(scenario, "high_availability").error.name == "NONE"  # built-ins: in-process, untouched


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_fleet_bucket_flags_the_application_and_runs_the_rest(kind: str) -> None:
    rows = base_rows()
    tables = {name: bucket_table(INPUT_TABLES[name], rows.get(name, [])) for name in INPUT_TABLES}
    result = process_bucket(tables, assignor_override=spec(kind))  # type: ignore[arg-type]
    (row,) = [r for r in result.results if r["app_id"] == APP]
    assert row["reason_code"] == R.ASSIGNOR_FAILED and re.search(KINDS[kind], row["reason"]), row


def test_a_value_that_cannot_travel_is_the_plugins_error(tmp_path: Path) -> None:
    plugin = tmp_path / "lambda_result.py"
    plugin.write_text("class A:\n    def assign(self, state):\n        return lambda: None\n")
    with pytest.raises(PluginAssignorError, match="cannot be sent to taskassign"):
        assign_scenario(read_application(SCENARIO), resolve(f"{plugin}:A"))
