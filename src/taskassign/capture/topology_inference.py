"""From a ``Topology#describe()`` text to the GROUP.json ``topology`` object: what the text says, and what
it leaves to the caller (``capture.group_capture`` settles that against the cluster).

From the text to GROUP.json (:func:`to_group_topology`)
-------------------------------------------------------
The leader needs per sub-topology its source topics, stores, changelog topics, sink topics and
co-partition groups, plus the repartition topics (docs/group-file.md). The text carries part of it; the
rules below reproduce ``InternalTopologyBuilder.subtopologyToTopicsInfo()`` / ``copartitionGroups()`` and
were checked against them on every fixture (``*.expected.json``).

Repartition (internal) topics.
    Kafka knows its internal topics from ``addInternalTopic``, which only the DSL calls (the public
    ``Topology`` API cannot), and every such topic ends in ``-repartition`` (repartition, groupBy,
    selectKey + join...) or ``-topic`` (foreign-key join subscription registration/response). The DSL
    always both writes (a Sink) and reads (a Source) it in the same topology. The rule here is both:
    a topic printed by a Source and by a static Sink of this description whose name ends in
    ``-repartition`` or ``-topic`` is internal; it becomes ``<application.id>-<name>`` in source topics,
    sink topics, co-partition groups and ``repartition_topics``. A user topic with such a name that the
    application writes and reads back itself is the one case this gets wrong (pass it in
    ``external_topics``); a topic written and read back without that suffix is taken as a user topic
    (``KStream#to`` + ``StreamsBuilder#stream``) and noted.

Partition counts of repartition topics.
    ``null`` (the leader computes them). ``repartition(Repartitioned...withNumberOfPartitions(n))`` fixes
    a count that the text does not show: pass ``repartition_partitions``.

Stores and changelogs.
    A sub-topology's stores are those of its processors (global stores are not tasks' stores and are
    listed apart). Each store's changelog is ``<application.id>-<store>-changelog`` (Kafka's default:
    logging enabled), except that the text cannot show

    - stores with logging disabled (``withLoggingDisabled()``; in-memory stores are logged too), and
      ``Topology#addReadOnlyStateStore`` stores, whose changelog is their source topic: pass
      ``changelog_overrides`` (store -> changelog topic, or None for no changelog);
    - source-table stores under ``topology.optimization=all`` (or ``reuse.ktable.source.topics``), whose
      changelog is the table's source topic: the optimised text is identical to the unoptimised one.
      Pass ``source_table_changelogs=True`` when the application runs with that optimisation. A
      source-table store is the store of a processor whose only predecessor is a Source reading one
      user topic, and which is named ``KTABLE-SOURCE-<10 digits>`` or ``X`` with the Source named
      ``X-source`` (``builder.table(topic, Consumed.as("X"))``).

Co-partition groups.
    Kafka registers one for every DSL join (stream-stream, stream-table, table-table, the two halves of a
    foreign-key join) and every cogroup, made of the sources feeding both sides within the sub-topology;
    the PAPI and ``KStream#process`` never register any, and ``merge`` does not either. In the text every
    such join shows as a store shared by processors that different Sources feed (the windowed stores of a
    stream-stream join, the table's store read by the joining side, the subscription store of a
    foreign-key join, the cogroup store). The rule: for each store accessed by processors whose sets of
    upstream Sources (within the sub-topology) differ, leave out the processors named like ``process()``
    or ``transform`` nodes (``KSTREAM-PROCESSOR-``, ``KSTREAM-PROCESSVALUES-``, ``KSTREAM-TRANSFORM-``,
    ``KTABLE-TRANSFORMVALUES-``... followed by 10 digits); if the others are still fed differently and
    one of them has a DSL join or table name (``KSTREAM-JOINTHIS-``, ``KSTREAM-WINDOWED-``, ``KSTREAM-JOIN-``,
    ``KTABLE-SOURCE-``, ``KTABLE-FK-JOIN-...``, ``COGROUPKSTREAM-AGGREGATE-``, ``KSTREAM-AGGREGATE-``...
    followed by 10 digits, a user-named ``...-this-join``, ``...-join-other``, ``...-subscription-receive``,
    ``...-cogroup-agg-N``..., or a source-table processor), the topics of every upstream Source of those
    processors form one group. Groups sharing a topic are merged (Kafka's transitive closure), groups of
    one topic (a self-join: Kafka lists it, it constrains nothing) are dropped, and a group belongs to
    the sub-topology of its join. A store shared otherwise (PAPI, ``process()``, a read-only store, or a
    join whose processors and table are all named by the user, e.g. ``toTable(Named.as(..))`` joined
    with ``Joined.as(..)``) is not taken as a join, and a note says so. Known over-approximation: a
    user-named ``process(Named.as(..))`` connected by name to a DSL table's store.

    Cogroups follow Kafka exactly, quirk included: for a cogrouped stream that is repartitioned, Kafka
    co-partitions the sources of the grouped stream *before* its repartition (in another sub-topology),
    not the repartition topic the cogroup reads (``CogroupedStreamAggregateBuilder`` passes the
    pre-repartition streams to ``ensureCopartitionWith``). The inference reproduces that by replacing
    such a repartition topic with the topics upstream of the Sinks writing it;
    ``kafka_cogroup_sources=False`` co-partitions the repartition topic instead (what the cogroup reads).

Not representable: pattern-subscribed sources (their topics are known only once the pattern matches:
pass ``pattern_topics``; a sub-topology left without a concrete topic is left out, as Kafka's
``subtopologyToTopicsInfo()`` does before the first metadata update), dynamic sinks (their topics are
unknown; they are never repartition topics), named topologies, and the internal topic prefix override.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskassign.capture.topology_text import (
    INTERNAL_SUFFIXES,
    ProcessorNode,
    SourceNode,
    Subtopology,
    TopologyDescription,
)
from taskassign.errors import ConfigError, TopologyTextError, UserInputError

__all__ = (
    "GroupTopology",
    "copartition_groups",
    "repartition_topics",
    "source_table_stores",
    "to_group_topology",
)

# Processor names the DSL gives joins, tables and aggregations (auto-named and user-named variants), and the
# ones of process()/transform() nodes, which share stores without joining.
_DSL_AUTO_NAME = re.compile(
    r"(?:KSTREAM-(?:JOINTHIS|JOINOTHER|OUTERTHIS|OUTEROTHER|JOIN|LEFTJOIN|WINDOWED|AGGREGATE|REDUCE|TOTABLE)"
    r"|KTABLE-(?:SOURCE|JOINTHIS|JOINOTHER|FK-JOIN-[A-Z-]+|AGGREGATE|REDUCE|FILTER|MAPVALUES|TRANSFORMVALUES)"
    r"|COGROUPKSTREAM-AGGREGATE)-\d{10}")
_DSL_USER_SUFFIX = re.compile(
    r".+-(?:this-windowed|other-windowed|this-join|other-join|outer-this-join|outer-other-join|join-this"
    r"|join-other|subscription-receive|subscription-join-foreign|foreign-join-subscription"
    r"|subscription-response-resolver|cogroup-agg-\d+)")
_SOURCE_TABLE_AUTO = re.compile(r"KTABLE-SOURCE-\d{10}")
_COGROUP = re.compile(r"COGROUPKSTREAM-AGGREGATE-\d{10}|.+-cogroup-agg-\d+")
_PROCESS_LIKE = re.compile(
    r"(?:KSTREAM-(?:PROCESSOR|PROCESSVALUES|TRANSFORM|TRANSFORMVALUES|FLATTRANSFORM|FLATTRANSFORMVALUES)"
    r"|KTABLE-TRANSFORMVALUES)-\d{10}")


def repartition_topics(description: TopologyDescription, *, external_topics: Collection[str] = ()) -> tuple[str, ...]:
    """The internal topics, as printed (without the application id): read by a Source and written by a
    static Sink of this description, named ``...-repartition`` or ``...-topic``."""
    written = set(description.sink_topics)
    return tuple(t for t in description.source_topics
                 if t in written and t.endswith(INTERNAL_SUFFIXES) and t not in external_topics)


def _source_table_processors(subtopology: Subtopology, internal: Collection[str] = ()) -> dict[str, str]:
    """Processor -> source topic, for the processors that materialise a source table (``builder.table``),
    recognised by the DSL's names (module docstring)."""
    nodes = {n.name: n for n in subtopology.nodes}
    result: dict[str, str] = {}
    for p in subtopology.processors:
        if not p.stores or len(p.predecessors) != 1:
            continue
        src = nodes[p.predecessors[0]]
        if not isinstance(src, SourceNode) or len(src.topics) != 1 or src.topics[0] in internal:
            continue
        if _SOURCE_TABLE_AUTO.fullmatch(p.name) or src.name == p.name + "-source":
            result[p.name] = src.topics[0]
    return result


