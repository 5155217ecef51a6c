"""Reading the text Kafka Streams prints for a topology (``Topology#describe()``, i.e.
``TopologyDescription.toString()``), and turning it into the GROUP.json ``topology`` object.

Applications log this text when they start (``log.info("{}", topology.describe())``); it is often the only
record of a topology that an operator has. The grammar below was taken from Kafka's
``InternalTopologyBuilder`` (trunk 1eb7644349cb, 2024-10-25; the text has not changed since 2.x) and checked
against the fixtures that ``tests/capture/describe/DescribeTopologies.java`` writes with Kafka's own jars.

The grammar
-----------
::

    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [wc-input])
          --> KSTREAM-FLATMAPVALUES-0000000001
        Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
          --> by-word, other
          <-- KSTREAM-SOURCE-0000000000
        Sink: by-word-repartition-sink (topic: by-word-repartition)
          <-- by-word-repartition-filter

      Sub-topology: 1 for global store (will not generate tasks)
        Source: KSTREAM-SOURCE-0000000002 (topics: [countries])
          --> KTABLE-SOURCE-0000000003
        Processor: KTABLE-SOURCE-0000000003 (stores: [countries-store])
          --> none
          <-- KSTREAM-SOURCE-0000000002
      Sub-topology: 2
        ...

- The header is ``Topologies:``; Kafka then prints one space, so the first ``Sub-topology:`` line is indented
  by 3 spaces and the others by 2 (both are accepted anywhere). A named topology prints ``Topology: NAME:``
  instead: named topologies (an internal Kafka feature) are out of scope and rejected.
- Items come in id order. A regular sub-topology is followed by a blank line; a global store block
  (``Sub-topology: N for global store (will not generate tasks)``) is not. Global stores take ids from the
  same sequence as sub-topologies (a gap in the task sub-topology ids is normal). A global block is always a
  Source and a Processor with exactly one store; it generates no tasks.
- Node lines are indented by 4 spaces, arrow lines by 6:

  - ``Source: NAME (topics: [T1, T2])`` then ``--> SUCCESSORS``. A source subscribed by a pattern prints the
    pattern itself, without brackets: ``Source: NAME (topics: logs-[a-z]+)`` (there is no ``pattern:``
    keyword, and ``topics: []`` is never printed).
  - ``Processor: NAME (stores: [S1, S2])`` then ``--> SUCCESSORS`` then ``<-- PREDECESSORS``.
  - ``Sink: NAME (topic: T)`` or, for a ``TopicNameExtractor``, ``Sink: NAME (extractor class: OBJECT)``
    (the extractor's ``toString()``, e.g. ``App$$Lambda/0x...@5a37d3ed``), then ``<-- PREDECESSORS``.
  - Arrow lists are node names joined by ``", "``; an empty list prints ``none``. Arrows always point
    into the same sub-topology.
- Topic and store lists are Java ``HashSet`` orders (not sorted), nodes are ordered by sub-tree size then
  name; this parser keeps the printed order and relies on neither.
- Internal topics (repartition topics, foreign-key join subscription/response topics) are printed without
  the ``<application.id>-`` prefix they have in Kafka: ``by-word-repartition`` is the topic
  ``<application.id>-by-word-repartition``.

Reading is tolerant of what surrounds the text in a log: lines before the header are skipped, and whatever
text precedes ``Topologies:`` on its line is dropped. If the next line starts with that same text (a log
shipper that prefixes every line with the same tag), the prefix is stripped from every following line.
Prefixes that differ from line to line (per-line timestamps) are not supported: strip them first. The
description ends at end of text or at the first non-blank line that is not indented (the next log line);
such a line that looks like part of a description (``Source:``, ``-->`` ...) is an indentation error.
Only the first description in the text is read.

Names are PAPI-free-form (``Topology#addProcessor`` accepts any string): a node name may contain ``", "``,
``" --> "`` or ``" (stores: ["``. Arrow lists are therefore split against the node names the sub-topology
declares (``none`` is a node only if one is declared so and the reverse arrow confirms it); a node line
is split at the last ``" (topics: "`` whose remainder is a topic list (else at the first, and the
remainder is a pattern), at the last ``" (stores: ["``, and at the first ``" (extractor class: "`` or
else the last ``" (topic: "``. What the text cannot tell apart: a pattern that looks like a topic list
(``[abc]`` reads as the topic ``abc``), store names containing ``", "`` (they are split), and names with
trailing whitespace (lines are right-stripped).

Errors raise :class:`TopologyTextError` (a :class:`~taskassign.errors.UserInputError`) naming the line (in
the original text, 1-based) and what was expected there.

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
from types import MappingProxyType
from typing import Any, Final, NoReturn

from taskassign.errors import ConfigError, TopologyTextError, UserInputError

__all__ = (
    "GlobalStore",
    "GroupTopology",
    "Node",
    "ProcessorNode",
    "SinkNode",
    "SourceNode",
    "Subtopology",
    "TopologyDescription",
    "TopologyTextError",
    "copartition_groups",
    "format_topology_description",
    "parse_topology_description",
    "repartition_topics",
    "source_table_stores",
    "to_group_topology",
)

INT_MAX: Final = 2**31 - 1
HEADER: Final = "Topologies:"
GLOBAL_SUFFIX: Final = " for global store (will not generate tasks)"
INTERNAL_SUFFIXES: Final = ("-repartition", "-topic")
_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")
_SUBTOPOLOGY_LINE = re.compile(r"Sub-topology: (\d{1,10})(.*)")
_NAMED_HEADER = re.compile(r"(?:^|\s)Topology: .+:$")
_NODE_KINDS: Final = ("Source: ", "Processor: ", "Sink: ")
_ARROWS: Final = ("--> ", "<-- ")
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


# ---------------------------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class SourceNode:
    """``Source: NAME (topics: ...)``: the topics it reads, or the pattern it subscribes (then ``topics``
    is empty)."""

    name: str
    topics: tuple[str, ...]
    pattern: str | None
    successors: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class ProcessorNode:
    """``Processor: NAME (stores: [...])``."""

    name: str
    stores: tuple[str, ...]
    predecessors: tuple[str, ...]
    successors: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class SinkNode:
    """``Sink: NAME (topic: T)`` (``topic`` set) or ``(extractor class: ...)`` (``extractor`` set: the
    topic is chosen per record)."""

    name: str
    topic: str | None
    extractor: str | None
    predecessors: tuple[str, ...]
    line: int


Node = SourceNode | ProcessorNode | SinkNode


@dataclass(frozen=True)
class Subtopology:
    """A sub-topology that generates tasks; ``nodes`` in printed order."""

    id: int
    nodes: tuple[Node, ...]
    line: int

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def nodes_by_name(self) -> Mapping[str, Node]:
        """Every node by name (a read-only view)."""
        return MappingProxyType({n.name: n for n in self.nodes})

    @property
    def sources(self) -> tuple[SourceNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, SourceNode))

    @property
    def processors(self) -> tuple[ProcessorNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, ProcessorNode))

    @property
    def sinks(self) -> tuple[SinkNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, SinkNode))

    @property
    def source_topics(self) -> tuple[str, ...]:
        """The topics its Sources name (as printed: internal topics without the application id)."""
        return tuple(dict.fromkeys(t for s in self.sources for t in s.topics))

    @property
    def topic_patterns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.pattern for s in self.sources if s.pattern is not None))

    @property
    def sink_topics(self) -> tuple[str, ...]:
        """The topics of its static Sinks (as printed)."""
        return tuple(dict.fromkeys(s.topic for s in self.sinks if s.topic is not None))

    @property
    def stores(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(st for p in self.processors for st in p.stores))


@dataclass(frozen=True)
class GlobalStore:
    """``Sub-topology: N for global store``: a global store, restored by every client, not a task."""

    id: int
    source: SourceNode
    processor: ProcessorNode
    line: int

    @property
    def topic(self) -> str:
        return self.source.topics[0] if self.source.topics else (self.source.pattern or "")

    @property
    def store(self) -> str:
        return self.processor.stores[0]


@dataclass(frozen=True)
class TopologyDescription:
    """A parsed ``Topology#describe()`` text; ``start_line``/``end_line`` delimit it in the input."""

    subtopologies: tuple[Subtopology, ...]
    global_stores: tuple[GlobalStore, ...]
    source: str | None = None
    start_line: int = 1
    end_line: int = 1

    def subtopology(self, subtopology_id: int) -> Subtopology:
        for s in self.subtopologies:
            if s.id == subtopology_id:
                return s
        raise KeyError(subtopology_id)

    @property
    def topic_patterns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for s in self.subtopologies for p in s.topic_patterns))

    @property
    def source_topics(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t for s in self.subtopologies for t in s.source_topics))

    @property
    def sink_topics(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t for s in self.subtopologies for t in s.sink_topics))


