"""Hypothesis strategies for canonical wire messages of every version (shared by the wire tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from taskassign.ids import ProcessId, TaskId
from taskassign.wire import Assignment, AssignmentInfo, HostInfo, Subscription, SubscriptionInfo
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, NO_FOLLOWUP_MS

INT8 = st.integers(-(2**7), 2**7 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
NON_NEG_INT32 = st.integers(0, 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
#: Any Unicode text (NUL and characters outside the BMP included), no lone surrogates.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
NON_EMPTY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
PROCESS_IDS = st.builds(ProcessId.of_ints, st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))


def task_ids(named: bool) -> st.SearchStrategy[TaskId]:
    names = st.one_of(st.none(), NON_EMPTY_TEXT) if named else st.none()
    return st.builds(TaskId, NON_NEG_INT32, NON_NEG_INT32, names)


def _small_tuple(element: st.SearchStrategy, max_size: int = 5) -> st.SearchStrategy:  # type: ignore[type-arg]
    return st.lists(element, max_size=max_size).map(tuple)


@st.composite
def subscription_infos(draw: st.DrawFn, version: int | None = None) -> SubscriptionInfo:
    v = draw(st.integers(1, LATEST_SUPPORTED_VERSION + 5)) if version is None else version
    if v > LATEST_SUPPORTED_VERSION:
        return SubscriptionInfo(v, None, draw(st.integers(v, 2**31 - 1)))
    tasks = task_ids(named=v >= 10)
    return SubscriptionInfo(
        v,
        draw(PROCESS_IDS),
        draw(st.integers(v, 2**31 - 1)) if v >= 3 else -1,
        prev_tasks=draw(_small_tuple(tasks)) if v <= 6 else (),
        standby_tasks=draw(_small_tuple(tasks)) if v <= 6 else (),
        user_endpoint=draw(st.one_of(st.none(), NON_EMPTY_TEXT)) if v >= 2 else None,
        task_offset_sums=_grouped_if_v7_to_v9(v, draw(_small_tuple(st.tuples(tasks, INT64)))) if v >= 7 else (),
        unique_field=draw(INT8) if v >= 8 else 0,
        error_code=draw(INT32) if v >= 9 else 0,
        client_tags=tuple(draw(st.dictionaries(TEXT, TEXT, max_size=4)).items()) if v >= 11 else (),
    )


def _grouped_if_v7_to_v9(version: int, pairs: tuple[tuple[TaskId, int], ...]) -> tuple[tuple[TaskId, int], ...]:
    """v7-9 group offset sums by subtopology (first appearance): the canonical order of those versions."""
    if version >= 10:
        return pairs
    groups: dict[int, list[tuple[TaskId, int]]] = {}
    for pair in pairs:
        groups.setdefault(pair[0].subtopology, []).append(pair)
    return tuple(p for group in groups.values() for p in group)


PARTITIONS = _small_tuple(st.tuples(TEXT, INT32))
HOSTS = st.builds(HostInfo, TEXT, INT32)


@st.composite
def assignment_infos(draw: st.DrawFn, version: int | None = None) -> AssignmentInfo:
    v = draw(st.integers(1, LATEST_SUPPORTED_VERSION)) if version is None else version
    tasks = task_ids(named=v >= 10)
    host_map = _small_tuple(st.tuples(HOSTS, PARTITIONS), 3)
    return AssignmentInfo(
        v,
        draw(INT32) if v >= 3 else -1,
        active_tasks=draw(_small_tuple(tasks)),
        standby_tasks=draw(_small_tuple(st.tuples(tasks, PARTITIONS), 3)),
        partitions_by_host=draw(host_map) if v >= 2 else (),
        standby_partitions_by_host=draw(host_map) if v >= 6 else (),
        error_code=draw(INT32) if v >= 4 else 0,
        next_rebalance_ms=draw(INT64) if v >= 7 else NO_FOLLOWUP_MS,
    )


GROUPS = _small_tuple(st.tuples(TEXT, _small_tuple(INT32)), 3)


@st.composite
def subscriptions(draw: st.DrawFn, version: int | None = None) -> Subscription:
    v = draw(st.integers(0, 6)) if version is None else version
    return Subscription(
        v,
        draw(_small_tuple(TEXT)),
        draw(st.one_of(st.none(), st.binary(max_size=20))),
        draw(GROUPS) if v >= 1 else (),
        draw(INT32) if v >= 2 else -1,
        draw(st.one_of(st.none(), TEXT)) if v >= 3 else None,
    )


@st.composite
def assignments(draw: st.DrawFn, version: int | None = None) -> Assignment:
    v = draw(st.integers(0, 6)) if version is None else version
    return Assignment(v, draw(GROUPS), draw(st.one_of(st.none(), st.binary(max_size=20))))
