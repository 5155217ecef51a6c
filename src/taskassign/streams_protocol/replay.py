"""Replaying a streams group's broker-side assignor against captured target assignments.

Under the streams protocol the coordinator recomputes the target assignment when the group epoch moves: its
assignor gets the members of the new epoch, each with its *previous target* assignment (new members: none),
the topology and the group's configs, and its answer becomes the target of the new assignment epoch. A capture
(``taskassign capture``) records one epoch's targets; two captures of one group, in epoch order, let the
assignor be checked: from the earlier epoch's targets and the later epoch's membership, the assignor must
compute the later targets exactly, member by member.

Epochs the capture did not see. The assignment epoch may move more than once between two captures (members
joined or left one at a time, and each change made its own computation), and a 4.3+ broker batches
computations (at most one per ``group.streams.assignment.interval.ms``), so several changes may make one.
When the direct replay (all changes in one computation) differs, the replay tries every way the membership
changes can have been grouped into successive computations (up to ``MAX_SEARCH_CHANGES`` changes, which
keeps the search under a few thousand runs) and reports the first sequence that reproduces the capture.
A first capture has no previous state: it is replayed from nothing, which matches only when the group's
first computation saw every member (Kafka's initial rebalance delay, ``group.streams.initial.rebalance.
delay.ms``, lets them join first).

Task offsets. From 4.4 the coordinator also passes each member's reported task offsets (and gives the
assignor the members' reconciled tasks, equal to the previous targets once a capture has settled), and the
sticky assignor prefers a member holding a task's state. A member reports its offsets when it joins and again
whenever its reconciled assignment changes, so a capture taken after the rebalance holds offsets newer than
the ones the broker computed with. When the capture's own offsets do not reproduce the targets, the replay
tries the previous capture's offsets for the members it holds, with the captured offsets or none for the
members that joined since (``_offset_variants``), and says which reproduced. Intermediate computations of
the search are fed the previous step's targets as if the members had reconciled them.

Warm-up tasks are not part of the modelled assignors' answer: recorded warm-ups are reported, not compared.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from taskassign.errors import StreamsAssignorError
from taskassign.streams_protocol.assignors import STREAMS_ASSIGNORS, run_assignor
from taskassign.streams_protocol.lines import DEFAULT_STREAMS_LINE, StreamsProtocolError, sticky_revision
from taskassign.streams_protocol.model import EMPTY_TASKS, GroupMember, StreamsGroup, TaskMap, task_name

__all__ = ("MAX_SEARCH_CHANGES", "EpochReplay", "MemberDifference", "replay_history", "replay_line", "replay_step")

MAX_SEARCH_CHANGES = 5

Targets = dict[str, tuple[TaskMap, TaskMap]]


@dataclass(frozen=True, slots=True)
class MemberDifference:
    member_id: str
    kind: str  # "active" or "standby"
    missing: tuple[str, ...]  # recorded by the broker, not computed
    extra: tuple[str, ...]  # computed, not recorded

    def __str__(self) -> str:
        parts = []
        if self.missing:
            parts.append(f"broker has {', '.join(self.missing)}")
        if self.extra:
            parts.append(f"replay has {', '.join(self.extra)}")
        return f"{self.member_id} {self.kind}: {'; '.join(parts)}"


@dataclass(frozen=True, slots=True)
class EpochReplay:
    """One captured epoch replayed: ``matches`` when the assignor's targets equal the broker's for every member.
    ``steps``: the computations replayed (one = direct; more = through epochs the capture did not see, each
    step naming the membership change it took)."""

    name: str
    epoch: int | None
    previous_epoch: int | None
    members: int
    matches: bool
    differences: tuple[MemberDifference, ...]
    steps: tuple[str, ...]
    notes: tuple[str, ...]
    error: str | None = None
    #: The Kafka line whose assignor was replayed (``--kafka-version``, else the captured broker's, else the
    #: file's ``kafka.version``, else the newest line).
    kafka_version: str = DEFAULT_STREAMS_LINE


def _assignment_epoch(group: StreamsGroup) -> int | None:
    value = (group.capture or {}).get("assignmentEpoch")
    return value if isinstance(value, int) else None


def _release_line(group: StreamsGroup) -> str | None:
    value = (group.capture or {}).get("brokerReleaseLine")
    return value if isinstance(value, str) else None


def replay_line(group: StreamsGroup, override: str | None = None) -> tuple[str, str]:
    """The line to replay ``group`` on and where it comes from: ``override`` (``--kafka-version``), else the
    captured broker's line, else the file's ``kafka.version``, else the newest line."""
    if override is not None:
        return override, "--kafka-version"
    captured = _release_line(group)
    if captured is not None:
        return captured, "the captured broker's line"
    configured = group.configs.get("kafka.version")
    if isinstance(configured, str):
        return configured, "the file's kafka.version"
    return DEFAULT_STREAMS_LINE, "the newest line (the capture does not name the broker's)"


def _run(group: StreamsGroup, line: str) -> Targets:
    """The group's assignor as the release line ``line`` runs it."""
    result = run_assignor(group, kafka_line=line)
    return {mid: (a.active_tasks, a.standby_tasks) for mid, a in result.members.items()}


