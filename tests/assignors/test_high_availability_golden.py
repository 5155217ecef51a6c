"""Parity with Kafka: every golden case of HighAvailabilityTaskAssignor, through ``taskassign assign``'s path.

Cases with a rack strategy and complete rack information run with Kafka's own min-cost-flow solver
(``taskassign.rack.solver = kafka``): the default solver reaches the same optimal cost but may pick an
equally cheap other layout (checked in tests/rack/test_solvers_inside_assignors.py).

Cases with client tags (``rack.aware.assignment.tags``) run under ``taskassign.kafka.compat``: by default
a standby that must move goes only to a strictly more caught-up client that keeps the tag spread
(docs/kafka-differences.md, H10), where Kafka's piles them on the lowest ProcessId; in the default mode
those cases are held to the standby invariants instead.
"""

from __future__ import annotations

import pytest

from taskassign.configs import KAFKA_COMPAT
from tests.golden_parity import GoldenCase, golden_cases, internal_rack_info_complete, kafka_solver_overrides, run_case

CASES = golden_cases("high_availability")
TAG_CASES = [c for c in CASES if c.scenario().state.configs.rack_aware_assignment_tags]


def test_every_case_is_present() -> None:
    assert len(CASES) == 243
    assert len(TAG_CASES) == 72


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kafka_parity(case: GoldenCase) -> None:
    scenario = case.scenario()
    rack_aware = scenario.state.configs.rack_aware_assignment_strategy != "none"
    overrides = kafka_solver_overrides() if rack_aware and internal_rack_info_complete(scenario) else {}
    if scenario.state.configs.rack_aware_assignment_tags:
        overrides[KAFKA_COMPAT] = True
    assert run_case(case, "high_availability", overrides) == []


@pytest.mark.parametrize("case", TAG_CASES, ids=lambda c: c.name)
def test_default_mode_keeps_actives_and_invariants(case: GoldenCase) -> None:
    """The default differs from Kafka only in where standbys end up: actives and the invariants hold."""
    scenario = case.scenario()
    rack_aware = scenario.state.configs.rack_aware_assignment_strategy != "none"
    overrides = kafka_solver_overrides() if rack_aware and internal_rack_info_complete(scenario) else {}
    problems = run_case(case, "high_availability", overrides)
    assert [p for p in problems if not p.startswith("standby of ")] == []
