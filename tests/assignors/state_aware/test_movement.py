"""The high-availability step: actives move only to caught-up clients, warm-ups within the budget."""

from __future__ import annotations

from taskassign.assignors.state_aware import assign_state_aware
from taskassign.assignors.state_aware.actives import active_bins
from taskassign.assignors.state_aware.movement import plan_transition
from taskassign.assignors.state_aware.problem import Problem
from taskassign.assignors.state_aware.settings import Settings
from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from tests.assignors.state_aware.helpers import actives, running, sized, standbys
from tests.helpers import PID, PID_1, PID_2, app_state, client

FOUR = [sized(f"0_{i}", 2) for i in range(4)]


def test_an_active_waits_on_a_caught_up_client_while_its_target_warms_up() -> None:
    state = app_state(FOUR, [running(1, ["0_0", "0_1", "0_2", "0_3"]), client(PID_2)], acceptable_recovery_lag=100)
    result = assign_state_aware(state)
    assert actives(result) == {PID_1: ["0_0", "0_1", "0_2", "0_3"], PID_2: []}
    assert len(standbys(result)[PID_2]) == 2  # two warm-ups: P2's target tasks
    assert result.probing_rebalance_needed
    assert result.details["pending_active_moves"] == 2 and result.details["warmup_replicas"] == 2


def test_warm_ups_are_bounded_by_max_warmup_replicas() -> None:
    state = app_state(FOUR, [running(1, ["0_0", "0_1", "0_2", "0_3"]), client(PID_2)], max_warmup_replicas=1)
    result = assign_state_aware(state)
    assert len(standbys(result)[PID_2]) == 1
    assert result.details["warmup_replicas"] == 1 and result.probing_rebalance_needed


def test_a_caught_up_standby_takes_over_at_once() -> None:
    state = app_state(FOUR, [running(1, ["0_0", "0_1", "0_2", "0_3"]), running(2, standby=["0_2", "0_3"])],
                      num_standby_replicas=1)
    result = assign_state_aware(state)
    assert actives(result) == {PID_1: ["0_0", "0_1"], PID_2: ["0_2", "0_3"]}
    assert standbys(result) == {PID_1: ["0_2", "0_3"], PID_2: ["0_0", "0_1"]}
    assert not result.probing_rebalance_needed


def test_the_finished_warm_up_takes_over_at_the_next_rebalance() -> None:
    first = assign_state_aware(app_state(FOUR, [running(1, ["0_0", "0_1", "0_2", "0_3"]), client(PID_2)]))
    warm = standbys(first)[PID_2]
    # The warm-ups have caught up (reported at the changelog end); P1 still runs everything.
    state = app_state(FOUR, [running(1, ["0_0", "0_1", "0_2", "0_3"]), running(2, standby=warm)])
    second = assign_state_aware(state)
    assert actives(second)[PID_2] == warm
    assert not second.probing_rebalance_needed


def test_when_nobody_is_caught_up_the_target_runs_it() -> None:
    tasks = [sized(f"0_{i}", 2) for i in range(4)]
    state = app_state(tasks, [client(PID_1), client(PID_2)])  # cold start: every lag is the whole changelog
    result = assign_state_aware(state)
    assert actives(result) == {PID_1: ["0_0", "0_2"], PID_2: ["0_1", "0_3"]}
    assert not result.probing_rebalance_needed


def test_the_most_caught_up_client_runs_it_when_nobody_is_caught_up() -> None:
    # Nobody runs 0_0 any more; P2 is 50% restored, P3 has nothing. Were the target P3, the active goes to
    # P2 (strictly more caught up) and P3 warms up; were it P2, P2 runs it at once (nobody is ahead of it).
    state = app_state([sized("0_0", 2)], [client(PID_1), running(2, offsets={"0_0": 50_000}), client(PID[3])])
    p = Problem(state, Settings())
    now = plan_transition(p, [2], [()], active_bins(p))
    assert now.active == [1] and now.pending == [0] and now.warmups == {0}
    assert now.standby == [(2,)]
    now = plan_transition(p, [1], [()], active_bins(p))
    assert now.active == [1] and now.pending == []


def test_unbounded_recovery_lag_moves_everything_at_once() -> None:
    state = app_state(FOUR, [running(1, ["0_0", "0_1", "0_2", "0_3"]), client(PID_2)],
                      acceptable_recovery_lag=UNBOUNDED_RECOVERY_LAG)
    result = assign_state_aware(state)
    assert len(actives(result)[PID_2]) == 2
    assert not result.probing_rebalance_needed and result.details["warmup_replicas"] == 0


def test_a_move_waits_while_its_destination_still_holds_what_it_gives_away() -> None:
    # 0_3 (2 GB) goes from P2 to the new P3, which must warm up first; 0_0 (1 GB) goes from P1 to P2, which
    # is caught up on it, but with 0_3 still there P2 would exceed its share: 0_0 waits on P1 instead of
    # overloading P2 (and the next rebalance would then plan from a different starting point).
    tasks = [sized("0_0", 1), sized("0_1", 2), sized("0_2", 4), sized("0_3", 2)]
    clients = [running(1, ["0_0", "0_2"]), running(2, ["0_1", "0_3"], standby=["0_0", "0_2"]), client(PID[3])]
    result = assign_state_aware(app_state(tasks, clients))
    assert actives(result) == {PID_1: ["0_0", "0_2"], PID_2: ["0_1", "0_3"], PID[3]: []}
    assert "0_3" in standbys(result)[PID[3]] and result.probing_rebalance_needed
    explained = " ".join(result.details["explanations"])
    assert "Task 0_0 (active) stays on" in explained and "waits until tasks it gives away have left" in explained
    # Once P3 has caught up on 0_3, both moves happen in the same rebalance.
    clients = [running(1, ["0_0", "0_2"]), running(2, ["0_1", "0_3"], standby=["0_0", "0_2"]),
               running(3, standby=["0_3"])]
    result = assign_state_aware(app_state(tasks, clients))
    assert actives(result) == {PID_1: ["0_2"], PID_2: ["0_0", "0_1"], PID[3]: ["0_3"]}
    assert not result.probing_rebalance_needed


def test_unknown_changelog_end_offsets_keep_actives_where_they_run() -> None:
    # Kafka's leader could not fetch end offsets (-3): lags are unknown, only running actives are caught
    # up. state_aware needs no fallback assignor: it keeps what runs and places the rest.
    tasks = [sized(f"0_{i}", 2, end=-3) for i in range(4)]
    state = app_state(tasks, [running(1, ["0_0", "0_1", "0_2", "0_3"]), client(PID_2)])
    assert not state.lag_computation_successful
    result = assign_state_aware(state)
    assert actives(result)[PID_1] == ["0_0", "0_1", "0_2", "0_3"] and result.probing_rebalance_needed
