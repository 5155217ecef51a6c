"""The fleet under the streams protocol (``--assignor streams_sticky`` / ``streams_balanced``), without Spark:
every application of a generated fleet is assigned by the broker's assignor, its rows are the members' answer
(one consumer row per member), and it is what ``taskassign assign -a streams_*`` gives for the same scenario."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from taskassign.fleet import reasons
from taskassign.fleet.application import assign_application, check_application
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.build import build_scenario
from taskassign.fleet.generate import FleetSpec, generate_apps
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.leader.assign import assign_scenario
from tests.fleet.inputs import PID_A, app_input


@pytest.mark.parametrize("assignor", ["streams_sticky", "streams_balanced"])
def test_a_whole_generated_fleet_runs_under_the_streams_protocol(assignor: str) -> None:
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for app in generate_apps(FleetSpec(apps=12, seed=3)):
        for table, table_rows in app.rows.items():
            rows[table].extend(table_rows)
    result = process_bucket({n: bucket_table(spec, rows.get(n, [])) for n, spec in INPUT_TABLES.items()},
                            assignor_override=assignor)
    assert len(result.results) == 12
    for app in result.results:
        assert app["status"] == reasons.STATUS_ASSIGNED, (app["app_id"], app["reason"])
        assert app["assignor"] == assignor and app["error"] == "NONE"
        assert app["probing_rebalance_needed"] is False
        assert app["metrics"] is not None and app["metrics"]["unassigned_tasks"] == 0
        assert all(c["followup_rebalance_deadline_ms"] is None for c in app["clients"])
        assert all(not c["withheld_tasks"] for c in app["consumers"])  # the broker hands over, nothing withheld


@pytest.mark.parametrize("assignor", ["streams_sticky", "streams_balanced"])
def test_an_application_is_what_assign_gives(assignor: str) -> None:
    record = app_input(configs={"num.standby.replicas": "1"})
    result = assign_application(record, assignor_override=assignor)  # type: ignore[arg-type]
    expected = assign_scenario(build_scenario(record).scenario, assignor)  # type: ignore[arg-type]
    assert result["status"] == reasons.STATUS_ASSIGNED
    consumers = {c["consumer_id"]: c for c in result["consumers"]}
    for pid, shares in (expected.group.consumers or {}).items():
        for consumer, share in shares.items():
            row = consumers[consumer]
            assert row["process_id"] == str(pid)
            assert row["active_tasks"] == [str(t) for t in sorted(share.active)]
            assert row["standby_tasks"] == [str(t) for t in sorted(share.standby)]
    assert {c["process_id"] for c in result["clients"]} >= {PID_A}


def test_the_streams_assignors_pass_the_application_check() -> None:
    assert check_application({}, None, assignor_override="streams_balanced").code is None
    assert check_application({}, "streams-sticky").code is None
    assert check_application({}, "streams_nonsense").code == reasons.UNKNOWN_ASSIGNOR
