"""The tag-diversity move predicate (Kafka's 4-argument ``ClientTagAwareStandbyTaskAssignor#isAllowedTaskMovement``).

A standby may move from ``source`` to ``destination`` unless that shrinks the set of distinct client-tag
entries (``key=value``) covered by the task's replicas: the tags of the other holders plus the source's
must not outnumber the tags of the other holders plus the destination's. All of a client's tags count,
not only the keys listed in ``rack.aware.assignment.tags``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet

from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState

__all__ = ("MoveStandbyPredicate", "TagDiversityPredicate", "always_allowed", "tag_diversity_allows",
           "tag_diversity_predicate")

#: ``can_move(source, destination, task, active, standby)`` (the internal optimiser's predicate).
MoveStandbyPredicate = Callable[
    [ProcessId, ProcessId, TaskId, Mapping[ProcessId, AbstractSet[TaskId]], Mapping[ProcessId, AbstractSet[TaskId]]],
    bool,
]


def always_allowed(
    source: ProcessId, destination: ProcessId, task: TaskId,
    active: Mapping[ProcessId, AbstractSet[TaskId]], standby: Mapping[ProcessId, AbstractSet[TaskId]],
) -> bool:
    """The default standby assignor's predicate: every move is allowed."""
    return True


def tag_diversity_allows(
    tags: Mapping[ProcessId, Mapping[str, str]], source: ProcessId, destination: ProcessId,
    other_holders: Iterable[ProcessId],
) -> bool:
    """True unless moving a replica from ``source`` to ``destination`` loses a distinct tag entry."""
    holders = list(other_holders)
    entries = {pid: frozenset(tags[pid].items()) for pid in (source, destination, *holders)}
    return _entries_allow(entries, source, destination, holders)


def _entries_allow(entries: Mapping[ProcessId, frozenset[tuple[str, str]]], source: ProcessId,
                   destination: ProcessId, holders: Iterable[ProcessId]) -> bool:
    """The rule over the clients' tag entries; a holder without entries here counts for nothing."""
    others: frozenset[tuple[str, str]] = frozenset()
    for holder in holders:
        if holder != source and holder != destination and holder in entries:
            others = others | entries[holder]
    return len(others | entries[destination]) >= len(others | entries[source])


class TagDiversityPredicate:
    """The tag-aware ``MoveStandbyPredicate`` over given client tags, also answerable from the task's holders
    alone (``on_holders``): the standby optimisation keeps those per task, so a check costs O(holders)
    instead of a scan of every client's sets per candidate move."""

    __slots__ = ("_entries",)

    def __init__(self, tags: Mapping[ProcessId, Mapping[str, str]]) -> None:
        self._entries = {pid: frozenset(client_tags.items()) for pid, client_tags in tags.items()}

    def __call__(
        self, source: ProcessId, destination: ProcessId, task: TaskId,
        active: Mapping[ProcessId, AbstractSet[TaskId]], standby: Mapping[ProcessId, AbstractSet[TaskId]],
    ) -> bool:
        holders = {pid for pid, held in active.items() if task in held}
        holders.update(pid for pid, held in standby.items() if task in held)
        return self.on_holders(source, destination, task, holders)

    def on_holders(self, source: ProcessId, destination: ProcessId, task: TaskId,
                   holders: AbstractSet[ProcessId]) -> bool:
        """The same answer given the clients holding ``task`` now (active or standby); clients without
        tags known here count for nothing, as in ``__call__``."""
        return _entries_allow(self._entries, source, destination, holders)


def tag_diversity_predicate(state: ApplicationState) -> TagDiversityPredicate:
    """The tag-aware predicate over ``state``'s client tags, evaluated on the assignment it is given."""
    return TagDiversityPredicate({pid: client.client_tags for pid, client in state.clients.items()})
