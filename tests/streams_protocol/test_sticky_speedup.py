"""Issue 33 point 3: the streams ``sticky`` assignor (4.2 to trunk) fills whole rounds at once instead of one heap
call per placement, and gives the answers of the implementation before it (sticky_reference.py), member by
member, on random groups: uniform and mixed process sizes (the batched rounds and their fall-backs), cold and
with previous actives, standbys and reported offsets, 0-3 standbys, every line it serves."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings

from taskassign.streams_protocol import StreamsGroup
from taskassign.streams_protocol.model import GroupMember, Subtopology, task_map
from taskassign.streams_protocol.sticky import assign_sticky
from tests.streams_protocol import sticky_reference
from tests.streams_protocol.strategies import streams_groups

LINES = ("4.2", "4.3", "4.4", "trunk", "kafka-20719-proposed")


def random_group(seed: int) -> StreamsGroup:
    """Processes all of one size or of mixed sizes; some members with previous tasks and offsets (a share of
    them restarted: offsets only), or none at all (cold)."""
    rng = random.Random(seed)
    subtopologies = tuple(Subtopology(str(s), rng.randint(0, 80), rng.random() < 0.7)
                          for s in range(rng.randint(1, 12)))
    tasks = [(s.id, p) for s in subtopologies for p in range(s.partitions)]
    uniform = rng.random() < 0.5
    size = rng.randint(1, 5)
    members = []
    process = 0
    count = rng.randint(1, 300)
    cold = rng.random() < 0.4
    while len(members) < count:
        for _ in range(size if uniform else rng.choice([1, 1, 2, 3, 4, 7])):
            k = len(members)

            def some() -> list[tuple[str, int]]:
                return rng.sample(tasks, min(len(tasks), rng.choice([0, 1, 2, 5, 12])))

            offsets: dict[str, dict[int, int]] = {}
            if not cold and rng.random() < 0.3:
                for sid, p in some():
                    offsets.setdefault(sid, {})[p] = rng.choice([0, 5, 1000])
            restarted = cold or rng.random() < 0.2
            members.append(GroupMember(
                f"m{rng.randint(0, 10**6)}-{k}", f"process-{process}",
                active_tasks=task_map([] if restarted else some()),
                standby_tasks=task_map([] if restarted else some()), task_offsets=offsets))
        process += 1
    standbys = rng.choice(["0", "1", "1", "2", "3"])
    return StreamsGroup("random", subtopologies, tuple(members), {"num.standby.replicas": standbys}, "sticky")


def _same(group: StreamsGroup, line: str) -> None:
    try:
        expected = sticky_reference.assign_sticky(group, line)
    except Exception as exc:
        with pytest.raises(type(exc), match=re.escape(str(exc))):
            assign_sticky(group, line)
        return
    assert assign_sticky(group, line) == expected


@pytest.mark.parametrize("seed", range(150))
def test_the_same_answer_as_before_on_random_groups(seed: int) -> None:
    _same(random_group(seed), LINES[seed % len(LINES)])


@pytest.mark.parametrize("line", ["4.2", "4.4"])
@pytest.mark.parametrize("members", [40, 400])
def test_the_same_answer_as_before_on_the_benchmark_shape(line: str, members: int) -> None:
    """bench_streams_java's shape (10 stateful subtopologies, processes of 4, 10 tasks a member, one standby),
    cold and then with the cold answer as previous targets and one member restarted."""
    subtopologies = tuple(Subtopology(str(s), members, True) for s in range(10))
    cold = StreamsGroup("bench", subtopologies, tuple(
        GroupMember(f"member-{i}", f"process-{i // 4}") for i in range(members)), {"num.standby.replicas": "1"})
    answer = assign_sticky(cold, line)
    assert answer == sticky_reference.assign_sticky(cold, line)
    previous = []
    for member in cold.members:
        got = answer.members[member.member_id]
        if member.member_id == "member-0":
            held = [*got.active_tasks.items(), *got.standby_tasks.items()]
            previous.append(GroupMember("member-0-restarted", member.process_id,
                                        task_offsets={s: dict.fromkeys(parts, 1_000) for s, parts in held}))
        else:
            previous.append(GroupMember(member.member_id, member.process_id, active_tasks=got.active_tasks,
                                        standby_tasks=got.standby_tasks))
    group = StreamsGroup("bench", subtopologies, tuple(previous), {"num.standby.replicas": "1"})
    assert assign_sticky(group, line) == sticky_reference.assign_sticky(group, line)


@settings(max_examples=300, deadline=None)
@given(streams_groups("sticky", max_members=30))
def test_the_same_answer_as_before_on_small_groups(group: StreamsGroup) -> None:
    for line in ("4.3", "4.4"):
        _same(group, line)


@pytest.mark.parametrize("seed", range(60))
def test_the_same_answer_as_before_on_the_next_rebalance(seed: int) -> None:
    """A random group's answer as the next computation's previous targets, some members gone, restarted
    (offsets only) or new: the steady state the one-replica fast path serves, quotas that do not divide."""
    rng = random.Random(seed)
    line = LINES[seed % len(LINES)]
    subtopologies = tuple(Subtopology(str(s), rng.randint(1, 40), rng.random() < 0.8)
                          for s in range(rng.randint(1, 6)))
    size = rng.choice([1, 2, 4, 0])
    members = tuple(GroupMember(f"member-{k}", f"process-{k // size if size else rng.randint(0, 9)}")
                    for k in range(rng.randint(2, 120)))
    configs = {"num.standby.replicas": rng.choice(["1", "1", "2"])}
    answer = assign_sticky(StreamsGroup("g", subtopologies, members, configs), line)
    following = []
    for member in members:
        got = answer.members[member.member_id]
        fate = rng.random()
        if fate < 0.1:
            continue  # gone
        if fate < 0.2:
            held = [*got.active_tasks.items(), *got.standby_tasks.items()]
            following.append(GroupMember(member.member_id + "-restarted", member.process_id, task_offsets={
                s: {p: rng.choice([0, 10, 1000]) for p in parts} for s, parts in held}))
            continue
        following.append(GroupMember(member.member_id, member.process_id, active_tasks=got.active_tasks,
                                     standby_tasks=got.standby_tasks))
    following += [GroupMember(f"new-{k}", f"process-new-{k % 3}") for k in range(rng.choice([0, 0, 1, 5]))]
    _same(StreamsGroup("g", subtopologies, tuple(following), configs), line)
