"""The tag-diversity move predicate (Kafka's 4-argument ``ClientTagAwareStandbyTaskAssignor#isAllowedTaskMovement``).

A standby may move from ``source`` to ``destination`` unless that shrinks the set of distinct client-tag
entries (``key=value``) covered by the task's replicas: the tags of the other holders plus the source's
must not outnumber the tags of the other holders plus the destination's. All of a client's tags count,
not only the keys listed in ``rack.aware.assignment.tags``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TypeVar

from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState

_T = TypeVar("_T")

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
    entries = _entry_masks({pid: tags[pid] for pid in (source, destination, *holders)})
    return bool(_allowed(entries, source, destination, [None], lambda _: holders))


def _entry_masks(tags: Mapping[ProcessId, Mapping[str, str]]) -> dict[ProcessId, int]:
    """Each client's tag entries as a bit mask, one bit per distinct ``key=value`` (unions and counts of small
    ints instead of frozensets: the standby optimisation asks ~10^5 times per fleet)."""
    bits: dict[tuple[str, str], int] = {}
    return {pid: sum(1 << bits.setdefault(entry, len(bits)) for entry in client_tags.items())
            for pid, client_tags in tags.items()}


def _allowed(entries: Mapping[ProcessId, int], source: ProcessId, destination: ProcessId, tasks: Iterable[_T],
             holders_of: Callable[[_T], Iterable[ProcessId]]) -> list[_T]:
    """The tasks (in order) whose replica may move: the rule over the clients' tag entries (bit masks) and each
    task's holders; a holder without entries here counts for nothing."""
    allowed = []
    for task in tasks:
        others = 0
        for holder in holders_of(task):
            if holder != source and holder != destination and holder in entries:
                others |= entries[holder]
        if (others | entries[destination]).bit_count() >= (others | entries[source]).bit_count():
            allowed.append(task)
    return allowed


class TagDiversityPredicate:
    """The tag-aware ``MoveStandbyPredicate`` over given client tags, also answerable from the task's holders
    alone (``on_holders``): the standby optimisation keeps those per task, so a check costs O(holders)
    instead of a scan of every client's sets per candidate move."""

    __slots__ = ("_entries",)

    def __init__(self, tags: Mapping[ProcessId, Mapping[str, str]]) -> None:
        self._entries = _entry_masks(tags)

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
        return bool(_allowed(self._entries, source, destination, [task], lambda _: holders))

    def movable(self, source: ProcessId, destination: ProcessId, tasks: Iterable[TaskId],
                holders: Mapping[TaskId, AbstractSet[ProcessId]]) -> list[TaskId]:
        """``on_holders`` over many tasks at once (``holders[t]``: the clients holding t now), the allowed ones
        in the given order: the standby optimisation's filter of a pair's candidates, one call per pair."""
        return _allowed(self._entries, source, destination, tasks, holders.__getitem__)


def tag_diversity_predicate(state: ApplicationState) -> TagDiversityPredicate:
    """The tag-aware predicate over ``state``'s client tags, evaluated on the assignment it is given."""
    return TagDiversityPredicate({pid: client.client_tags for pid, client in state.clients.items()})