def source_table_stores(subtopology: Subtopology, internal: Collection[str] = ()) -> dict[str, str]:
    """Store -> source topic of the source tables (``builder.table``) of a sub-topology, recognised by the
    DSL's names (module docstring); their changelog is the topic itself under ``topology.optimization=all``.
    ``internal``: topics (as printed) that are internal, never a source table's topic."""
    tables = _source_table_processors(subtopology, internal)
    return {store: tables[p.name] for p in subtopology.processors if p.name in tables for store in p.stores}


def _upstream_sources(subtopology: Subtopology) -> dict[str, frozenset[str]]:
    """Node -> the Sources it is reachable from (following arrows backwards)."""
    nodes = {n.name: n for n in subtopology.nodes}
    result: dict[str, frozenset[str]] = {}
    for n in subtopology.nodes:
        seen = {n.name}
        todo = [n.name]
        found: set[str] = set()
        while todo:
            current = nodes[todo.pop()]
            if isinstance(current, SourceNode):
                found.add(current.name)
                continue
            for p in current.predecessors:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        result[n.name] = frozenset(found)
    return result


def _is_dsl_join_or_table(processor: ProcessorNode, source_tables: Collection[str]) -> bool:
    return bool(_DSL_AUTO_NAME.fullmatch(processor.name) or _DSL_USER_SUFFIX.fullmatch(processor.name)
                or processor.name in source_tables)


