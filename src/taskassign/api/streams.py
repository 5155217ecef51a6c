"""The engine side of ``taskassign assign -a streams_sticky|streams_balanced``: a streams-group file, a
scenario or a GROUP.json through one of Kafka's broker-side assignors (KIP-1071).

A streams-group file runs as it is (its own assignor unless one is named). A classic input is first put
under the streams protocol (``streams_protocol.classic``: one member per stream thread), and its answer is
also given in the classic form (``leader.streams``), so that ``--metrics`` measures it as it measures any
classic assignment. The output document is the streams-group goldens' (``{"assignor", "error", "members"}``),
with ``metrics`` added when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskassign.analysis.metrics import AssignmentMetrics, compute_metrics
from taskassign.api.kafka_line import source_kafka_line, streams_kafka_line
from taskassign.assignors.registry import STREAMS_GROUP_ASSIGNORS, ResolvedAssignor, builtin_name, resolve
from taskassign.errors import StreamsAssignorError, UserInputError
from taskassign.formats.scenario import Scenario
from taskassign.leader.run import RebalanceResult
from taskassign.leader.streams import streams_result
from taskassign.streams_protocol.assignors import run_assignor
from taskassign.streams_protocol.classic import scenario_to_streams_group
from taskassign.streams_protocol.format import assignment_document
from taskassign.streams_protocol.model import StreamsGroup, StreamsGroupAssignment

__all__ = ("StreamsOutcome", "assign_streams", "streams_assignor_for")


@dataclass(frozen=True, slots=True)
class StreamsOutcome:
    """One broker-side assignor run: the group it saw, its answer or Kafka's exception, the output document;
    for a classic input also the scenario, the answer in classic form and its metrics (when asked for)."""

    assignor: str
    group: StreamsGroup
    assignment: StreamsGroupAssignment | None
    error: StreamsAssignorError | None
    document: dict[str, Any]
    scenario: Scenario | None = None
    result: RebalanceResult | None = None
    metrics: AssignmentMetrics | None = None


def streams_assignor_for(source: Scenario | StreamsGroup, assignor: ResolvedAssignor | str | None) -> ResolvedAssignor:
    """The streams assignor to run: the one named, else a streams-group file's own."""
    if assignor is None:
        if isinstance(source, StreamsGroup):
            return resolve(next(short for short, (kafka, _) in STREAMS_GROUP_ASSIGNORS.items()
                                if kafka == source.assignor))
        raise UserInputError("name a streams-protocol assignor: -a streams_sticky or -a streams_balanced")
    # A classic name is refused without resolving it (a plug-in is not imported just to be turned down).
    spec = assignor if isinstance(assignor, str) else assignor.spec
    if isinstance(assignor, ResolvedAssignor) and assignor.is_streams:
        return assignor
    if isinstance(assignor, str) and builtin_name(assignor) in STREAMS_GROUP_ASSIGNORS:
        return resolve(assignor)
    raise UserInputError(f"{source.name}: a streams group (KIP-1071) runs under Kafka's broker-side assignors: "
                         f"-a {' or -a '.join(STREAMS_GROUP_ASSIGNORS)}, not {spec!r}")


def assign_streams(source: Scenario | StreamsGroup, assignor: ResolvedAssignor | str | None = None, *,
                   with_metrics: bool = False, kafka_version: str | None = None) -> StreamsOutcome:
    """Run the broker-side assignor on a streams group, or on a scenario put under the streams protocol, as the
    broker of the Kafka line ``kafka_version`` (else the source's ``kafka.version``, else the default) does."""
    configs = source.configs if isinstance(source, StreamsGroup) else source.raw_configs
    line = source_kafka_line(configs, kafka_version)
    kafka_line = streams_kafka_line(line)
    resolved = streams_assignor_for(source, assignor)
    name, kafka_name = resolved.spec, resolved.kafka_name
    assert kafka_name is not None
    if isinstance(source, StreamsGroup):
        if with_metrics:
            raise UserInputError(f"{source.name}: --metrics measures an application's classic view (lags, racks of "
                                 "partitions, threads per client); give its scenario or GROUP.json instead of a "
                                 "streams-group file")
        group, scenario = source, None
    else:
        group, scenario = scenario_to_streams_group(source, kafka_name), source
    try:
        assignment = run_assignor(group, kafka_name, kafka_line=kafka_line)
    except StreamsAssignorError as exc:
        return StreamsOutcome(name, group, None, exc, assignment_document(kafka_name, exc, kafka_version=line),
                              scenario)
    document = assignment_document(kafka_name, assignment, kafka_version=line)
    result = metrics = None
    if scenario is not None:
        result = streams_result(scenario, group, assignment, resolved)
        if with_metrics:
            metrics = compute_metrics(scenario.state, result.group)
            document["metrics"] = metrics.to_dict()
    return StreamsOutcome(name, group, assignment, None, document, scenario, result, metrics)
