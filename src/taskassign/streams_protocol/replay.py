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

Members still reconciling (4.4+). From 4.4 the coordinator hands the assignor each member's *reconciled*
tasks (``StreamsGroupMember#assignedTasks``, what StreamsGroupDescribe reports as its current assignment), not
its previous target (``TargetAssignmentBuilder#createMemberMetadataAndState``). A computation made while members
still move towards the previous target starts from tasks the capture never saw: what each member held at that
moment lies between the previous capture's current assignment and its target (``CurrentAssignmentBuilder``: a
member first drops the tasks it must revoke, then takes the tasks of its target that others have released).
And a capture taken while the group epoch is already past the assignment epoch holds members that joined after
the computation (no target yet) or misses members that left after it (a crashed instance's threads expire one
by one). When the direct replay and the offset variants differ, ``_reconciling`` tries each such input: every
member whose current assignment differed from its target either as captured, having revoked, or having also
taken the released tasks of its target (``_reconciled_holdings``, Kafka's release rules); joiners without a
target in or out; departed members in or out. It reports how many candidate inputs reproduce the broker's target
(the capture cannot tell them apart), or, when none does, that the members' held tasks at the computation were
not seen.

Both at once (4.4+). A multi-threaded instance joining or crashing makes one computation per thread, the later
ones while members still reconcile the earlier: ``_unseen_reconciling`` groups the membership changes as
``_search`` does, computes the first from the previous capture's current assignments and each later one from
every holding the members may have reached after the one before, within ``MAX_RECONCILING_INPUTS`` computations.

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
from taskassign.streams_protocol.model import EMPTY_TASKS, GroupMember, StreamsGroup, TaskMap, task_map, task_name

__all__ = ("MAX_RECONCILING_INPUTS", "MAX_SEARCH_CHANGES", "RECONCILING_NOTE", "EpochReplay", "MemberDifference",
           "replay_history", "replay_line", "replay_step")

MAX_SEARCH_CHANGES = 5
#: At most this many candidate inputs (members' held tasks x membership x task offsets) for a 4.4+ computation
#: made while members still reconciled (``_reconciling``); beyond it the replay says so instead of searching.
MAX_RECONCILING_INPUTS = 6000
#: How a note of an epoch replayed from the tasks members held mid-reconciliation begins.
RECONCILING_NOTE = "replayed with the tasks members held mid-reconciliation"

Targets = dict[str, tuple[TaskMap, TaskMap]]
#: Each member's held (or target) active and standby tasks, as (subtopology, partition) pairs.
Holding = dict[str, tuple[frozenset[tuple[str, int]], frozenset[tuple[str, int]]]]


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
    capture is reported; else, on a 4.4+ line, the inputs of members still reconciling (``_reconciling``); else
    the first's differences. ``kafka_line`` replays another line than the captured broker's (``replay_line``)."""
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
        else:
            if previous is not None and _reads_reconciled(line):
                single = _reconciling(previous, current, variants, first, line)
                first = single if single.matches else _unseen_reconciling(previous, current, variants, first,
                                                                           single, line)
    return dataclasses.replace(first, kafka_version=line, notes=(*notes, *first.notes))


def _reads_reconciled(line: str) -> bool:
    """Whether Kafka ``line`` hands the assignor the members' reconciled tasks (4.4 and later)."""
    try:
        return sticky_revision(line).member_tasks == sticky_revision("4.4").member_tasks
    except StreamsProtocolError:
        return False


def _current(group: StreamsGroup, member_id: str) -> tuple[TaskMap, TaskMap] | None:
    """A member's current (reconciled) assignment as the capture recorded it; None when not recorded."""
    entry = ((group.capture or {}).get("members") or {}).get(member_id)
    current = entry.get("currentAssignment") if isinstance(entry, Mapping) else None
    if not isinstance(current, Mapping):
        return None
    maps = []
    for key in ("activeTasks", "standbyTasks"):
        tasks = current.get(key) or {}
        if not isinstance(tasks, Mapping):
            return None
        maps.append(task_map((str(s), int(p)) for s, parts in tasks.items() for p in parts))
    return maps[0], maps[1]


def _pairs(tasks: TaskMap) -> frozenset[tuple[str, int]]:
    return frozenset((s, p) for s, parts in tasks.items() for p in parts)


def _subsets(items: Sequence[str]) -> list[tuple[str, ...]]:
    return [c for k in range(len(items) + 1) for c in itertools.combinations(items, k)]


def _held_states(previous: StreamsGroup, ids: Sequence[str], limit: int) -> list[Targets] | None:
    """Every input of held tasks the members ``ids`` of ``previous`` may have had at the next computation: each
    member whose captured current assignment differs from its target as captured, having revoked, or having
    also taken what was released (``_reconciled_holdings``). None when the capture has no current assignments;
    empty when there would be more than ``limit``."""
    by_id = {m.member_id: m for m in previous.members}
    held: Holding = {}
    target: Holding = {}
    for mid in ids:
        current = _current(previous, mid)
        if current is None:
            return None
        held[mid] = (_pairs(current[0]), _pairs(current[1]))
        target[mid] = (_pairs(by_id[mid].active_tasks), _pairs(by_id[mid].standby_tasks))
    process = {mid: by_id[mid].process_id for mid in ids}
    return [_as_targets(holding) for holding in _reconciled_holdings(held, target, process, limit)]


def _reconciling(previous: StreamsGroup, current: StreamsGroup, variants: list[tuple[str | None, StreamsGroup]],
                 first: EpochReplay, line: str) -> EpochReplay:
    """A 4.4+ computation from the tasks members held while still reconciling (see the module's docstring): how
    many candidate inputs reproduce the capture, or what the replay could not see."""
    now = {m.member_id: m for m in current.members}
    was = {m.member_id: m for m in previous.members}
    capture = current.capture or {}
    group_epoch, epoch = capture.get("groupEpoch"), _assignment_epoch(current)
    ahead = isinstance(group_epoch, int) and epoch is not None and group_epoch > epoch
    departed = [mid for mid in was if mid not in now] if ahead else []
    late = ([mid for mid in now if mid not in was and not now[mid].active_tasks and not now[mid].standby_tasks]
            if ahead else [])
    memberships = [(d, j) for d in _subsets(departed) for j in _subsets(late)]
    kept = [mid for mid in was if mid in now]
    notes = list(first.notes)
    limit = MAX_RECONCILING_INPUTS // (len(memberships) * len(variants))
    states = _held_states(previous, [*kept, *departed], limit)
    if states is None:
        return first
    if not states:
        notes.append("the tasks members held when the broker computed were not seen: members were still "
                     "reconciling (4.4+ hands the assignor their reconciled tasks), and the inputs the captures "
                     f"allow are too many to try (more than {MAX_RECONCILING_INPUTS})")
        return dataclasses.replace(first, notes=tuple(notes))
    fits: list[tuple[tuple[str, ...], tuple[str, ...], str | None, Targets]] = []
    for held in states:
        for gone, joined in memberships:
            for label, group in variants:  # an input fits with the first offsets that reproduce
                members = [m for m in group.members if m.member_id not in joined] + [was[mid] for mid in gone]
                try:
                    computed = _compute(group, members, held, line)
                except StreamsAssignorError:
                    continue
                if not _differences(current, computed):
                    fits.append((gone, joined, label, held))
                    break
    inputs = len(states) * len(memberships)
    if not fits:
        notes.append(f"the tasks members held when the broker computed were not seen: members were still "
                     f"reconciling (4.4+ hands the assignor their reconciled tasks, not their previous targets) and "
                     f"none of {inputs} candidate inputs between the previous capture's current assignments and its "
                     f"targets{' (and members joining or leaving after the computation)' if ahead else ''} "
                     f"reproduces the broker's target, with any of {len(variants)} sets of task offsets")
        return dataclasses.replace(first, notes=tuple(notes))
    gone, joined, label, held = fits[0]
    moved = [mid for mid in held if (_current(previous, mid) or (EMPTY_TASKS, EMPTY_TASKS)) != held[mid]]
    parts = [f"(4.4+ hands the assignor their reconciled tasks): "
             f"{len(fits)} of {inputs} candidate inputs reproduce the broker's target"]
    if moved:
        parts.append("moved on since the previous capture: " + ", ".join(
            f"{mid} held {', '.join(sorted(_names(held[mid][0]) | _names(held[mid][1]))) or 'nothing'}"
            for mid in moved))
    if gone:
        parts.append(f"still in the group at the computation (left after it): {', '.join(gone)}")
    if joined:
        parts.append(f"not yet in the group at the computation (joined after it): {', '.join(joined)}")
    if label is not None:
        parts.append(f"with {label}")
    notes.append(RECONCILING_NOTE + " " + "; ".join(parts))
    return EpochReplay(current.name, first.epoch, first.previous_epoch, first.members, True, (),
                       ("one computation",), tuple(notes))


def _reconciled_holdings(held: Holding, target: Holding, process: Mapping[str, str], limit: int) -> list[Holding]:
    """What the members may hold at the next computation, after the coordinator computed ``target`` while they
    held ``held``: each member that differs from its target either not yet reconciled, having revoked (its
    active tasks cut to the target; a demoted active or a standby the target keeps stays a standby, a standby
    promoted to active kept until the active is granted), or having also taken what was released
    (``CurrentAssignmentBuilder#computeNextAssignment``: an active task once no other member holds it active, a
    standby once no other member of its process holds it, the promoted standby then dropped). Distinct holdings,
    in that order; empty when there would be more than ``limit``."""
    ids = list(held)
    moving = [mid for mid in ids if held[mid] != target[mid]]
    if 3 ** len(moving) > limit:
        return []
    out: list[Holding] = []
    seen: set[tuple[tuple[str, frozenset[tuple[str, int]], frozenset[tuple[str, int]]], ...]] = set()
    for choice in itertools.product(range(3), repeat=len(moving)):
        stage = dict(zip(moving, choice, strict=True))
        now: dict[str, list[set[tuple[str, int]]]] = {}
        for mid in ids:
            (ha, hs), (ta, ts) = held[mid], target[mid]
            revoked = [set(ha & ta), set((hs & ts) | (ha & ts) | (hs & ta))]
            now[mid] = revoked if stage.get(mid, 0) else [set(ha), set(hs)]
        for mid in moving:
            if stage[mid] < 2:
                continue
            ta, ts = target[mid]
            actives = set().union(*(now[o][0] for o in ids if o != mid))
            local = set().union(*(now[o][0] | now[o][1] for o in ids if o != mid and process[o] == process[mid]))
            granted = {t for t in ta - now[mid][0] if t not in actives}
            now[mid][0] |= granted
            now[mid][1] -= granted - ts
            now[mid][1] |= {t for t in ts - now[mid][1] if t not in local}
        key = tuple((mid, frozenset(now[mid][0]), frozenset(now[mid][1])) for mid in ids)
        if key not in seen:
            seen.add(key)
            out.append({mid: (frozenset(now[mid][0]), frozenset(now[mid][1])) for mid in ids})
    return out


def _as_targets(holding: Holding) -> Targets:
    return {mid: (task_map(active), task_map(standby)) for mid, (active, standby) in holding.items()}


def _too_many(single: EpochReplay) -> EpochReplay:
    return dataclasses.replace(single, notes=(*single.notes, (
        "through epochs the capture did not see, the inputs of members still reconciling are too many to try "
        f"(more than {MAX_RECONCILING_INPUTS} computations)")))


def _unseen_reconciling(previous: StreamsGroup, current: StreamsGroup,
                        variants: list[tuple[str | None, StreamsGroup]], first: EpochReplay, single: EpochReplay,
                        line: str) -> EpochReplay:
    """4.4+: the membership changes grouped into computations the capture did not see (as ``_search``), each
    computed from the tasks the members held then: the first from the previous capture's current assignments,
    every later one from a holding ``_reconciled_holdings`` allows after the one before (a joiner holding nothing
    or what it was granted). At most ``MAX_RECONCILING_INPUTS`` computations; ``single``: the one-computation
    answer, returned (with a note) when no sequence reproduces the capture."""
    epoch, prev_epoch = _assignment_epoch(current), _assignment_epoch(previous)
    gap = None if epoch is None or prev_epoch is None else epoch - prev_epoch
    now_ids = {m.member_id for m in current.members}
    was = {m.member_id: m for m in previous.members}
    changes = [f"+{m.member_id}" for m in current.members if m.member_id not in was] + \
              [f"-{mid}" for mid in was if mid not in now_ids]
    if not 1 < len(changes) <= MAX_SEARCH_CHANGES or (gap is not None and gap < 2):
        return single
    start: Holding = {}
    for mid in was:
        reconciled = _current(previous, mid)
        if reconciled is None:
            return single
        start[mid] = (_pairs(reconciled[0]), _pairs(reconciled[1]))
    runs = 0
    for label, group in variants:  # the first offsets with which a sequence reproduces the capture
        by_id = {m.member_id: m for m in group.members}
        fits: list[list[list[str]]] = []
        tried = 0
        for blocks in _ordered_partitions(changes):
            if len(blocks) < 2 or (gap is not None and len(blocks) > gap):
                continue
            members = {mid: by_id.get(mid, m) for mid, m in was.items()}
            frontier = [start]
            for index, block in enumerate(blocks):
                for change in block:
                    if change[0] == "+":
                        members[change[1:]] = by_id[change[1:]]
                    else:
                        members.pop(change[1:], None)
                following: list[Holding] = []
                process = {mid: m.process_id for mid, m in members.items()}
                for holding in frontier:
                    held = {mid: holding.get(mid, (frozenset(), frozenset())) for mid in members}
                    runs += 1
                    if runs > MAX_RECONCILING_INPUTS:
                        return _too_many(single)
                    try:
                        computed = _compute(group, list(members.values()), _as_targets(held), line)
                    except StreamsAssignorError:
                        continue
                    if index == len(blocks) - 1:
                        tried += 1
                        if not _differences(current, computed):
                            fits.append(blocks)
                        continue
                    target = {mid: (_pairs(computed[mid][0]), _pairs(computed[mid][1])) for mid in members}
                    holdings = _reconciled_holdings(held, target, process, MAX_RECONCILING_INPUTS - runs)
                    if not holdings:
                        return _too_many(single)
                    following += holdings
                frontier = following
        if fits:
            blocks = fits[0]
            steps = tuple(", ".join(("joined " if c[0] == "+" else "left ") + c[1:] for c in block)
                          for block in blocks)
            note = (f"{RECONCILING_NOTE} through epochs the capture did not see (4.4+ hands the assignor their "
                    f"reconciled tasks): the broker computed {len(blocks)} times between the two captures, members "
                    f"reconciling in between; {len(fits)} of {tried} candidate sequences reproduce the broker's "
                    "target")
            if label is not None:
                note += f"; with {label}"
            return EpochReplay(current.name, first.epoch, first.previous_epoch, first.members, True, (), steps,
                               (*first.notes, note))
    return dataclasses.replace(single, notes=(*single.notes, (
        f"nor does any grouping of the {len(changes)} membership changes into computations the capture did not "
        "see, each from the tasks members held while reconciling the one before")))


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
