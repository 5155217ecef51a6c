"""P23: the 4-argument move predicate refuses exactly the moves that lose a distinct tag entry."""

from __future__ import annotations

from taskassign.rack.tags import always_allowed, tag_diversity_allows, tag_diversity_predicate
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
