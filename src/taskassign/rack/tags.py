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
    others: set[tuple[str, str]] = set()
    for holder in other_holders:
        if holder != source and holder != destination:
            others.update(tags[holder].items())
    with_source = others | set(tags[source].items())
    with_destination = others | set(tags[destination].items())
    return len(with_destination) >= len(with_source)


class TagDiversityPredicate:
    """The tag-aware ``MoveStandbyPredicate`` over given client tags, also answerable from the task's holders
    alone (``on_holders``): the standby optimisation keeps those per task, so a check costs O(holders)
    instead of a scan of every client's sets per candidate move."""

    __slots__ = ("_entries", "_tags")

    def __init__(self, tags: Mapping[ProcessId, Mapping[str, str]]) -> None:
        self._tags = tags
        self._entries = {pid: frozenset(client_tags.items()) for pid, client_tags in tags.items()}

    def __call__(
        self, source: ProcessId, destination: ProcessId, task: TaskId,
        active: Mapping[ProcessId, AbstractSet[TaskId]], standby: Mapping[ProcessId, AbstractSet[TaskId]],
    ) -> bool:
        tags = self._tags
        holders = {pid for pid, held in active.items() if task in held and pid in tags}
        holders.update(pid for pid, held in standby.items() if task in held and pid in tags)
        return tag_diversity_allows(tags, source, destination, holders)

    def on_holders(self, source: ProcessId, destination: ProcessId, task: TaskId,
                   holders: AbstractSet[ProcessId]) -> bool:
        """The same answer given the clients holding ``task`` now (active or standby); clients without
        tags known here count for nothing, as in ``__call__``."""
        entries = self._entries
        others: frozenset[tuple[str, str]] = frozenset()
        for holder in holders:
            if holder != source and holder != destination and holder in entries:
                others = others | entries[holder]
        return len(others | entries[destination]) >= len(others | entries[source])


def tag_diversity_predicate(state: ApplicationState) -> TagDiversityPredicate:
    """The tag-aware predicate over ``state``'s client tags, evaluated on the assignment it is given."""
    return TagDiversityPredicate({pid: client.client_tags for pid, client in state.clients.items()})