def _with_targets(member: GroupMember, targets: Targets) -> GroupMember:
    active, standby = targets.get(member.member_id, (EMPTY_TASKS, EMPTY_TASKS))
    return dataclasses.replace(member, active_tasks=active, standby_tasks=standby, warmup_tasks=EMPTY_TASKS)


def _compute(group: StreamsGroup, members: Sequence[GroupMember], targets: Targets, line: str) -> Targets:
    return _run(dataclasses.replace(group, members=tuple(_with_targets(m, targets) for m in members)), line)


def _names(tasks: TaskMap) -> set[str]:
    return {task_name(sid, p) for sid, parts in tasks.items() for p in parts}


def _differences(recorded: StreamsGroup, computed: Targets) -> tuple[MemberDifference, ...]:
    out: list[MemberDifference] = []
    for m in recorded.members:
        active, standby = computed.get(m.member_id, (EMPTY_TASKS, EMPTY_TASKS))
        for kind, want, got in (("active", m.active_tasks, active), ("standby", m.standby_tasks, standby)):
            w, g = _names(want), _names(got)
            if w != g:
                out.append(MemberDifference(m.member_id, kind, tuple(sorted(w - g)), tuple(sorted(g - w))))
    return tuple(out)


def _ordered_partitions(items: Sequence[str]) -> Iterator[list[list[str]]]:
    """Every ordered set partition of ``items`` (blocks in order), fewest blocks first."""
    n = len(items)
    for blocks in range(1, n + 1):
        for labels in itertools.product(range(blocks), repeat=n):
            if len(set(labels)) == blocks:
                yield [[items[i] for i in range(n) if labels[i] == b] for b in range(blocks)]


def _reads_offsets(group: StreamsGroup, line: str) -> bool:
    """Whether the group's assignor, on ``line``, reads task offsets (the sticky assignor from 4.4; an unknown
    line or assignor: assumed to)."""
    if group.assignor not in STREAMS_ASSIGNORS:
        return True
    if group.assignor != "sticky":
        return False
    try:
        return sticky_revision(line).task_offsets
    except StreamsProtocolError:
        return True


