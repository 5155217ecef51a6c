"""The ``taskassign/group-assignment/v1`` document of a group rebalance (``taskassign rebalance -o``):
every member's assignment bytes (hex and base64) and their decoded form, what each member does next,
the versions in play, and the client-level assignment file of the leader's rebalance."""

from __future__ import annotations

import base64
from typing import Any

from taskassign.formats.wire_documents import message_to_json
from taskassign.leader.assign import result_to_document
from taskassign.leader.group import GroupRebalanceResult

__all__ = ("GROUP_ASSIGNMENT_FORMAT", "group_result_to_document")

GROUP_ASSIGNMENT_FORMAT = "taskassign/group-assignment/v1"


def group_result_to_document(result: GroupRebalanceResult) -> dict[str, Any]:
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
    }
