"""Issue 32 point 6: ``streams_balanced`` is sub-quadratic (a min-tree finds the pairs that can move, the spread
takes no linear removals) and gives the answers of the implementation before it, byte for byte, on random
groups: many processes of mixed sizes, previous tasks in every role, 0-3 standbys."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings

from taskassign.streams_protocol import StreamsGroup
from taskassign.streams_protocol.balanced import _MinTree, assign_balanced
from taskassign.streams_protocol.model import GroupMember, Subtopology, task_map
from tests.streams_protocol import balanced_reference
from tests.streams_protocol.strategies import streams_groups


def random_group(seed: int) -> StreamsGroup:
    rng = random.Random(seed)
    subtopologies = tuple(Subtopology(str(s), rng.randint(0, 60), rng.random() < 0.7)
                          for s in range(rng.randint(1, 6)))
    tasks = [(s.id, p) for s in subtopologies for p in range(s.partitions)]
    processes = [f"process-{k}" for k in range(rng.randint(1, 80))]
    members = []
    for k in range(rng.randint(1, 250)):
        def some() -> list[tuple[str, int]]:
            return rng.sample(tasks, min(len(tasks), rng.choice([0, 0, 1, 3, 8])))

        members.append(GroupMember(f"m{rng.randint(0, 10**6)}-{k}", rng.choice(processes),
                                   active_tasks=task_map(some()), standby_tasks=task_map(some()),
                                   warmup_tasks=task_map(some() if rng.random() < 0.2 else [])))
    standbys = rng.choice(["0", "1", "1", "2", "3"])
    return StreamsGroup("random", subtopologies, tuple(members), {"num.standby.replicas": standbys}, "balanced")


@pytest.mark.parametrize("seed", range(120))
def test_the_same_answer_as_before_on_random_groups(seed: int) -> None:
    group = random_group(seed)
    assert assign_balanced(group) == balanced_reference.assign_balanced(group)


@settings(max_examples=300, deadline=None)
@given(streams_groups("balanced", max_members=30))
def test_the_same_answer_as_before_on_small_groups(group: StreamsGroup) -> None:
    try:
        expected = balanced_reference.assign_balanced(group)
    except Exception as exc:
        with pytest.raises(type(exc), match=re.escape(str(exc))):
            assign_balanced(group)
        return
    assert assign_balanced(group) == expected


@pytest.mark.parametrize("seed", range(50))
def test_the_min_tree_finds_the_first_index_at_most_a_bound(seed: int) -> None:
    rng = random.Random(seed)
    values = [rng.choice([0.5, 1.0, 1.5, 2.0, 3.0]) for _ in range(rng.randint(1, 40))]
    tree = _MinTree(values)
    for _ in range(60):
        if rng.random() < 0.3:
            k = rng.randrange(len(values))
            values[k] = rng.choice([0.5, 1.0, 2.0, 3.0])
            tree.set(k, values[k])
        start, bound = rng.randrange(len(values) + 2), rng.choice([0.4, 0.5, 1.0, 1.75, 3.0])
        expected = next((i for i in range(start, len(values)) if values[i] <= bound), -1)
        assert tree.first_at_most(start, bound) == expected
        assert tree.minimum() == min(values)