def _offset_variants(previous: StreamsGroup | None, current: StreamsGroup,
                     line: str) -> list[tuple[str | None, StreamsGroup]]:
    """``current`` with each set of task offsets the broker may have held when it computed (4.4+ passes them to
    the assignor): first the capture's own (label None); then the members of the previous capture with their
    offsets from it, and the members new since then with their captured offsets or none. A member reports its
    offsets when it joins and again each time its reconciled assignment changes (``StreamsGroupHeartbeat
    RequestManager``), so offsets captured after a rebalance postdate the computation: they name the state the
    new assignment created. The coordinator computed with the previous capture's offsets (the members had not
    reconciled yet) and, for a joining member, the offsets of its join (a fresh instance: none). Variants equal
    to an earlier one are dropped."""
    variants: list[tuple[str | None, StreamsGroup]] = [(None, current)]
    if previous is None or not _reads_offsets(current, line):
        return variants
    before = {m.member_id: m.task_offsets for m in previous.members}
    empty: Mapping[str, Mapping[int, int]] = {}
    for old, new in ((True, False), (True, True), (False, True)):
        members = tuple(dataclasses.replace(m, task_offsets=(before[m.member_id] if old else m.task_offsets)
                                            if m.member_id in before else (empty if new else m.task_offsets))
                        for m in current.members)
        if any(all(a.task_offsets == b.task_offsets for a, b in zip(members, g.members, strict=True))
               for _, g in variants):
            continue
        label = " and ".join(part for part, on in (
            ("the previous capture's task offsets for the members it holds", old),
            ("no task offsets for the members that joined since", new)) if on)
        variants.append((label, dataclasses.replace(current, members=members)))
    return variants


def replay_step(previous: StreamsGroup | None, current: StreamsGroup, kafka_line: str | None = None) -> EpochReplay:
    """Replay the computation(s) from ``previous``'s targets (None: nothing) to ``current``'s, with the task
    offsets of ``current``, else those of ``previous`` (``_offset_variants``); the first that reproduces the
    capture is reported, else the first's differences. ``kafka_line`` replays another line than the captured
    broker's (``replay_line``)."""
    line, source = replay_line(current, kafka_line)
    notes = () if source == "the captured broker's line" else (f"replayed as Kafka {line}: {source}",)
    variants = _offset_variants(previous, current, line)
    first = _replay_step(previous, current, line)
    if not (first.matches or first.error is not None):
        for label, group in variants[1:]:
            result = _replay_step(previous, group, line)
            if result.matches:
                first = dataclasses.replace(result, notes=(*result.notes, f"replayed with {label}"))
                break
    return dataclasses.replace(first, kafka_version=line, notes=(*notes, *first.notes))


def _replay_step(previous: StreamsGroup | None, current: StreamsGroup, line: str) -> EpochReplay:
    """Replay the computation(s) from ``previous``'s targets (None: nothing) to ``current``'s."""
    epoch, prev_epoch = _assignment_epoch(current), (None if previous is None else _assignment_epoch(previous))
    notes: list[str] = []
    warmups = sum(len(_names(m.warmup_tasks)) for m in current.members)
    if warmups:
        notes.append(f"the broker's target holds {warmups} warm-up task(s): placed outside the modelled assignor, "
                     "not compared")
    before: Targets = ({} if previous is None else
                       {m.member_id: (m.active_tasks, m.standby_tasks) for m in previous.members})
    try:
        direct = _compute(current, current.members, before, line)
    except StreamsAssignorError as exc:
        return EpochReplay(current.name, epoch, prev_epoch, len(current.members), False, (), (), tuple(notes),
                           f"{exc.java_type}: {exc.message}")
    differences = _differences(current, direct)
    if not differences:
        return EpochReplay(current.name, epoch, prev_epoch, len(current.members), True, (), ("one computation",),
                           tuple(notes))
    gap = None if epoch is None or prev_epoch is None else epoch - prev_epoch
    now = {m.member_id: m for m in current.members}
    was = {} if previous is None else {m.member_id: m for m in previous.members}
    changes = [f"+{mid}" for mid in now if mid not in was] + [f"-{mid}" for mid in was if mid not in now]
    searchable = 1 < len(changes) <= MAX_SEARCH_CHANGES and (gap is None or gap > 1)
    if searchable:
        found = _search(previous, current, before, changes, line, gap)
        if found is not None:
            notes.append(f"the broker computed {len(found)} times between the two captures (epochs the capture did "
                         "not see); replayed in that order")
            return EpochReplay(current.name, epoch, prev_epoch, len(current.members), True, (), tuple(found),
                               tuple(notes))
    if previous is None:
        found = _first_epoch(current, line)
        if found is not None:
            notes.append(f"no previous capture: the members joined in their client ids' order, {len(found)} "
                         "computations (epochs the capture did not see)")
            return EpochReplay(current.name, epoch, prev_epoch, len(current.members), True, (), tuple(found),
                               tuple(notes))
        notes.append("no previous capture: replayed from nothing; the group may have computed targets before this "
                     f"epoch{f' (assignment epoch {epoch})' if epoch else ''} that the capture did not see")
    elif gap is not None and gap > 1:
        notes.append(f"{gap - 1} epoch(s) between the captures were not seen"
                     + ("" if searchable else f" and {len(changes)} membership change(s) are too many to search "
                                                  f"(at most {MAX_SEARCH_CHANGES})"))
    return EpochReplay(current.name, epoch, prev_epoch, len(current.members), False, differences,
                       ("one computation",), tuple(notes))


