"""The engine side of ``taskassign rebalance``: the leader's run over a GROUP.json, checked against the
outcome Kafka's leader recorded when the file carries one (a captured group), and the
``taskassign/group-assignment/v1`` document: every member's assignment bytes (hex and base64) and their
decoded form, what each member does next, the versions in play, the client-level assignment file of
the leader's rebalance, and the comparison with Kafka's recorded outcome."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from taskassign.analysis.recorded_outcome import (
    SETS_NOTE,
    OutcomeComparison,
    compare_outcome,
    compare_outcome_by_client,
)
from taskassign.assignors.registry import ResolvedAssignor, resolve
from taskassign.formats.group import GroupSpec
from taskassign.formats.wire_documents import message_to_json
from taskassign.leader.assign import result_to_document
from taskassign.leader.group import GroupRebalanceResult, rebalance_group

__all__ = ("GROUP_ASSIGNMENT_FORMAT", "GroupRebalance", "compared_as_sets", "group_result_to_document",
           "rebalance_group_file")


@dataclass(frozen=True, slots=True)
class GroupRebalance:
    """The leader's result on a group file and, for a file with Kafka's recorded outcome, the comparison."""

    result: GroupRebalanceResult
    comparison: OutcomeComparison | None


def rebalance_group_file(spec: GroupSpec, assignor: ResolvedAssignor | str) -> GroupRebalance:
    """Run the leader over ``spec``; compare with Kafka's recorded bytes when the file has them."""
    assignor = resolve(assignor)
    result = rebalance_group(spec, assignor)
    comparison = None
    if spec.has_recorded_outcome:
        recorded = {m.member_id: m.recorded_assignment for m in spec.members if m.recorded_assignment is not None}
        ours = {mid: o.assignment_bytes for mid, o in result.members.items()}
        if compared_as_sets(assignor.spec):
            clients = {m.member_id: str(m.info.process_id) for m in spec.members}
            comparison = compare_outcome_by_client(recorded, ours, clients)
        else:
            comparison = compare_outcome(recorded, ours)
    return GroupRebalance(result, comparison)


def compared_as_sets(assignor: str) -> bool:
    """The public StickyTaskAssignor (and its preserving form): Kafka's own output varies with identity hashes."""
    return assignor in ("sticky", "sticky_preserve") or assignor.endswith("assignors.StickyTaskAssignor")

GROUP_ASSIGNMENT_FORMAT = "taskassign/group-assignment/v1"


def group_result_to_document(
    result: GroupRebalanceResult, comparison: OutcomeComparison | None = None, *, kafka_version: str | None = None
) -> dict[str, Any]:
    v = result.versions
    members: dict[str, Any] = {}
    for member_id, outcome in result.members.items():
        data = outcome.assignment_bytes
        reaction = outcome.reaction
        members[member_id] = {
            "process_id": str(outcome.process_id),
            "assignment_hex": data.hex(),
            "assignment_base64": base64.b64encode(data).decode("ascii"),
            "assignment": message_to_json(outcome.assignment),
            "withheld": [str(t) for t in outcome.consumer.withheld],
            "next_join": {
                "subscription_version": reaction.next_used_version,
                "rebalance_at_ms": reaction.next_rebalance_ms,
                "error": reaction.error,
                "reason": reaction.reason,
            },
        }
    return {
        "format": GROUP_ASSIGNMENT_FORMAT,
        "group": result.group,
        "assignor": result.assignor,
        "kafka_version": kafka_version if kafka_version is not None else _kafka_version(result),
        "error_code": int(result.error_code),
        "error": result.error_code.name,
        "failure": result.failure,
        "versions": {
            "assignment_version": v.min_received,
            "commonly_supported_version": v.min_supported,
            "future_version": v.future_version,
            "version_probing": v.version_probing,
        },
        "stable": result.stable,
        "warnings": list(result.warnings),
        "members": members,
        "assignment": None if result.rebalance is None else result_to_document(result.rebalance),
        "recorded_outcome": None if comparison is None else _comparison_document(comparison),
    }


def _comparison_document(comparison: OutcomeComparison) -> dict[str, Any]:
    return {
        "all_match": comparison.all_match,
        "members_matching": comparison.matching,
        "members": len(comparison.members),
        "differences": {m.member_id: list(m.differences) for m in comparison.members if not m.matches},
        "followup_time_differs": [m.member_id for m in comparison.members if m.followup_time_differs],
        "compared": SETS_NOTE if comparison.by_client else "every member's assignment bytes",
    }


def _kafka_version(result: GroupRebalanceResult) -> str | None:
    return None if result.state is None else result.state.configs.kafka_version
