"""Did taskassign's leader send what Kafka's leader sent? Member by member, byte for byte.

A captured group file records the assignment bytes Kafka's leader sent every member. ``taskassign
rebalance`` runs its own leader on the same inputs and compares: a member matches when its bytes are
identical to Kafka's, except for the follow-up deadline, which comes from the leader's clock (when both
sides ask for a follow-up at a time, the time may differ; asking for none, for one at once, or for one
at a time must agree). For a member that differs, the comparison says what differs, from the coarsest
to the finest: the protocol version or error code, the tasks (active, standby), the partitions, the
interactive-query host maps, the follow-up, or only the order of entries (same content, other order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from taskassign.errors import DecodeError
from taskassign.wire.assignment_info import AssignmentInfo
from taskassign.wire.consumer_protocol import Assignment
from taskassign.wire.versions import MIN_NEXT_REBALANCE_VERSION, NO_FOLLOWUP_MS

__all__ = ("SETS_NOTE", "MemberComparison", "OutcomeComparison", "compare_outcome", "compare_outcome_by_client")

#: Why the public StickyTaskAssignor's outcome is compared per client as sets.
SETS_NOTE = ("Kafka's public StickyTaskAssignor visits the stateful tasks for their standbys, and spreads a client's "
             "tasks over its threads, in an order of identity hash codes that changes from run to run: compared per "
             "client as sets (active tasks, whether a follow-up rebalance is asked for), and the standbys over the "
             "whole group (the same standby tasks, as many replicas each, none on its active's client), not byte "
             "for byte")

ORDER_ONLY = "order of entries only"


@dataclass(frozen=True, slots=True)
class MemberComparison:
    """One member: ``matches`` when the bytes agree (the follow-up time aside); else ``differences``
    names what differs, each with Kafka's value and taskassign's."""

    member_id: str
    matches: bool
    differences: tuple[str, ...] = ()
    #: True when both asked for a follow-up at a (different) time: that time is the leader's clock.
    followup_time_differs: bool = False


@dataclass(frozen=True, slots=True)
class OutcomeComparison:
    members: tuple[MemberComparison, ...]
    #: True when ``members`` are clients compared as sets (compare_outcome_by_client), not members' bytes.
    by_client: bool = False

    @property
    def matching(self) -> int:
        return sum(m.matches for m in self.members)

    @property
    def all_match(self) -> bool:
        return all(m.matches for m in self.members)


def compare_outcome(recorded: Mapping[str, bytes], ours: Mapping[str, bytes]) -> OutcomeComparison:
    """Compare Kafka's bytes (``recorded``, per member id) with taskassign's (``ours``): every member of either
    side is listed, in member id order."""
    result = []
    for member in sorted(set(recorded) | set(ours)):
        if member not in ours:
            result.append(MemberComparison(member, False, ("taskassign's leader sent this member nothing",)))
        elif member not in recorded:
            result.append(MemberComparison(member, False, ("Kafka's leader sent this member nothing",)))
        else:
            result.append(_compare_member(member, recorded[member], ours[member]))
    return OutcomeComparison(tuple(result))


def _compare_member(member: str, kafka: bytes, mine: bytes) -> MemberComparison:
    if kafka == mine:
        return MemberComparison(member, True)
    try:
        k_assignment, m_assignment = Assignment.decode(kafka), Assignment.decode(mine)
        k_info = AssignmentInfo.decode(k_assignment.user_data or b"")
        m_info = AssignmentInfo.decode(m_assignment.user_data or b"")
    except DecodeError as exc:
        return MemberComparison(member, False, (f"the bytes do not decode: {exc}",))
    timed = _timed(k_info) and _timed(m_info)
    if timed:
        m_info = replace(m_info, next_rebalance_ms=k_info.next_rebalance_ms)
        mine = replace(m_assignment, user_data=m_info.encode()).encode()
        if kafka == mine:
            return MemberComparison(member, True, followup_time_differs=True)
    differences = _differences(k_assignment, k_info, m_assignment, m_info)
    return MemberComparison(member, False, tuple(differences) or ("the bytes differ (same decoded content)",), timed)


def _timed(info: AssignmentInfo) -> bool:
    return info.version >= MIN_NEXT_REBALANCE_VERSION and info.next_rebalance_ms not in (0, NO_FOLLOWUP_MS)


def _differences(k_asg: Assignment, k: AssignmentInfo, m_asg: Assignment, m: AssignmentInfo) -> list[str]:
    found: list[str] = []
    for label, kv, mv in (("assignment version", k.version, m.version),
                          ("commonly supported version", k.commonly_supported_version, m.commonly_supported_version),
                          ("error code", k.error_code, m.error_code),
                          ("consumer protocol version", k_asg.version, m_asg.version)):
        if kv != mv:
            found.append(f"{label}: Kafka {kv}, taskassign {mv}")
    found += _set_or_order("active tasks", [str(t) for t in k.active_tasks], [str(t) for t in m.active_tasks])
    found += _set_or_order("standby tasks", [f"{t}:{list(p)}" for t, p in k.standby_tasks],
                           [f"{t}:{list(p)}" for t, p in m.standby_tasks])
    found += _set_or_order("partitions", [f"{t}-{p}" for t, p in k_asg.topic_partitions()],
                           [f"{t}-{p}" for t, p in m_asg.topic_partitions()])
    for name, kmap, mmap in (("partitions by host", k.partitions_by_host, m.partitions_by_host),
                             ("standby partitions by host", k.standby_partitions_by_host,
                              m.standby_partitions_by_host)):
        found += _host_map(name, kmap, mmap)
    if k.next_rebalance_ms != m.next_rebalance_ms and not (_timed(k) and _timed(m)):
        found.append(f"follow-up: Kafka {_followup(k)}, taskassign {_followup(m)}")
    return found


def _set_or_order(label: str, kafka: Sequence[str], mine: Sequence[str]) -> list[str]:
    if list(kafka) == list(mine):
        return []
    if sorted(kafka) == sorted(mine):
        return [f"{label}: {ORDER_ONLY} (Kafka {_short(kafka)}, taskassign {_short(mine)})"]
    only_kafka = sorted(set(kafka) - set(mine))
    only_mine = sorted(set(mine) - set(kafka))
    return [f"{label}: only Kafka's {_short(only_kafka)}; only taskassign's {_short(only_mine)}"]


def _host_map(label: str, kafka: Sequence[tuple[object, Sequence[object]]],
              mine: Sequence[tuple[object, Sequence[object]]]) -> list[str]:
    if list(kafka) == list(mine):
        return []
    k_sets = {str(h): sorted(str(p) for p in ps) for h, ps in kafka}
    m_sets = {str(h): sorted(str(p) for p in ps) for h, ps in mine}
    if k_sets == m_sets:
        return [f"{label}: {ORDER_ONLY} (hosts Kafka {_short([str(h) for h, _ in kafka])}, taskassign "
                f"{_short([str(h) for h, _ in mine])})"]
    hosts = sorted(set(k_sets) | set(m_sets))
    differing = [h for h in hosts if k_sets.get(h) != m_sets.get(h)]
    return [f"{label}: other partitions for {_short(differing)}"]


def _followup(info: AssignmentInfo) -> str:
    if info.version < MIN_NEXT_REBALANCE_VERSION or info.next_rebalance_ms == NO_FOLLOWUP_MS:
        return "none"
    return "immediately" if info.next_rebalance_ms == 0 else f"at {info.next_rebalance_ms}"


def _short(values: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(values[:limit])
    return f"[{shown}{f', … {len(values) - limit} more' if len(values) > limit else ''}]"


def compare_outcome_by_client(recorded: Mapping[str, bytes], ours: Mapping[str, bytes],
                              member_client: Mapping[str, str]) -> OutcomeComparison:
    """Compare per client, as sets: the active tasks of all its members, and whether (and how) a follow-up
    rebalance is asked for (none, immediately, at a time); a comparison is named ``client <id>``. The standbys,
    whose clients follow the identity-hash order Kafka visits the tasks in, are compared over the whole group:
    the same standby tasks with as many replicas each, and none of ours on its active's client (one more entry,
    ``standby tasks (all clients)``). ``member_client`` names each member's client."""
    clients = sorted({member_client.get(m, m) for m in set(recorded) | set(ours)})
    kafka, mine = _by_client(recorded, member_client), _by_client(ours, member_client)
    result = []
    for client in clients:
        k, m = kafka.get(client), mine.get(client)
        name = f"client {client}"
        if isinstance(k, str) or isinstance(m, str):
            problem = k if isinstance(k, str) else m
            result.append(MemberComparison(name, False, (f"the bytes do not decode: {problem}",)))
            continue
        if k is None or m is None:
            side = "taskassign's" if m is None else "Kafka's"
            result.append(MemberComparison(name, False, (f"{side} leader sent this client nothing",)))
            continue
        found: list[str] = []
        if k[0] != m[0]:
            found.append(f"active tasks: only Kafka's {_short(sorted(k[0] - m[0]))}; only taskassign's "
                         f"{_short(sorted(m[0] - k[0]))}")
        if k[2] != m[2]:
            found.append(f"follow-up: Kafka {k[2]}, taskassign {m[2]}")
        result.append(MemberComparison(name, not found, tuple(found)))
    standbys = _standby_differences(kafka, mine)
    if standbys is not None:
        result.append(MemberComparison("standby tasks (all clients)", not standbys, tuple(standbys)))
    return OutcomeComparison(tuple(result), by_client=True)


