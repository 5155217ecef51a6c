"""What both broker-side assignors guarantee on any group: every task active on exactly one
member, the replicas of a task on distinct processes, exactly min(num.standby.replicas, processes - 1)
standbys for a stateful task and none for a stateless one, every member in the answer; the balanced one is
independent of member order, the sticky one is not but is deterministic."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.errors import TaskAssignorException
from taskassign.streams_protocol import StreamsGroup, StreamsGroupAssignment, run_assignor
from tests.streams_protocol.strategies import streams_groups


def check_invariants(group: StreamsGroup, result: StreamsGroupAssignment) -> None:
    assert set(result.members) == {m.member_id for m in group.members}
    process_of = {m.member_id: m.process_id for m in group.members}
    processes = len(set(process_of.values()))
    standby_count = int(group.configs["num.standby.replicas"])
    actives: Counter[tuple[str, int]] = Counter()
    replicas: dict[tuple[str, int], list[str]] = {}
    standbys: Counter[tuple[str, int]] = Counter()
    for member, assignment in result.members.items():
        for sid, partitions in assignment.active_tasks.items():
            for p in partitions:
                actives[(sid, p)] += 1
                replicas.setdefault((sid, p), []).append(process_of[member])
        for sid, partitions in assignment.standby_tasks.items():
            for p in partitions:
                standbys[(sid, p)] += 1
                replicas.setdefault((sid, p), []).append(process_of[member])
    tasks = {(s.id, p): s.stateful for s in group.subtopologies for p in range(s.partitions)}
    assert dict(actives) == dict.fromkeys(tasks, 1)
    for task, holders in replicas.items():
        assert len(holders) == len(set(holders)), f"{task} twice on one process"
    for task, stateful in tasks.items():
        assert standbys[task] == (min(standby_count, processes - 1) if stateful else 0), task


@settings(max_examples=300, deadline=None)
@given(streams_groups("sticky"))
def test_sticky_invariants(group: StreamsGroup) -> None:
    if not group.members:
        return
    result = run_assignor(group)
    check_invariants(group, result)
    assert run_assignor(group) == result


@settings(max_examples=300, deadline=None)
@given(streams_groups("balanced"), st.randoms(use_true_random=False))
def test_balanced_invariants_and_member_order_independence(group: StreamsGroup, rnd: random.Random) -> None:
    if not group.members:
        return
    result = run_assignor(group)
    check_invariants(group, result)
    shuffled = list(group.members)
    rnd.shuffle(shuffled)
    assert run_assignor(replace(group, members=tuple(shuffled))) == result


@settings(max_examples=50, deadline=None)
@given(streams_groups("sticky", max_members=0), st.sampled_from(["sticky", "balanced"]))
def test_no_members_fails_only_with_tasks(group: StreamsGroup, assignor: str) -> None:
    if group.task_count == 0:
        assert run_assignor(group, assignor).members == {}
        return
    try:
        run_assignor(group, assignor)
    except TaskAssignorException as exc:
        assert exc.java_type == "TaskAssignorException"
    else:
        raise AssertionError("expected TaskAssignorException")
