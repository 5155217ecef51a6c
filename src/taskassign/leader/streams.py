"""A scenario under the streams protocol (KIP-1071), in the leader's terms: the broker's target assignment for
the scenario's application as a RebalanceResult, so everything that reads a leader's result (assignment files,
metrics, the simulator, the fleet pipeline) reads this one too.

There is no group leader under the streams protocol: the broker computes every member's target assignment
with its own assignor. So nothing of the leader's run applies: no KIP-924 assignor, no thread distribution
(the broker assigns threads directly; ``GroupAssignment.consumers`` holds each member's share), no warm-ups,
no probing or follow-up rebalance, no withheld tasks. Kafka's validation still runs on the result, as a check
that the broker's answer is a valid assignment (it always is).
"""

from __future__ import annotations

from taskassign.assignors.registry import ResolvedAssignor, resolve
from taskassign.errors import AssignorNotFoundError
from taskassign.formats.scenario import Scenario
from taskassign.leader.run import RebalanceResult
from taskassign.model import TaskAssignment
from taskassign.streams_protocol.assignors import run_assignor
from taskassign.streams_protocol.classic import classic_group_assignment, scenario_to_streams_group
from taskassign.streams_protocol.model import StreamsGroup, StreamsGroupAssignment
from taskassign.validation import validate_and_check_completeness

__all__ = ("streams_rebalance", "streams_result")


def streams_rebalance(scenario: Scenario, assignor: ResolvedAssignor | str) -> RebalanceResult:
    """The target assignment the broker's ``assignor`` (``streams_sticky`` / ``streams_balanced``) computes for
    the scenario's application; raises StreamsAssignorError where Kafka's assignor throws."""
    resolved = resolve(assignor)
    if resolved.kafka_name is None:
        raise AssignorNotFoundError(f"{resolved.spec!r} is not a streams-protocol assignor")
    group = scenario_to_streams_group(scenario, resolved.kafka_name)
    return streams_result(scenario, group, run_assignor(group), resolved)


def streams_result(
    scenario: Scenario, group: StreamsGroup, assignment: StreamsGroupAssignment, assignor: ResolvedAssignor | str
) -> RebalanceResult:
    """A streams assignor's answer for ``group`` (converted from ``scenario``) as a RebalanceResult."""
    group_assignment = classic_group_assignment(group, assignment, scenario.state.task_ids)
    task_assignment = TaskAssignment(tuple(group_assignment.clients.values()))
    error, completeness = validate_and_check_completeness(scenario.state, task_assignment)
    return RebalanceResult(resolve(assignor).name, error, group_assignment, task_assignment, False,
                           completeness)