def copartition_groups(
    description: TopologyDescription,
    *,
    external_topics: Collection[str] = (),
    pattern_topics: Mapping[str, Sequence[str]] | None = None,
    kafka_cogroup_sources: bool = True,
    notes: list[str] | None = None,
) -> dict[int, tuple[tuple[str, ...], ...]]:
    """The co-partition groups of the description's joins and cogroups, by the id of the sub-topology
    they belong to (topics as printed, groups and their topics sorted; module docstring for the rule).

    ``kafka_cogroup_sources``: a cogroup whose input is repartitioned co-partitions, in Kafka, the
    *original* sources of that input (the grouped stream's, before its repartition topic) rather than the
    repartition topic the cogroup reads; True reproduces that, False co-partitions the topics the cogroup
    actually reads. Notes about what was not inferred are appended to ``notes``.
    """
    internal = set(repartition_topics(description, external_topics=external_topics))
    writers: dict[str, set[str]] = {}  # internal topic -> upstream sources' topics of the sinks writing it
    upstream_by_sub = {sub.id: _upstream_sources(sub) for sub in description.subtopologies}
    for sub in description.subtopologies:
        nodes = {n.name: n for n in sub.nodes}
        for sink in sub.sinks:
            if sink.topic in internal:
                for name in upstream_by_sub[sub.id][sink.name]:
                    src = nodes[name]
                    assert isinstance(src, SourceNode)
                    writers.setdefault(sink.topic, set()).update(_topics_of(src, pattern_topics, sub.id, notes))
    links: list[tuple[int, list[str]]] = []  # (sub-topology, topics that must be co-partitioned)
    for sub in description.subtopologies:
        upstream = upstream_by_sub[sub.id]
        nodes = {n.name: n for n in sub.nodes}
        tables = _source_table_processors(sub, internal)
        for store in sub.stores:
            every = [p for p in sub.processors if store in p.stores]
            if len({upstream[p.name] for p in every}) < 2:
                continue
            sharers = [p for p in every if not _PROCESS_LIKE.fullmatch(p.name)]
            feeds = {upstream[p.name] for p in sharers}
            if len(feeds) < 2 or not any(_is_dsl_join_or_table(p, tables) for p in sharers):
                if notes is not None:
                    notes.append(f"sub-topology {sub.id}: store {store!r} is shared by processors "
                                 f"{', '.join(repr(p.name) for p in every)} fed by different sources, not as a DSL "
                                 "join (no DSL join or table name, or process()/transform processors): no "
                                 "co-partitioning is inferred (Kafka registers it only for DSL joins and cogroups; "
                                 "add copartition_groups if this is a join named by the user)")
                continue
            cogroup = kafka_cogroup_sources and any(_COGROUP.fullmatch(p.name) for p in sharers)
            topics: list[str] = []
            for name in sorted(set().union(*feeds)):
                src = nodes[name]
                assert isinstance(src, SourceNode)
                for t in _topics_of(src, pattern_topics, sub.id, notes):
                    if cogroup and t in writers:
                        topics.extend(sorted(writers[t]))
                        if notes is not None:
                            notes.append(f"sub-topology {sub.id}: the cogroup on store {store!r} reads the repartition "
                                         f"topic {t!r}; as Kafka does, its group holds the topics upstream of that "
                                         f"repartition ({sorted(writers[t])}) instead (kafka_cogroup_sources=False "
                                         "co-partitions the repartition topic)")
                    else:
                        topics.append(t)
            if topics:
                links.append((sub.id, topics))
    # transitive closure, as Kafka's copartitionGroups(); a group belongs to the first sub-topology with a link
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, topics in links:
        for t in topics:
            parent[find(t)] = find(topics[0])
    owner: dict[str, int] = {}
    for sid, topics in links:
        owner.setdefault(find(topics[0]), sid)
    groups: dict[str, set[str]] = {}
    for t in parent:
        groups.setdefault(find(t), set()).add(t)
    result: dict[int, list[tuple[str, ...]]] = {}
    for root, members in groups.items():
        if len(members) > 1:
            result.setdefault(owner[root], []).append(tuple(sorted(members)))
    return {sid: tuple(sorted(gs)) for sid, gs in sorted(result.items())}


