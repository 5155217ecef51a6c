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

The derivation of a group file's topology from it is ``capture.topology_inference``.

Errors raise :class:`TopologyTextError` (a :class:`~taskassign.errors.UserInputError`) naming the line (in
the original text, 1-based) and what was expected there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, NoReturn

from taskassign.errors import TopologyTextError

__all__ = (
    "GlobalStore",
    "Node",
    "ProcessorNode",
    "SinkNode",
    "SourceNode",
    "Subtopology",
    "TopologyDescription",
    "TopologyTextError",
    "format_topology_description",
    "parse_topology_description",
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