def _standby_differences(kafka: Mapping[str, tuple[set[str], set[str], str] | str],
                         mine: Mapping[str, tuple[set[str], set[str], str] | str]) -> list[str] | None:
    """What differs in the standbys over the whole group (None when a side did not decode)."""
    sides = []
    for outcome in (kafka, mine):
        if any(isinstance(v, str) for v in outcome.values()):
            return None
        replicas: dict[str, int] = {}
        for entry in outcome.values():
            assert not isinstance(entry, str)
            for task in entry[1]:
                replicas[task] = replicas.get(task, 0) + 1
        sides.append(replicas)
    found = []
    k, m = sides
    if k != m:
        differing = sorted(t for t in set(k) | set(m) if k.get(t, 0) != m.get(t, 0))
        counts = [f"{t} Kafka {k.get(t, 0)}, taskassign {m.get(t, 0)}" for t in differing]
        found.append(f"standby replicas per task: {_short(counts)}")
    doubled = sorted(t for entry in mine.values() if not isinstance(entry, str) for t in entry[0] & entry[1])
    if doubled:
        found.append(f"taskassign put standbys with their actives: {_short(doubled)}")
    return found


def _by_client(outcome: Mapping[str, bytes], member_client: Mapping[str, str]
               ) -> dict[str, tuple[set[str], set[str], str] | str]:
    sets: dict[str, tuple[set[str], set[str], str] | str] = {}
    for member, data in outcome.items():
        client = member_client.get(member, member)
        try:
            info = AssignmentInfo.decode(Assignment.decode(data).user_data or b"")
        except DecodeError as exc:
            sets[client] = f"{member}: {exc}"
            continue
        entry = sets.setdefault(client, (set(), set(), "none"))
        if isinstance(entry, str):
            continue
        followup = _followup(info)
        kind = "none" if followup == "none" else "immediately" if followup == "immediately" else "at a time"
        entry[0].update(str(t) for t in info.active_tasks)
        entry[1].update(str(t) for t, _ in info.standby_tasks)
        sets[client] = (entry[0], entry[1], kind if kind != "none" else entry[2])
    return sets