def _topics_of(source: SourceNode, pattern_topics: Mapping[str, Sequence[str]] | None, sid: int,
               notes: list[str] | None) -> tuple[str, ...]:
    if source.pattern is None:
        return source.topics
    matched = (pattern_topics or {}).get(source.pattern)
    if matched:
        return tuple(matched)
    if notes is not None:
        notes.append(f"sub-topology {sid}: source {source.name!r} subscribes the pattern {source.pattern!r}; its "
                     "topics are left out of co-partition groups (pass pattern_topics)")
    return ()


@dataclass(frozen=True)
class GroupTopology:
    """The GROUP.json ``topology`` object (``topology``: a fresh JSON-ready dict, exactly the keys of
    docs/group-file.md) and what the text could not tell (``notes``)."""

    topology: dict[str, Any]
    notes: tuple[str, ...]


def to_group_topology(
    description: TopologyDescription,
    application_id: str,
    *,
    source_table_changelogs: bool = False,
    changelog_overrides: Mapping[str, str | None] | None = None,
    repartition_partitions: Mapping[str, int] | None = None,
    pattern_topics: Mapping[str, Sequence[str]] | None = None,
    external_topics: Collection[str] = (),
    kafka_cogroup_sources: bool = True,
) -> GroupTopology:
    """The GROUP.json ``topology`` object of a described topology, with Kafka's internal topic names.

    - ``source_table_changelogs``: the application runs with ``topology.optimization=all`` (or
      ``reuse.ktable.source.topics``): source-table stores use their source topic as changelog.
    - ``changelog_overrides``: store -> its changelog topic, or None for a store without one (logging
      disabled); read-only stores (``addReadOnlyStateStore``) map to their source topic.
    - ``repartition_partitions``: repartition topic (as printed or with the application id) -> the count
      the topology fixes (``Repartitioned.withNumberOfPartitions``); the others are null.
    - ``pattern_topics``: pattern (as printed) -> the topics it matches.
    - ``external_topics``: topics (as printed) that look internal but are the user's.
    - ``kafka_cogroup_sources``: see :func:`copartition_groups` (True: Kafka's groups for cogroups).

    Raises :class:`TopologyTextError` when no sub-topology has a concrete source topic, and
    :class:`~taskassign.errors.UserInputError` for arguments that do not fit the description.
    """
    if not application_id or application_id != application_id.strip():
        raise ConfigError("application.id", f"expected a non-empty application id, got {application_id!r}")
    notes: list[str] = []
    internal = set(repartition_topics(description, external_topics=external_topics))
    overrides = dict(changelog_overrides or {})
    fixed = _fixed_counts(repartition_partitions or {}, internal, application_id)
    patterns = dict(pattern_topics or {})
    known_patterns = set(description.topic_patterns)
    for p in patterns:
        if p not in known_patterns:
            raise UserInputError(f"pattern_topics: {p!r} is not a pattern of the topology "
                                 f"(patterns: {sorted(known_patterns)})")
    all_stores = {s for sub in description.subtopologies for s in sub.stores}
    for store in overrides:
        if store not in all_stores:
            raise UserInputError(f"changelog_overrides: {store!r} is not a store of a sub-topology "
                                 f"(stores: {sorted(all_stores)})")

    def full(topic: str) -> str:
        return f"{application_id}-{topic}" if topic in internal else topic

    written = set(description.sink_topics)
    for t in description.source_topics:
        if t in written and t not in internal:
            notes.append(f"topic {t!r} is written and read back by the topology; taken as a user topic (Kafka's "
                         "internal topics end in -repartition or -topic)")
    subtopologies: list[dict[str, Any]] = []
    source_tables: dict[str, str] = {}
    all_groups = copartition_groups(description, external_topics=external_topics, pattern_topics=patterns,
                                    kafka_cogroup_sources=kafka_cogroup_sources, notes=notes)
    for sub in description.subtopologies:
        sources = [full(t) for t in sub.source_topics]
        for s in sub.sources:
            if s.pattern is not None:
                matched = patterns.get(s.pattern)
                if matched:
                    sources.extend(matched)
                else:
                    notes.append(f"sub-topology {sub.id}: source {s.name!r} subscribes the pattern {s.pattern!r}; "
                                 "its topics are known once it matches (pass pattern_topics)")
        if not sources:
            notes.append(f"sub-topology {sub.id} is left out: it reads only patterns, so it has no topic (and no "
                         "task) until they match")
            continue
        tables = source_table_stores(sub, internal)
        source_tables.update(tables)
        changelogs: list[str] = []
        for store in sub.stores:
            if store in overrides:
                changelog = overrides[store]
            elif source_table_changelogs and store in tables:
                changelog = tables[store]
            else:
                changelog = f"{application_id}-{store}-changelog"
            if changelog is not None:
                changelogs.append(changelog)
        sinks = [full(t) for t in sub.sink_topics]
        dynamic = [s.name for s in sub.sinks if s.extractor is not None]
        if dynamic:
            notes.append(f"sub-topology {sub.id}: sinks {dynamic} choose their topic per record (TopicNameExtractor); "
                         "those topics are unknown")
        groups = all_groups.get(sub.id, ())
        subtopologies.append({
            "id": sub.id,
            "source_topics": sorted(dict.fromkeys(sources)),
            "stores": sorted(sub.stores),
            "changelog_topics": sorted(dict.fromkeys(changelogs)),
            "sink_topics": sorted(sinks),
            "copartition_groups": sorted(sorted({full(t) for t in g}) for g in groups),
        })
    if not subtopologies:
        line = description.subtopologies[0].line if description.subtopologies else description.start_line
        raise TopologyTextError(line, "expected a sub-topology with a concrete source topic: the topology has none "
                                      "(only global stores or pattern subscriptions; pass pattern_topics)",
                                source=description.source)
    repartition = {full(t): fixed.get(full(t)) for t in sorted(internal)}
    unknown_counts = sorted(t for t, n in repartition.items() if n is None)
    if unknown_counts:
        notes.append(f"repartition topics {unknown_counts} have a null partition count (the leader computes it); "
                     "a count fixed by repartition(Repartitioned.withNumberOfPartitions(n)) does not show in the "
                     "text: pass repartition_partitions")
    plain = sorted(s for s in all_stores if s not in overrides and not (source_table_changelogs and s in source_tables))
    if plain:
        notes.append(f"stores {plain} are taken as logged (changelog <application.id>-<store>-changelog); the text "
                     "does not show withLoggingDisabled() or read-only stores: pass changelog_overrides")
    if source_tables and not source_table_changelogs:
        notes.append(f"source-table stores {sorted(source_tables)} get their own changelog; with "
                     "topology.optimization=all their changelog is the source topic "
                     "(pass source_table_changelogs=True)")
    for g in description.global_stores:
        notes.append(f"global store {g.store!r} (sub-topology {g.id}, topic {g.topic!r}) is restored by every client; "
                     "it is not a task")
    topology: dict[str, Any] = {"subtopologies": subtopologies, "repartition_topics": repartition}
    return GroupTopology(topology, tuple(dict.fromkeys(notes)))


def _fixed_counts(counts: Mapping[str, int], internal: Collection[str], application_id: str) -> dict[str, int]:
    fixed: dict[str, int] = {}
    for name, count in counts.items():
        bare = name.removeprefix(f"{application_id}-") if name not in internal else name
        if bare not in internal:
            raise UserInputError(f"repartition_partitions: {name!r} is not a repartition topic of the topology "
                                 f"(repartition topics: {sorted(internal)})")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise UserInputError(f"repartition_partitions: {name!r}: expected a partition count >= 1, got {count!r}")
        fixed[f"{application_id}-{bare}"] = count
    return fixed
