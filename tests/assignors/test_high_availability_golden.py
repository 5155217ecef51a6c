"""Parity with Kafka: every golden case of HighAvailabilityTaskAssignor, through ``taskassign assign``'s path.

Cases with a rack strategy and complete rack information run with Kafka's own min-cost-flow solver
(``taskassign.rack.solver = kafka``): the default solver reaches the same optimal cost but may pick an
equally cheap other layout (checked in tests/rack/test_solvers_inside_assignors.py).
"""

from __future__ import annotations

import pytest

from tests.golden_parity import GoldenCase, golden_cases, internal_rack_info_complete, kafka_solver_overrides, run_case

CASES = golden_cases("high_availability")


def test_every_case_is_present() -> None:
    assert len(CASES) == 243


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kafka_parity(case: GoldenCase) -> None:
    scenario = case.scenario()
    rack_aware = scenario.state.configs.rack_aware_assignment_strategy != "none"
    overrides = kafka_solver_overrides() if rack_aware and internal_rack_info_complete(scenario) else {}
    assert run_case(case, "high_availability", overrides) == []