# ---------------------------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Line:
    number: int
    text: str  # prefix stripped, right-stripped


@dataclass(frozen=True)
class _RawNode:
    """A node line with its arrow texts still unresolved."""

    kind: str
    name: str
    line: int
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    stores: tuple[str, ...] = ()
    topic: str | None = None
    extractor: str | None = None
    successors_text: str | None = None
    successors_line: int = 0
    predecessors_text: str | None = None
    predecessors_line: int = 0


def parse_topology_description(text: str, *, source: str | None = None) -> TopologyDescription:
    """Parse the text of ``Topology#describe()`` (see the module docstring for what is accepted).

    ``source`` names the text in error messages (a file name). Raises :class:`TopologyTextError`.
    """
    return _Parser(text, source).parse()


class _Parser:
    def __init__(self, text: str, source: str | None) -> None:
        self.source = source
        self.raw = [line.removesuffix("\r") for line in text.split("\n")]
        self.lines: list[_Line] = []
        self.pos = 0

    def fail(self, line: int, message: str) -> NoReturn:
        raise TopologyTextError(line, message, source=self.source)

    # -- framing: find the header, strip a log prefix, find the end
    def _frame(self) -> int:
        header = None
        for i, raw in enumerate(self.raw):
            stripped = raw.rstrip()
            if stripped.endswith(HEADER):
                before = stripped[: -len(HEADER)]
                if not before or not (before[-1].isalnum() or before[-1] == "_"):
                    header = i
                    break
        if header is None:
            if not any(r.strip() for r in self.raw):
                self.fail(1, "empty text: expected a topology description starting with 'Topologies:'")
            for i, raw in enumerate(self.raw):
                if _NAMED_HEADER.search(raw.rstrip()):
                    self.fail(i + 1, "a named topology ('Topology: NAME:') is not supported: named topologies "
                                     "are out of scope; expected 'Topologies:'")
            first = next(i for i, r in enumerate(self.raw) if r.strip())
            self.fail(first + 1, "expected the header 'Topologies:' (the text of Topology#describe()); no line "
                                 "of the text ends with it")
        stripped = self.raw[header].rstrip()
        prefix = stripped[: -len(HEADER)]
        rest = self.raw[header + 1:]
        # a log shipper's tag on every line: the line after the header starts with the header's prefix too
        prefixed = bool(prefix) and bool(rest) and rest[0].startswith(prefix) and rest[0].strip() != prefix.strip()
        for offset, raw in enumerate(rest):
            number = header + 2 + offset
            if prefixed:
                if raw.rstrip() == prefix.rstrip():
                    self.lines.append(_Line(number, ""))
                    continue
                if not raw.startswith(prefix):
                    break
                raw = raw[len(prefix):]
            content = raw.rstrip()
            if content and not content[0].isspace():
                self._check_end(number, content)
                break
            self.lines.append(_Line(number, content))
        return header + 1

    def _check_end(self, number: int, content: str) -> None:
        if content.startswith(("Sub-topology:", *_NODE_KINDS, *_ARROWS, "-->", "<--")):
            self.fail(number, f"indentation broken: {content.split(' ')[0]!r} must be indented (2-3 spaces before "
                              "'Sub-topology:', 4 before a node, 6 before an arrow)")
        if not any(s for s in self.lines if s.text.strip()) and "Sub-topology:" in content:
            self.fail(number, "expected an indented 'Sub-topology:' line after the header; this line carries a "
                              "log prefix that differs from the header's: strip log prefixes first")

    # -- lines
    def _peek(self) -> _Line | None:
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def _end_line(self) -> int:
        return self.lines[-1].number + 1 if self.lines else 2

    @staticmethod
    def _indent(text: str) -> int:
        return len(text) - len(text.lstrip(" "))

    def parse(self) -> TopologyDescription:
        header_line = self._frame()
        subtopologies: list[Subtopology] = []
        global_stores: list[GlobalStore] = []
        ids: dict[int, int] = {}
        while (line := self._peek()) is not None:
            if not line.text.strip():
                self.pos += 1
                continue
            body = line.text.lstrip(" ")
            indent = self._indent(line.text)
            if "\t" in line.text[:indent + 1]:
                self.fail(line.number, "indentation broken: tabs are not part of the text; expected spaces")
            if not body.startswith("Sub-topology:"):
                if body.startswith((*_NODE_KINDS, *_ARROWS)):
                    self.fail(line.number, f"expected 'Sub-topology: N' before {body.split(' ')[0]!r} (a blank line "
                                           "ends a sub-topology's nodes)")
                self.fail(line.number, f"expected 'Sub-topology: N', got {_clip(body)!r}")
            if indent not in (2, 3):
                self.fail(line.number, "indentation broken: expected 2 or 3 spaces before 'Sub-topology:', "
                                       f"got {indent}")
            match = _SUBTOPOLOGY_LINE.fullmatch(body)
            if match is None or match.group(2) not in ("", GLOBAL_SUFFIX) or int(match.group(1)) > INT_MAX:
                self.fail(line.number, "expected 'Sub-topology: N' or 'Sub-topology: N for global store (will not "
                                       f"generate tasks)' with N a sub-topology id, got {_clip(body)!r}")
            sid = int(match.group(1))
            if sid in ids:
                self.fail(line.number, f"duplicate sub-topology id {sid} (first at line {ids[sid]})")
            ids[sid] = line.number
            self.pos += 1
            raw_nodes = self._nodes(line)
            if match.group(2):
                global_stores.append(self._global_store(sid, line, raw_nodes))
            else:
                subtopologies.append(Subtopology(sid, self._resolve(raw_nodes), line.number))
        description = TopologyDescription(tuple(subtopologies), tuple(global_stores), self.source, header_line,
                                          self.lines[-1].number if self.lines else header_line)
        self._check_unique(description)
        return description

    def _nodes(self, header: _Line) -> list[_RawNode]:
        nodes: list[_RawNode] = []
        while (line := self._peek()) is not None and line.text.strip():
            body = line.text.lstrip(" ")
            indent = self._indent(line.text)
            if body.startswith("Sub-topology:"):
                break
            kind = next((k for k in _NODE_KINDS if body.startswith(k)), None)
            if kind is None:
                if body.startswith(_ARROWS):
                    self.fail(line.number, f"unexpected arrow {body[:3]!r}: expected 'Source:', 'Processor:' or "
                                           "'Sink:' (each node prints its own arrows right below it)")
                self.fail(line.number, f"expected 'Source:', 'Processor:' or 'Sink:' (a node of sub-topology at line "
                                       f"{header.number}), got {_clip(body)!r}")
            if indent != 4:
                self.fail(line.number, f"indentation broken: expected 4 spaces before {kind.strip()!r}, got {indent}")
            self.pos += 1
            nodes.append(self._node(kind.rstrip(": "), body[len(kind):], line.number))
        if not nodes:
            where = self._peek()
            self.fail(where.number if where else self._end_line(),
                      f"expected a 'Source:', 'Processor:' or 'Sink:' line: sub-topology at line {header.number} "
                      "has no node")
        return nodes

    def _arrow(self, arrow: str, node: str, node_line: int) -> tuple[str, int]:
        line = self._peek()
        what = "successors" if arrow == "-->" else "predecessors"
        if line is None or not line.text.strip():
            self.fail(line.number if line else self._end_line(),
                      f"expected '{arrow} ...' listing the {what} of {node!r} (line {node_line})")
        body = line.text.lstrip(" ")
        indent = self._indent(line.text)
        if not (body.startswith(arrow + " ") and len(body) > 4):
            self.fail(line.number, f"expected '{arrow} ...' listing the {what} of {node!r} (line {node_line}), "
                                   f"got {_clip(body)!r}")
        if indent != 6:
            self.fail(line.number, f"indentation broken: expected 6 spaces before '{arrow}', got {indent}")
        self.pos += 1
        return body[4:], line.number

    def _node(self, kind: str, rest: str, number: int) -> _RawNode:
        if kind == "Source":
            name, topics, pattern = self._source_spec(rest, number)
            succ, succ_line = self._arrow("-->", name, number)
            return _RawNode(kind, name, number, topics=topics, pattern=pattern, successors_text=succ,
                            successors_line=succ_line)
        if kind == "Processor":
            name, stores = self._processor_spec(rest, number)
            succ, succ_line = self._arrow("-->", name, number)
            pred, pred_line = self._arrow("<--", name, number)
            return _RawNode(kind, name, number, stores=stores, successors_text=succ, successors_line=succ_line,
                            predecessors_text=pred, predecessors_line=pred_line)
        name, topic, extractor = self._sink_spec(rest, number)
        pred, pred_line = self._arrow("<--", name, number)
        return _RawNode(kind, name, number, topic=topic, extractor=extractor, predecessors_text=pred,
                        predecessors_line=pred_line)

    def _source_spec(self, rest: str, number: int) -> tuple[str, tuple[str, ...], str | None]:
        key = " (topics: "
        starts = _occurrences(rest, key)
        if not rest.endswith(")") or not starts:
            self.fail(number, "expected 'Source: NAME (topics: [TOPIC, ...])' or 'Source: NAME (topics: PATTERN)', "
                              f"got {_clip('Source: ' + rest)!r}")
        for start in reversed(starts):
            topics = _topic_list(rest[start + len(key):-1])
            if topics is not None and start > 0:
                return rest[:start], topics, None
        start = starts[0]
        pattern = rest[start + len(key):-1]
        if start == 0 or not pattern:
            self.fail(number, f"expected 'Source: NAME (topics: ...)' with a name and topics, got {_clip(rest)!r}")
        if pattern == "[]":
            self.fail(number, "expected at least one topic: a source reads topics or a pattern, got 'topics: []'")
        return rest[:start], (), pattern

    def _processor_spec(self, rest: str, number: int) -> tuple[str, tuple[str, ...]]:
        key = " (stores: ["
        starts = _occurrences(rest, key)
        if not rest.endswith("])") or not starts or starts[-1] == 0:
            self.fail(number, f"expected 'Processor: NAME (stores: [STORE, ...])', got {_clip('Processor: ' + rest)!r}")
        start = starts[-1]
        inner = rest[start + len(key):-2]
        stores = tuple(inner.split(", ")) if inner else ()
        if any(not s for s in stores) or len(set(stores)) != len(stores):
            self.fail(number, f"expected a list of distinct store names, got [{_clip(inner)}]")
        return rest[:start], stores

    def _sink_spec(self, rest: str, number: int) -> tuple[str, str | None, str | None]:
        usage = ("expected 'Sink: NAME (topic: TOPIC)' or 'Sink: NAME (extractor class: CLASS)', "
                 f"got {_clip('Sink: ' + rest)!r}")
        if not rest.endswith(")"):
            self.fail(number, usage)
        extractor_at = rest.find(" (extractor class: ")
        if extractor_at > 0:
            extractor = rest[extractor_at + len(" (extractor class: "):-1]
            if extractor:
                return rest[:extractor_at], None, extractor
        starts = _occurrences(rest, " (topic: ")
        if not starts or starts[-1] == 0 or len(rest) - starts[-1] <= len(" (topic: )"):
            self.fail(number, usage)
        return rest[:starts[-1]], rest[starts[-1] + len(" (topic: "):-1], None

    # -- arrows
    def _resolve(self, raw: list[_RawNode]) -> tuple[Node, ...]:
        names: dict[str, _RawNode] = {}
        for r in raw:
            if r.name in names:
                self.fail(r.line, f"duplicate node name {r.name!r} (first at line {names[r.name].line})")
            names[r.name] = r
        succ: dict[str, tuple[str, ...]] = {}
        pred: dict[str, tuple[str, ...]] = {}
        for r in raw:
            if r.successors_text is not None:
                succ[r.name] = self._names(r.successors_text, r, names, "predecessors_text", r.successors_line)
            if r.predecessors_text is not None:
                pred[r.name] = self._names(r.predecessors_text, r, names, "successors_text", r.predecessors_line)
        for r in raw:
            for target in succ.get(r.name, ()):
                if target not in pred or r.name not in pred[target]:
                    self.fail(r.successors_line, f"{r.name!r} lists {target!r} as a successor but {target!r} (line "
                                                 f"{names[target].line}) does not list {r.name!r} as a predecessor")
            for origin in pred.get(r.name, ()):
                if origin not in succ or r.name not in succ[origin]:
                    self.fail(r.predecessors_line, f"{r.name!r} lists {origin!r} as a predecessor but {origin!r} (line "
                                                   f"{names[origin].line}) does not list {r.name!r} as a successor")
        nodes: list[Node] = []
        for r in raw:
            if r.kind == "Source":
                nodes.append(SourceNode(r.name, r.topics, r.pattern, succ[r.name], r.line))
            elif r.kind == "Processor":
                nodes.append(ProcessorNode(r.name, r.stores, pred[r.name], succ[r.name], r.line))
            else:
                nodes.append(SinkNode(r.name, r.topic, r.extractor, pred[r.name], r.line))
        return tuple(nodes)

    def _names(self, text: str, node: _RawNode, names: Mapping[str, _RawNode], reverse: str,
               number: int) -> tuple[str, ...]:
        if text == "none":
            other = names.get("none")
            if other is None or other is node:
                return ()
            reverse_text = getattr(other, reverse)
            confirmed = reverse_text is not None and node.name in (_segment(reverse_text, names) or ())
            return ("none",) if confirmed else ()
        result = _segment(text, names)
        if result is None:
            unknown = next((p for p in text.split(", ") if p not in names), text)
            self.fail(number, f"arrow to an unknown node {_clip(unknown)!r}: expected names of nodes of this "
                              "sub-topology separated by ', ', or 'none'")
        if node.name in result or len(set(result)) != len(result):
            self.fail(number, f"expected distinct nodes other than {node.name!r} itself, got {_clip(text)!r}")
        return result

    def _global_store(self, sid: int, line: _Line, raw: list[_RawNode]) -> GlobalStore:
        if len(raw) != 2 or raw[0].kind != "Source" or raw[1].kind != "Processor":
            self.fail(raw[0].line if raw[0].kind != "Source" else raw[-1].line,
                      f"expected a global store block (line {line.number}) to hold a Source then a Processor")
        src, proc = raw
        if len(src.topics) != 1:
            self.fail(src.line, "expected the source of a global store to read exactly one topic")
        if len(proc.stores) != 1:
            self.fail(proc.line, "expected the processor of a global store to have exactly one store")
        if src.successors_text != proc.name:
            self.fail(src.successors_line, f"expected '--> {proc.name}' (the global store's processor)")
        if proc.successors_text != "none":
            self.fail(proc.successors_line, "expected '--> none' (a global store's processor has no successor)")
        if proc.predecessors_text != src.name:
            self.fail(proc.predecessors_line, f"expected '<-- {src.name}' (the global store's source)")
        return GlobalStore(sid, SourceNode(src.name, src.topics, None, (proc.name,), src.line),
                           ProcessorNode(proc.name, proc.stores, (src.name,), (), proc.line), line.number)

    def _check_unique(self, d: TopologyDescription) -> None:
        seen: dict[str, int] = {}
        topics: dict[str, int] = {}
        nodes: list[Node] = [n for s in d.subtopologies for n in s.nodes]
        nodes += [n for g in d.global_stores for n in (g.source, g.processor)]
        for n in sorted(nodes, key=lambda n: n.line):
            if n.name in seen:
                self.fail(n.line, f"duplicate node name {n.name!r} (first at line {seen[n.name]}): node names are "
                                  "unique in a topology")
            seen[n.name] = n.line
            if isinstance(n, SourceNode):
                for t in n.topics:
                    if t in topics:
                        self.fail(n.line, f"topic {t!r} is read by two sources (first at line {topics[t]}); Kafka "
                                          "lets one source read a topic")
                    topics[t] = n.line