def _search(previous: StreamsGroup | None, current: StreamsGroup, before: Targets, changes: list[str],
            line: str, gap: int | None) -> list[str] | None:
    now = {m.member_id: m for m in current.members}
    start = [] if previous is None else [now.get(m.member_id, m) for m in previous.members]
    for blocks in _ordered_partitions(changes):
        if len(blocks) < 2 or (gap is not None and len(blocks) > gap):
            continue
        members = {m.member_id: m for m in start}
        targets = before
        for block in blocks:
            for change in block:
                if change[0] == "+":
                    members[change[1:]] = now[change[1:]]
                else:
                    members.pop(change[1:], None)
            targets = _compute(current, list(members.values()), targets, line)
        if not _differences(current, targets):
            return [", ".join(("joined " if c[0] == "+" else "left ") + c[1:] for c in block) for block in blocks]
    return None


def _first_epoch(current: StreamsGroup, line: str) -> list[str] | None:
    """A first capture: the group's members joined from nothing in some order the capture did not see. Tried:
    one join per computation in client id order (Kafka Streams names a thread's client
    ``<client.id>-StreamThread-<n>``, so instances started one after another sort in start order), then one
    computation per process in that order."""
    members = (current.capture or {}).get("members")
    if not isinstance(members, Mapping):
        return None

    def client(m: GroupMember) -> str:
        entry = members.get(m.member_id)
        return str(entry.get("clientId", "")) if isinstance(entry, Mapping) else ""

    ordered = sorted(current.members, key=lambda m: (client(m), m.member_id))
    by_process: dict[str, list[GroupMember]] = {}
    for m in ordered:
        by_process.setdefault(m.process_id, []).append(m)
    for blocks in ([[m] for m in ordered], list(by_process.values())):
        joined: list[GroupMember] = []
        targets: Targets = {}
        for block in blocks:
            joined += block
            targets = _compute(current, joined, targets, line)
        if not _differences(current, targets):
            return ["joined " + ", ".join(client(m) or m.member_id for m in block) for block in blocks]
    return None


def replay_history(groups: Sequence[StreamsGroup], kafka_line: str | None = None) -> list[EpochReplay]:
    """Every capture of one group replayed from the one before it (the first from nothing), in the order
    given (the caller sorts by assignment epoch); ``kafka_line`` as in ``replay_step``."""
    result = []
    previous: StreamsGroup | None = None
    for group in groups:
        result.append(replay_step(previous, group, kafka_line))
        previous = group
    return result


def sort_by_epoch(groups: Mapping[str, StreamsGroup]) -> list[tuple[str, StreamsGroup]]:
    """Captures by assignment epoch (then name)."""
    return sorted(groups.items(), key=lambda item: (_assignment_epoch(item[1]) or 0, item[0]))
