"""Kafka's release lines as the streams protocol (KIP-1071) sees them: which lines have streams groups, and
what the broker-side ``sticky`` assignor (``StickyTaskAssignor``) is on each (docs/kafka-versions.md, "The
streams protocol's sticky per line").

* 3.9 and 4.0 have no streams groups (KIP-1071 arrived in 4.1).
* 4.1: the first ``StickyTaskAssignor`` (KAFKA-17125), with task pairs; its tie-breaks between equally
  loaded processes come from identity hash codes (``streams_protocol.sticky41``).
* 4.2 and 4.3: heaps for the least-loaded process and member, range-style task order and the below-quota
  rule for standbys (KAFKA-19478, KAFKA-19661), the standby-candidate fix (KAFKA-20899); the assignor sees
  each member's previous *target* assignment, no task offsets, and configs as a string map.
* 4.4 and trunk: KAFKA-20719 (reported task offsets rank a task's previous holders), the process map filled by
  ``HashMap.computeIfAbsent``; the assignor sees each member's *reconciled* tasks and the offsets it
  reported, and configs as a typed ``AssignmentConfigs`` (no ``num.standby.replicas`` means 0).
* ``kafka-20719-proposed``: not a release line. The mid-2026 trunk revision with KAFKA-20719 as proposed,
  before it merged (the process map filled by ``putIfAbsent``, configs as a string map): the revision
  taskassign's first streams-group goldens were computed with. Kept by that name for those goldens; never
  the default.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskassign.errors import UserInputError

__all__ = (
    "DEFAULT_STREAMS_LINE",
    "KAFKA_20719_PROPOSED",
    "NO_STREAMS_LINES",
    "STICKY_REVISIONS",
    "STREAMS_LINES",
    "StickyRevision",
    "StreamsProtocolError",
    "check_streams_line",
    "sticky_revision",
)

#: The release lines with streams groups, oldest first (trunk last).
STREAMS_LINES = ("4.1", "4.2", "4.3", "4.4", "trunk")
#: Lines that taskassign knows and that have no streams groups.
NO_STREAMS_LINES = ("3.9", "4.0")
#: The newest release line: what an unspecified line means.
DEFAULT_STREAMS_LINE = "4.4"
#: The unmerged KAFKA-20719 revision the pinned goldens come from.
KAFKA_20719_PROPOSED = "kafka-20719-proposed"


class StreamsProtocolError(UserInputError):
    """A streams-protocol request that the chosen Kafka line cannot serve (e.g. a line without streams groups)."""


@dataclass(frozen=True, slots=True)
class StickyRevision:
    """What distinguishes one line's ``StickyTaskAssignor`` (and the coordinator's call of it)."""

    line: str
    #: 4.1's assignor: task pairs, HashSet iteration orders, identity-hash tie-breaks.
    task_pairs: bool
    #: KAFKA-20719: reported task offsets make members candidates for a task, ranked by offset sum.
    task_offsets: bool
    #: ``processIdToState`` filled by ``computeIfAbsent`` (bucket-head insertion) instead of ``putIfAbsent``.
    compute_if_absent: bool
    #: Configs as a typed ``AssignmentConfigs`` (a missing standby count is 0) instead of a string map.
    typed_configs: bool
    #: What the coordinator hands the assignor as each member's tasks.
    member_tasks: str


_TARGET = "previous target assignment"
_RECONCILED = "reconciled (currently owned) tasks"

STICKY_REVISIONS: dict[str, StickyRevision] = {
    "4.1": StickyRevision("4.1", True, False, False, False, _TARGET),
    "4.2": StickyRevision("4.2", False, False, False, False, _TARGET),
    "4.3": StickyRevision("4.3", False, False, False, False, _TARGET),
    "4.4": StickyRevision("4.4", False, True, True, True, _RECONCILED),
    "trunk": StickyRevision("trunk", False, True, True, True, _RECONCILED),
    KAFKA_20719_PROPOSED: StickyRevision(KAFKA_20719_PROPOSED, False, True, False, False, _TARGET),
}


def check_streams_line(kafka_line: str) -> str:
    """``kafka_line`` if it has streams groups (or is ``kafka-20719-proposed``); StreamsProtocolError if not."""
    if kafka_line in STICKY_REVISIONS:
        return kafka_line
    if kafka_line in NO_STREAMS_LINES:
        raise StreamsProtocolError(f"Kafka {kafka_line} has no streams groups (KIP-1071 arrived in 4.1)")
    raise StreamsProtocolError(
        f"unknown Kafka line {kafka_line!r} for a streams group; the lines with streams groups are "
        f"{', '.join(STREAMS_LINES)} (and {KAFKA_20719_PROPOSED}, the unmerged revision of the first goldens)"
    )


def sticky_revision(kafka_line: str) -> StickyRevision:
    """The sticky assignor of ``kafka_line``; StreamsProtocolError for a line without streams groups."""
    return STICKY_REVISIONS[check_streams_line(kafka_line)]
