"""Assign a scenario: one leader rebalance of a scenario file's application, and the assignment
document of its result.

The CLI, the simulator, the pipeline and the tests all go through ``assign_scenario`` so that "what
taskassign assign does" is one code path. A streams-protocol assignor (``streams_sticky``,
``streams_balanced``) takes the streams path instead (``streams.py``: the broker's target assignment).
"""

from __future__ import annotations

from typing import Any

from taskassign.assignors.registry import DEFAULT_ASSIGNOR, ResolvedAssignor, create_assignor, resolve
from taskassign.formats.assignment import EXTRA_KEYS, assignment_to_dict
from taskassign.formats.scenario import Scenario
from taskassign.leader.run import RebalanceResult, rebalance
from taskassign.leader.streams import streams_rebalance

__all__ = ("assign_scenario", "result_to_document")


def assign_scenario(
    scenario: Scenario, assignor: ResolvedAssignor | str = DEFAULT_ASSIGNOR, *, raise_on_error: bool = False
) -> RebalanceResult:
    """Run one leader rebalance of ``scenario`` with ``assignor`` (resolved by ``assignors.registry.resolve``;
    a spec, a built-in short name, ``module:Class`` or ``file.py:Class``, is resolved here)."""
    resolved = resolve(assignor)
    if resolved.is_streams:
        return streams_rebalance(scenario, resolved)

    def make(spec: str) -> Any:  # the assignor's own fallback_when_lags_unknown: a built-in name
        return create_assignor(spec, scenario.raw_configs)

    return rebalance(
        scenario.state,
        resolved.create(scenario.raw_configs),
        assignor_name=resolved.name,
        leader=scenario.leader_process_id,
        raise_on_error=raise_on_error,
        fallback_factory=make,
    )


def result_to_document(result: RebalanceResult) -> dict[str, Any]:
    """The ``taskassign/assignment/v1`` document of a rebalance, with its completeness report."""
    report = result.completeness
    extras: dict[str, Any] = {
        "completeness": {
            "complete": report.is_complete,
            "unassigned_tasks": [str(t) for t in report.unassigned_tasks],
            "standby_shortfalls": [
                {"task": str(s.task), "wanted": s.wanted, "placed": s.placed} for s in report.standby_shortfalls
            ],
        }
    }
    details = dict(result.task_assignment.details)
    if result.fallback_reason is not None:
        details["fallback_reason"] = result.fallback_reason
    for key in list(details):
        if key in EXTRA_KEYS and key != "details":
            extras[key] = details.pop(key)
    if details:
        extras["details"] = details
    if result.kafka_version is not None:
        extras["kafka_version"] = result.kafka_version
    return assignment_to_dict(
        result.group,
        assignor=result.assignor,
        error=result.error,
        probing_rebalance_needed=result.probing_rebalance_needed,
        extras=extras,
    )
