"""P27: when rack awareness can be enabled, and the reason when it cannot."""

from __future__ import annotations

from taskassign.rack.cost import PartitionScope
from taskassign.rack.enablement import internal_rack_awareness_problem, public_rack_awareness_problem
from tests.rack.instances import racked_client, racked_state, racked_task

MT = {"rack_aware_assignment_strategy": "min_traffic"}
COSTS = {"rack_aware_traffic_cost": 10, "rack_aware_non_overlap_cost": 1}


def _state(source: list[str] | None = ("a",), changelog: list[str] | None = ("a",), rack: str | None = "a",
           **configs: object):  # type: ignore[no-untyped-def]
    return racked_state([racked_task("0_0", [source], [changelog])], [racked_client(1, rack)], **configs)


def test_internal_enablement_needs_a_strategy_racks_everywhere_and_changelogs_only_with_standbys() -> None:
    assert internal_rack_awareness_problem(_state(**MT)) is None
    assert internal_rack_awareness_problem(_state()) == "rack.aware.assignment.strategy is none"
    assert internal_rack_awareness_problem(_state(rack=None, **MT)) == (
        "client 00000000-0000-0000-0000-000000000001 has no rack")
    assert internal_rack_awareness_problem(_state(source=None, **MT)) == (
        "task 0_0: source partition topic0-0 has no rack information")
    assert internal_rack_awareness_problem(_state(source=[], **MT)) == (
        "task 0_0: source partition topic0-0 has no replica with a rack")
    assert internal_rack_awareness_problem(_state(changelog=None, **MT)) is None
    assert internal_rack_awareness_problem(_state(changelog=None, num_standby_replicas=1, **MT)) == (
        "task 0_0: changelog partition app-store0-changelog-0 has no rack information")


def test_public_enablement_checks_in_kafkas_order() -> None:
    active = PartitionScope.ALL
    assert public_rack_awareness_problem(_state(rack=None), active) == "rack.aware.assignment.strategy is none"
    assert public_rack_awareness_problem(_state(rack=None, **MT), active) == (
        "rack.aware.assignment.traffic_cost is not configured")
    assert public_rack_awareness_problem(_state(rack=None, rack_aware_traffic_cost=1, **MT), active) == (
        "rack.aware.assignment.non_overlap_cost is not configured")
    assert public_rack_awareness_problem(_state(rack=None, **MT), active, costs_given=True) == (
        "client 00000000-0000-0000-0000-000000000001 has no rack")
    assert public_rack_awareness_problem(_state(changelog=None, **MT, **COSTS), active) == (
        "task 0_0: partition app-store0-changelog-0 has no rack information")
    assert public_rack_awareness_problem(_state(source=None, **MT, **COSTS), PartitionScope.CHANGELOG) is None
    assert public_rack_awareness_problem(_state(**MT, **COSTS), active) is None
