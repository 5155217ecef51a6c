"""The engine side of ``taskassign streams-migration``: what one application would get if it moved from the
classic rebalance protocol to the streams protocol (KIP-1071), side by side.

The same scenario (or GROUP.json) runs once under the classic protocol, through the group leader with a
KIP-924 assignor (``high_availability`` by default: Kafka's default), and once under each broker-side
assignor (``streams_sticky``, the broker's default, and ``streams_balanced``). Every run is measured with the
same metrics (docs/metrics.md): balance per process and per member (thread), tasks moved from the previous
assignment, standbys placed and their rack and tag spread, records to restore. The notes say what the
numbers cannot: probing rebalances and warm-ups that the classic protocol has and the streams one does not,
inputs the broker assignors ignore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskassign.analysis.metrics import AssignmentMetrics, compute_metrics
from taskassign.assignors.registry import DEFAULT_ASSIGNOR, STREAMS_GROUP_ASSIGNORS, ResolvedAssignor, resolve
from taskassign.errors import StreamsAssignorError, UserInputError
from taskassign.formats.scenario import Scenario
from taskassign.leader.assign import assign_scenario
from taskassign.leader.run import RebalanceResult

__all__ = ("HIGHLIGHTS", "MIGRATION_FORMAT", "MigrationWhatIf", "ProtocolRun", "migration_what_if")

MIGRATION_FORMAT = "taskassign/streams-migration/v1"

#: The metrics the comparison shows first, by theme (every metric is in the document).
HIGHLIGHTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("balance per process", ("active_load_skew", "total_load_skew", "changelog_load_skew", "subtopology_skew_max",
                             "state_load_imbalance")),
    ("balance per member (thread)", ("thread_active_max", "thread_active_skew", "thread_total_max",
                                     "thread_total_skew", "thread_state_imbalance")),
    ("movement from the previous assignment", ("active_moves", "standby_moves", "records_to_restore_active",
                                               "records_to_restore_standby", "records_to_restore")),
    ("standbys", ("standby_replicas", "extra_standby_replicas", "standby_shortfall_tasks",
                  "missing_standby_replicas")),
    ("racks and tags", ("cross_rack_partitions", "rack_spread_shortfall", "rack_colocated_tasks",
                        "tag_spread_shortfall", "tag_colocated_tasks")),
)


@dataclass(frozen=True, slots=True)
class ProtocolRun:
    """One assignor's answer for the application: the result and its metrics, or why there is none."""

    assignor: str
    protocol: str
    result: RebalanceResult | None
    metrics: AssignmentMetrics | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        result = self.result
        return {
            "assignor": self.assignor,
            "protocol": self.protocol,
            "error": self.error if self.error is not None else (result.error.name if result is not None else None),
            "probing_rebalance_needed": result.probing_rebalance_needed if result is not None else None,
            "metrics": self.metrics.to_dict() if self.metrics is not None else None,
        }


@dataclass(frozen=True, slots=True)
class MigrationWhatIf:
    """The application under both protocols: one run per assignor, and notes for what metrics cannot say."""

    scenario: str
    runs: tuple[ProtocolRun, ...]
    notes: tuple[str, ...]
    #: The Kafka release line of the classic run (the scenario's kafka.version).
    kafka_version: str | None = None

    def to_document(self) -> dict[str, Any]:
        return {"format": MIGRATION_FORMAT, "scenario": self.scenario, "kafka_version": self.kafka_version,
                "runs": [r.to_dict() for r in self.runs], "notes": list(self.notes)}


def migration_what_if(scenario: Scenario, classic: ResolvedAssignor | str = DEFAULT_ASSIGNOR) -> MigrationWhatIf:
    """``scenario`` under ``classic`` (a KIP-924 assignor) and under both broker-side assignors."""
    resolved = resolve(classic)
    if resolved.is_streams:
        raise UserInputError(f"--classic names the classic side's assignor; {resolved.spec!r} is a streams-protocol "
                             "one")
    runs = [_run(scenario, resolved, "classic")]
    runs += [_run(scenario, resolve(name), "streams") for name in STREAMS_GROUP_ASSIGNORS]
    return MigrationWhatIf(scenario.name, tuple(runs), tuple(_notes(scenario, runs[0])),
                           scenario.state.configs.kafka_version)


def _run(scenario: Scenario, assignor: ResolvedAssignor, protocol: str) -> ProtocolRun:
    try:
        result = assign_scenario(scenario, assignor)
    except StreamsAssignorError as exc:
        return ProtocolRun(assignor.spec, protocol, None, None, str(exc))
    try:
        metrics = compute_metrics(scenario.state, result.group)
    except UserInputError:
        metrics = None  # an invalid assignment (a custom classic assignor) names clients or tasks it cannot measure
    return ProtocolRun(assignor.spec, protocol, result, metrics)


def _notes(scenario: Scenario, classic: ProtocolRun) -> list[str]:
    configs = scenario.state.configs
    notes = [
        "Under the streams protocol the broker assigns each member (stream thread) directly: there is no group "
        "leader, no thread distribution, no probing rebalance, and these broker assignors place no warm-up "
        "replicas (the coordinator adds warm-ups after the assignor, KAFKA-20665: not modelled here).",
    ]
    if classic.result is not None and classic.result.probing_rebalance_needed:
        notes.append(f"{classic.assignor} asked for a probing rebalance: its assignment is a step on the way "
                     "(actives wait on caught-up clients while warm-ups restore, then move). The streams assignors "
                     "place their final assignment at once, and tasks restore where they land.")
    if classic.metrics is not None and classic.metrics.extra_standby_replicas:
        notes.append(f"{classic.assignor} placed {classic.metrics.extra_standby_replicas} warm-up replica(s), counted "
                     "above as extra standbys.")
    clients = scenario.state.clients.values()
    has_racks = any(c.rack_id is not None for c in clients)
    if configs.rack_aware_assignment_tags or has_racks:
        tags = ",".join(configs.rack_aware_assignment_tags) or "none"
        notes.append(f"The broker assignors of these revisions read neither racks nor client tags "
                     f"(rack.aware.assignment.tags: {tags}; KAFKA-20999 adds tag-aware standbys): their rack and tag "
                     "spread is whatever their load balancing gives.")
    if configs.rack_aware_assignment_strategy != "none":
        notes.append(f"{classic.assignor} runs the rack-aware optimisation "
                     f"({configs.rack_aware_assignment_strategy}); the streams protocol has none.")
    notes.append("streams_balanced ignores the previous assignment across processes (it is sticky only within a "
                 "process), so its moves are those of a fresh placement; streams_sticky keeps previous owners and "
                 "reported local state within per-member quotas.")
    subtopologies = {t.subtopology for t in scenario.state.tasks}
    if len(subtopologies) > 10:
        notes.append("The broker compares subtopology ids as strings ('10' before '9'), which changes its placement "
                     "order and tie-breaks for this application's 11+ subtopologies.")
    return notes