def _occurrences(text: str, key: str) -> list[int]:
    found: list[int] = []
    start = text.find(key)
    while start >= 0:
        found.append(start)
        start = text.find(key, start + 1)
    return found


def _topic_list(text: str) -> tuple[str, ...] | None:
    """``[a, b]`` as printed by a Java set of topic names, or None if it is not one (then a pattern)."""
    if len(text) < 3 or text[0] != "[" or text[-1] != "]":
        return None
    topics = tuple(text[1:-1].split(", "))
    if all(_TOPIC_NAME.fullmatch(t) for t in topics) and len(set(topics)) == len(topics):
        return topics
    return None


def _segment(text: str, names: Mapping[str, object]) -> tuple[str, ...] | None:
    """Split an arrow list into declared node names (names may themselves contain ', ')."""
    simple = text.split(", ")
    if all(p in names for p in simple):
        return tuple(simple)
    # reachable[i]: the name ending a segmentation of text[:i]; filled left to right
    back: dict[int, str] = {0: ""}
    size = len(text)
    for i in range(size + 1):
        if i not in back:
            continue
        start = i if i == 0 else i + 2
        if i > 0 and (i == size or not text.startswith(", ", i)):
            continue
        for name in names:
            end = start + len(name)
            fits = end == size or text.startswith(", ", end)
            if name and fits and end not in back and text.startswith(name, start):
                back[end] = name
    if size not in back:
        return None
    parts: list[str] = []
    end = size
    while end > 0:
        name = back[end]
        parts.append(name)
        end -= len(name)
        if end > 0:
            end -= 2
    return tuple(reversed(parts))


