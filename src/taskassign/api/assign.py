"""The engine side of ``taskassign assign``: one scenario through an assignor, with the metrics and
explanations the user asked for, as one value the CLI renders and writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskassign.analysis.metrics import AssignmentMetrics, compute_metrics
from taskassign.analysis.moves import EXPLANATIONS, explanations
from taskassign.assignors.registry import DEFAULT_ASSIGNOR, ResolvedAssignor
from taskassign.formats.client_names import names_for_states, with_client_names
from taskassign.formats.scenario import Scenario
from taskassign.leader.assign import assign_scenario, result_to_document
from taskassign.leader.run import RebalanceResult

__all__ = ("AssignOutcome", "assign")


@dataclass(frozen=True, slots=True)
class AssignOutcome:
    """A rebalance of one scenario: the leader's result, its assignment document (with ``metrics`` and
    ``explanations`` when asked for) and the same metrics and sentences for display."""

    result: RebalanceResult
    document: dict[str, Any]
    metrics: AssignmentMetrics | None
    explanations: list[str] | None


def assign(
    scenario: Scenario, assignor: ResolvedAssignor | str = DEFAULT_ASSIGNOR, *, with_metrics: bool = False,
    explain: bool = False,
) -> AssignOutcome:
    """Run one leader rebalance of ``scenario`` (``assign_scenario``) and build its assignment document."""
    result = assign_scenario(scenario, assignor)
    document = with_client_names(result_to_document(result), names_for_states(scenario.state))
    metrics = compute_metrics(scenario.state, result.group) if with_metrics else None
    if metrics is not None:
        document["metrics"] = metrics.to_dict()
    sentences = explanations(scenario.state, result.task_assignment, result.group) if explain else None
    if sentences is not None:
        document[EXPLANATIONS] = sentences
    return AssignOutcome(result, document, metrics, sentences)

