"""Kafka's ``ClientTagAwareStandbyTaskAssignor`` (KIP-708): spread a task's replicas over tag values.

For every stateful task, each standby goes to the least loaded client whose tag values differ from the
active's and the earlier standbys' for every configured tag key (``rack.aware.assignment.tags``). Once
the replicas placed reach the number of distinct values of a key, that key stops constraining the
rest ("partial rack awareness"). Standbys that still find no client go to the least loaded clients,
tasks visited in Java HashMap order, as in Kafka (``ClientTagAwareStandbyTaskAssignor``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from taskassign.ids import TaskId
from taskassign.internals.client_state import ClientState
from taskassign.internals.constrained_priority_set import ClientPool, PoolFactory
from taskassign.internals.java_order import JavaHashMap
from taskassign.rack.tags import TagDiversityPredicate
from taskassign.standby.base import (
    StandbyMovePredicate,
    log_shortfalls,
    not_holding_by_assigned_load,
    place_least_loaded,
)

__all__ = ("ClientTagAwareStandbyTaskAssignor", "client_tags", "rack_as_tag")

log = logging.getLogger(__name__)

TagEntry = tuple[str, str]
TagFunction = Callable[[ClientState], Mapping[str, str]]


def client_tags(client: ClientState) -> Mapping[str, str]:
    """A client's ``client.tag.*`` configs."""
    return client.tags


def rack_as_tag(client: ClientState) -> Mapping[str, str]:
    """The client's rack as its only tag (Kafka's variant for rack-aware clients without tags)."""
    return {"rack": client.rack} if client.rack is not None else {}


def keeps_tag_diversity(
    source: Mapping[str, str], destination: Mapping[str, str], others: Iterable[Mapping[str, str]]
) -> bool:
    """Moving a replica from ``source`` to ``destination`` keeps at least as many distinct tag entries
    (key=value) among the task's replicas; ``others`` are the tags of the task's other holders."""
    entries: set[TagEntry] = set()
    for tags in others:
        entries.update(tags.items())
    return len(entries | destination.items()) >= len(entries | source.items())


class ClientTagAwareStandbyTaskAssignor:
    """Standby placement over client tags; ``tags_of`` reads a client's tags (default: its client tags)."""

    def __init__(self, tag_keys: Sequence[str], tags_of: TagFunction = client_tags) -> None:
        self.tag_keys = tuple(tag_keys)
        self._key_set = frozenset(tag_keys)
        self._tags_of = tags_of

    def assign(
        self,
        clients: Sequence[ClientState],
        stateful_tasks: Sequence[int],
        num_standby_replicas: int,
        make_pool: PoolFactory,
        task_ids: Sequence[TaskId],
    ) -> None:
        """Place the standbys of every task held as active somewhere, then the fallback.

        Like Kafka, at least one standby is placed per actively assigned task even when
        ``num_standby_replicas`` is 0: callers that want none must not call this (Kafka bug 11.2).
        """
        tasks = list(stateful_tasks)
        remaining = dict.fromkeys(tasks, num_standby_replicas)
        remaining_order: JavaHashMap[int] = JavaHashMap(hash_of=lambda t: task_ids[t].java_hash())
        remaining_order.put_all(tasks)
        tags = [self._tags_of(c) for c in clients]
        values: dict[str, set[str]] = {}
        for client_tag_map in tags:
            for key, value in client_tag_map.items():
                values.setdefault(key, set()).add(value)
        entries = [frozenset(client_tag_map.items()) for client_tag_map in tags]
        owners: dict[int, list[int]] = {}
        for client in clients:
            for task in client.active:
                owners.setdefault(task, []).append(client.index)

        pool = make_pool(*not_holding_by_assigned_load(clients))
        everyone = range(len(clients))
        for task in tasks:
            for owner in owners.get(task, ()):
                if task not in remaining:  # a second active owner (invalid input): nothing left to place
                    break
                pool.offer_everyone(everyone)
                left = self._place_with_different_tags(
                    clients, tags, values, entries, pool, task, owner, remaining[task])
                if left > 0:
                    remaining[task] = left
                elif task in remaining:
                    del remaining[task]
                    remaining_order.remove(task)

        if remaining:
            pool.offer_everyone(everyone)
            short = []
            for task in remaining_order:
                if remaining[task] > 0 and place_least_loaded(clients, pool, task, remaining[task]) > 0:
                    short.append(task)
            log_shortfalls((task_ids[t] for t in short), num_standby_replicas)

    def _place_with_different_tags(
        self,
        clients: Sequence[ClientState],
        tags: Sequence[Mapping[str, str]],
        values: Mapping[str, set[str]],
        entries: Sequence[frozenset[TagEntry]],
        pool: ClientPool,
        task: int,
        owner: int,
        remaining: int,
    ) -> int:
        """Place standbys of ``task`` (active on ``owner``) on clients with unused tag values; returns
        how many are still missing (Kafka's do-while: one placement is tried even when none is wanted)."""
        used = 1
        blocked: set[TagEntry] = set()  # a client is blocked when it has one of these tag entries
        last = owner

        def unblocked(client: int) -> bool:
            return blocked.isdisjoint(entries[client])

        while True:
            for key, value in tags[last].items():
                if key not in self._key_set:
                    log.debug("client tag %r is not in rack.aware.assignment.tags; ignored", key)
                    continue
                if len(values[key]) <= used:  # every value of the key is taken: stop diversifying it
                    for any_value in values[key]:
                        blocked.discard((key, any_value))
                else:
                    blocked.add((key, value))
            chosen = pool.poll(task, unblocked)
            if chosen is None:
                break
            used += 1
            remaining -= 1
            clients[chosen].assign_standby(task)
            last = chosen
            if remaining <= 0:
                break
        return remaining

    def tag_entries(self, clients: Sequence[ClientState]) -> list[frozenset[TagEntry]]:
        """Each client's tag entries (key, value), as the tag-diversity checks count them."""
        return [frozenset(self._tags_of(c).items()) for c in clients]

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        """Thread balancing may move a standby only to a client with all of the source's tag values."""
        destination_tags = self._tags_of(destination)
        return all(destination_tags.get(key) == value for key, value in self._tags_of(source).items())

    def is_allowed_task_movement_for_task(
        self, source: ClientState, destination: ClientState, task: int, clients: Sequence[ClientState]
    ) -> bool:
        """A standby of ``task`` may move if the task's replicas keep as many distinct tag entries."""
        others = (self._tags_of(c) for c in clients
                  if c.has_assigned(task) and c.index not in (source.index, destination.index))
        return keeps_tag_diversity(self._tags_of(source), self._tags_of(destination), others)

    def standby_move_predicate(self, clients: Sequence[ClientState]) -> StandbyMovePredicate:
        """Kafka's 4-argument ``isAllowedTaskMovement``: the tag-diversity check over this assignor's tags."""
        return TagDiversityPredicate({c.process_id: self._tags_of(c) for c in clients})
