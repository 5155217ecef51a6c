"""From a topology and the cluster's partition counts to tasks: Kafka's repartition sizing,
co-partitioning and partition grouper (``RepartitionTopics#setup``, ``PartitionGrouper#partitionGroups``).

``resolve_topology`` answers, for one application, how many tasks each subtopology has and how many
partitions each of its source topics has (repartition topics included, whose counts the leader computes).
It raises TopologyError, with Kafka's outcome as ``code``, where Kafka's leader would fail:

* a source topic missing from the metadata: Kafka answers every member with
  INCOMPLETE_SOURCE_TOPIC_METADATA (``MISSING_SOURCE_TOPIC``);
* a repartition topic whose count cannot be computed, topics that are not co-partitioned, a topic read
  by two subtopologies (``INVALID_TOPOLOGY``).

Kafka checks co-partitioning only when the application has a repartition topic (a quirk, docs/kafka-differences.md T1);
taskassign always checks it unless ``kafka_compat`` (docs/kafka-differences.md, row T1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from taskassign.errors import TopologyError
from taskassign.internals.java_order import hash_iteration_order
from taskassign.model import MAX_TASKS

__all__ = (
    "INVALID_TOPOLOGY",
    "MISSING_SOURCE_TOPIC",
    "ResolvedSubtopology",
    "ResolvedTopology",
    "SubtopologySpec",
    "TopologyError",
    "resolve_topology",
)

#: ``TopologyError.code`` values (also reason codes of the pipeline's errors table): a source topic the
#: metadata lacks (Kafka: INCOMPLETE_SOURCE_TOPIC_METADATA), or a topology Kafka's leader cannot size or
#: co-partition.
MISSING_SOURCE_TOPIC = "MISSING_SOURCE_TOPIC"
INVALID_TOPOLOGY = "INVALID_TOPOLOGY"


@dataclass(frozen=True, slots=True)
class SubtopologySpec:
    """A subtopology as the topology describes it (Kafka's ``TopicsInfo``)."""

    id: int
    source_topics: tuple[str, ...]
    sink_topics: tuple[str, ...] = ()
    copartition_groups: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class ResolvedSubtopology:
    """A subtopology's task count and the partition count of each of its source topics."""

    id: int
    num_tasks: int
    source_partition_counts: Mapping[str, int]

    def source_partitions(self, partition: int) -> tuple[str, ...]:
        """Source topics that have ``partition`` (the grouper: a shorter topic adds nothing past its end)."""
        return tuple(t for t, n in self.source_partition_counts.items() if n > partition)


@dataclass(frozen=True, slots=True)
class ResolvedTopology:
    subtopologies: tuple[ResolvedSubtopology, ...]
    #: The partition count of every repartition topic, as computed (or fixed by the topology).
    repartition_partition_counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


def resolve_topology(
    subtopologies: Iterable[SubtopologySpec],
    topic_partition_counts: Mapping[str, int],
    repartition_topics: Mapping[str, int | None],
    *,
    kafka_compat: bool = False,
) -> ResolvedTopology:
    """Size repartition topics, enforce co-partitioning and group partitions into tasks.

    ``topic_partition_counts`` holds the external topics present in the cluster metadata;
    ``repartition_topics`` the application's repartition topics with the count the topology fixes
    (None: computed from upstream, the largest partition count among the writers' source topics).
    """
    subs = sorted(subtopologies, key=lambda s: s.id)
    _check_sources_unique(subs)
    repartition = {t: n for t, n in repartition_topics.items() if any(t in s.source_topics for s in subs)}
    _check_missing_sources(subs, topic_partition_counts, repartition)
    counts: dict[str, int | None] = dict(repartition)
    enforced = {t for t, n in repartition.items() if n is not None}
    _size_repartition_topics(subs, topic_partition_counts, counts)
    if repartition or not kafka_compat:
        for group in _copartition_groups(subs):
            _enforce_copartitioning(group, topic_partition_counts, counts, enforced)
    resolved_counts = {t: n for t, n in counts.items() if n is not None}
    result = []
    for sub in subs:
        per_topic = {
            t: resolved_counts[t] if t in resolved_counts else topic_partition_counts[t]
            for t in sorted(set(sub.source_topics))
        }
        result.append(ResolvedSubtopology(sub.id, max(per_topic.values()), MappingProxyType(per_topic)))
    tasks = sum(r.num_tasks for r in result)
    if tasks > MAX_TASKS:
        raise TopologyError(INVALID_TOPOLOGY, f"the topology has {tasks} tasks, more than the {MAX_TASKS} taskassign "
                                              "assigns in one application")
    return ResolvedTopology(tuple(result), MappingProxyType(dict(sorted(resolved_counts.items()))))


def _check_sources_unique(subs: list[SubtopologySpec]) -> None:
    reader: dict[str, int] = {}
    for sub in subs:
        if not sub.source_topics:
            raise TopologyError(INVALID_TOPOLOGY, f"subtopology {sub.id} has no source topic")
        for topic in sub.source_topics:
            if topic in reader and reader[topic] != sub.id:
                raise TopologyError(INVALID_TOPOLOGY, f"topic {topic!r} is read by subtopologies {reader[topic]} "
                                                      f"and {sub.id}; Kafka Streams lets one subtopology read a topic")
            reader[topic] = sub.id


def _check_missing_sources(
    subs: list[SubtopologySpec], counts: Mapping[str, int], repartition: Mapping[str, int | None]
) -> None:
    for sub in subs:
        missing = sorted(t for t in set(sub.source_topics) if t not in repartition and t not in counts)
        if missing:
            raise TopologyError(MISSING_SOURCE_TOPIC, f"missing source topics {missing} of subtopology {sub.id} "
                                                      "(Kafka answers INCOMPLETE_SOURCE_TOPIC_METADATA)")


def _size_repartition_topics(
    subs: list[SubtopologySpec], external: Mapping[str, int], counts: dict[str, int | None]
) -> None:
    """Kafka's fixed point: a repartition topic gets the largest count among the source topics of the
    subtopologies writing it, counting an upstream repartition topic only once it is known. Subtopologies
    are visited in id order, each one's repartition sources in Java HashMap order."""
    pending = True
    while pending:
        pending = progress = False
        for sub in subs:
            own = hash_iteration_order(sorted(t for t in set(sub.source_topics) if t in counts))
            for topic in own:
                if counts[topic] is not None:
                    continue
                n = _upstream_count(subs, external, counts, topic)
                if n is None:
                    pending = True
                else:
                    counts[topic] = n
                    progress = True
        if pending and not progress:
            unknown = sorted(t for t, n in counts.items() if n is None)
            raise TopologyError(INVALID_TOPOLOGY, f"cannot compute the partition count of repartition topics "
                                                  f"{unknown}: no subtopology with known inputs writes them",
                                assignment_error=True)


def _upstream_count(
    subs: list[SubtopologySpec], external: Mapping[str, int], counts: Mapping[str, int | None], topic: str
) -> int | None:
    best: int | None = None
    for writer in subs:
        if topic not in writer.sink_topics:
            continue
        for upstream in writer.source_topics:
            candidate = counts[upstream] if upstream in counts else external[upstream]
            if candidate is not None and (best is None or candidate > best):
                best = candidate
    return best


def _copartition_groups(subs: list[SubtopologySpec]) -> list[tuple[str, ...]]:
    """The declared groups merged transitively (groups sharing a topic are one group)."""
    sources = {t for s in subs for t in s.source_topics}
    groups: list[set[str]] = []
    for sub in subs:
        for declared in sub.copartition_groups:
            for topic in declared:
                if topic not in sources:
                    raise TopologyError(INVALID_TOPOLOGY, f"subtopology {sub.id} co-partitions topic {topic!r}, "
                                                          "which no subtopology reads")
            merged = set(declared)
            for existing in [g for g in groups if g & merged]:
                merged |= existing
                groups.remove(existing)
            if merged:
                groups.append(merged)
    return sorted((tuple(sorted(g)) for g in groups), key=lambda g: g[0])


def _enforce_copartitioning(
    group: tuple[str, ...], external: Mapping[str, int], counts: dict[str, int | None], enforced: set[str]
) -> None:
    """Kafka's CopartitionedTopicsEnforcer for one group."""
    internal = [t for t in group if t in counts]
    if len(internal) == len(group):
        fixed = {t: counts[t] for t in internal if t in enforced}
        if fixed:
            if len(set(fixed.values())) > 1:
                raise TopologyError(INVALID_TOPOLOGY, f"repartition topics {sorted(fixed)} must be co-partitioned "
                                                      f"but have fixed partition counts {_describe_counts(fixed)}")
            target = next(iter(fixed.values()))
        else:
            target = max(n for t in internal if (n := counts[t]) is not None)
    else:
        sizes = {t: external[t] for t in group if t not in counts}
        if len(set(sizes.values())) > 1:
            raise TopologyError(INVALID_TOPOLOGY, f"topics {sorted(sizes)} are not co-partitioned: partition counts "
                                                  f"{_describe_counts(sizes)}")
        target = next(iter(sizes.values()))
    assert target is not None
    for topic in internal:
        if topic in enforced and counts[topic] != target:
            raise TopologyError(INVALID_TOPOLOGY, f"repartition topic {topic!r} has a fixed partition count of "
                                                  f"{counts[topic]}, but its co-partitioned topics have {target}")
        counts[topic] = target


def _describe_counts(counts: Mapping[str, int | None]) -> str:
    return ", ".join(f"{t}={n}" for t, n in sorted(counts.items()))
