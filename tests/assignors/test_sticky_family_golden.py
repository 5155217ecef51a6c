"""Kafka parity of the sticky family on the golden cases, through ``api.assign_scenario`` (the code
path of ``taskassign assign``): every key each golden's ``golden.compare`` lists must match.

Cases that need a rack optimiser the branch does not have yet are skipped with a named reason:
LegacySticky with a rack strategy and complete rack information needs ``taskassign.rack.internal``;
the public Sticky with a strategy and both costs needs ``TaskAssignmentUtils.optimize_rack_aware_*``.
"""

from __future__ import annotations

import importlib

import pytest

from tests.golden_parity import GoldenCase, golden_cases, internal_rack_info_complete, module_available, run_case

INTERNAL_RACK_MISSING = "needs taskassign.rack.internal (rack-aware optimiser not merged yet)"
PUBLIC_RACK_MISSING = "needs TaskAssignmentUtils.optimize_rack_aware_* in taskassign.utils (not merged yet)"


def _public_rack_helpers_available() -> bool:
    utils = importlib.import_module("taskassign.utils")
    return hasattr(utils, "optimize_rack_aware_active_tasks") and hasattr(utils, "RackAwareOptimizationParams")


def _legacy_skip(case: GoldenCase) -> str | None:
    scenario = case.scenario()
    if scenario.state.configs.rack_aware_assignment_strategy == "none":
        return None
    if internal_rack_info_complete(scenario) and not module_available("taskassign.rack.internal"):
        return INTERNAL_RACK_MISSING
    return None


def _public_skip(case: GoldenCase) -> str | None:
    configs = case.scenario().state.configs
    if configs.rack_aware_assignment_strategy == "none":
        return None
    if not _public_rack_helpers_available():
        return PUBLIC_RACK_MISSING
    return None


def _check(case: GoldenCase, assignor: str, skip_reason: str | None) -> None:
    if skip_reason:
        pytest.skip(skip_reason)
    problems = run_case(case, assignor)
    assert not problems, f"{case.name} differs from Kafka:\n" + "\n".join(problems[:20])


LEGACY = golden_cases("legacy_sticky")
FALLBACK = golden_cases("fallback_prior")
KIP924 = golden_cases("sticky_kip924")


def test_golden_case_counts() -> None:
    assert (len(LEGACY), len(FALLBACK), len(KIP924)) == (61, 60, 36)


@pytest.mark.parametrize("case", LEGACY, ids=lambda c: c.name)
def test_legacy_sticky_matches_kafka(case: GoldenCase) -> None:
    _check(case, "legacy_sticky", _legacy_skip(case))


@pytest.mark.parametrize("case", FALLBACK, ids=lambda c: c.name)
def test_fallback_prior_matches_kafka(case: GoldenCase) -> None:
    _check(case, "fallback_prior", None)  # never rack-aware: every case runs now


@pytest.mark.parametrize("case", KIP924, ids=lambda c: c.name)
def test_public_sticky_matches_kafka(case: GoldenCase) -> None:
    _check(case, "sticky", _public_skip(case))