def _clip(text: str, size: int = 80) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."


def format_topology_description(description: TopologyDescription) -> str:
    """The text Kafka prints for this description (``TopologyDescription.toString()``), byte for byte
    when the description was parsed from Kafka's text (printed orders are kept)."""
    items: list[tuple[int, str]] = []
    for sub in description.subtopologies:
        body = "".join(f"    {_format_node(n)}\n" for n in sub.nodes)
        items.append((sub.id, f"Sub-topology: {sub.id}\n{body}\n"))
    for g in description.global_stores:
        items.append((g.id, f"Sub-topology: {g.id}{GLOBAL_SUFFIX}\n    {_format_node(g.source)}\n"
                            f"    {_format_node(g.processor)}\n"))
    return "Topologies:\n " + "".join(f"  {text}" for _, text in sorted(items, key=lambda item: item[0]))


def _format_node(node: Node) -> str:
    def names(values: tuple[str, ...]) -> str:
        return ", ".join(values) if values else "none"

    if isinstance(node, SourceNode):
        topics = node.pattern if node.pattern is not None else f"[{', '.join(node.topics)}]"
        return f"Source: {node.name} (topics: {topics})\n      --> {names(node.successors)}"
    if isinstance(node, ProcessorNode):
        return (f"Processor: {node.name} (stores: [{', '.join(node.stores)}])\n      --> {names(node.successors)}"
                f"\n      <-- {names(node.predecessors)}")
    target = f"topic: {node.topic}" if node.topic is not None else f"extractor class: {node.extractor}"
    return f"Sink: {node.name} ({target})\n      <-- {names(node.predecessors)}"


# ---------------------------------------------------------------------------------------------- inference


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
