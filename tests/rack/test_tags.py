"""P23: the 4-argument move predicate refuses exactly the moves that lose a distinct tag entry."""

from __future__ import annotations

import itertools
import random

import pytest

from taskassign.ids import ProcessId, TaskId
from taskassign.rack.tags import TagDiversityPredicate, always_allowed, tag_diversity_allows, tag_diversity_predicate
from tests.helpers import PID_1, PID_2, PID_3, PID_4, TASK_0_0
from tests.rack.instances import racked_client, racked_state, racked_task

STATE = racked_state(
    [racked_task("0_0", [["r"]], [["r"]])],
    [racked_client(n, "r", tags={"az": zone, "env": "prod"}) for n, zone in ((1, "az1"), (2, "az2"), (3, "az3"),
                                                                              (4, "az1"))],
    rack_aware_assignment_tags=["az"],
)
ACTIVE = {PID_1: {TASK_0_0}, PID_2: set(), PID_3: set(), PID_4: set()}
STANDBY = {PID_1: set(), PID_2: {TASK_0_0}, PID_3: set(), PID_4: set()}


def test_a_move_that_loses_a_zone_is_refused_and_one_that_keeps_it_allowed() -> None:
    can_move = tag_diversity_predicate(STATE)
    assert not can_move(PID_2, PID_4, TASK_0_0, ACTIVE, STANDBY)  # az2 -> az1, where the active already is
    assert can_move(PID_2, PID_3, TASK_0_0, ACTIVE, STANDBY)  # az2 -> az3
    assert can_move(PID_4, PID_2, TASK_0_0, ACTIVE, {PID_4: {TASK_0_0}})  # az1 (duplicate) -> az2 gains one


def test_every_tag_counts_not_only_the_configured_keys() -> None:
    tags = {PID_1: {"az": "a", "env": "x"}, PID_2: {"az": "b", "env": "y"}, PID_3: {"az": "b", "env": "x"}}
    assert not tag_diversity_allows(tags, PID_2, PID_3, [PID_1, PID_2])  # loses env=y
    assert tag_diversity_allows(tags, PID_3, PID_2, [PID_1, PID_3])


def test_the_default_predicate_allows_everything() -> None:
    assert always_allowed(PID_2, PID_4, TASK_0_0, ACTIVE, STANDBY)


@pytest.mark.parametrize("seed", range(30))
def test_the_filter_and_the_single_answers_equal_a_count_of_distinct_entries(seed: int) -> None:
    rng = random.Random(seed)
    pids = [ProcessId.of_ints(0, n) for n in range(1, 7)]
    tags = {p: {k: rng.choice("xyz") for k in rng.sample(["az", "env", "rack"], rng.randint(0, 3))} for p in pids}
    predicate = TagDiversityPredicate(tags)
    tasks = [TaskId(0, k) for k in range(8)]
    holders = {t: set(rng.sample(pids, rng.randint(1, 4))) for t in tasks}
    for source, destination in itertools.permutations(pids, 2):
        expected = []
        for t in tasks:
            others = {kv for p in holders[t] - {source, destination} for kv in tags[p].items()}
            allowed = len(others | set(tags[destination].items())) >= len(others | set(tags[source].items()))
            assert predicate.on_holders(source, destination, t, holders[t]) == allowed
            assert tag_diversity_allows(tags, source, destination, holders[t]) == allowed
            expected += [t] if allowed else []
        assert predicate.movable(source, destination, tasks, holders) == expected
