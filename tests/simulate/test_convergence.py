"""The convergence harness's mechanics (the assignor-specific bounds are in test_convergence_bounds.py)."""

from __future__ import annotations

import pytest

from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId
from taskassign.model import KafkaStreamsAssignment, TaskAssignment
from taskassign.simulate.convergence import (
    END_OFFSET_SUM,
    ConvergenceHarness,
    converge,
    run_randomized_scenario,
)
from taskassign.simulate.java_random import JavaRandom
from tests.helpers import tid
from tests.simulate.assignors import WarmupAssignor

CONFIGS = AssignmentConfigs(acceptable_recovery_lag=100, max_warmup_replicas=2, probing_rebalance_interval_ms=60_000)


def warmup(configs: AssignmentConfigs) -> WarmupAssignor:
    return WarmupAssignor()


def test_cluster_numbers_stateless_subtopologies_first() -> None:
    harness = ConvergenceHarness.initialize_cluster(7, 11, 1, lambda: 5)
    assert [str(t) for t in harness.stateless] == ["0_0", "0_1", "0_2", "0_3", "0_4", "1_0", "1_1"]
    assert [str(t) for t in harness.stateful] == [f"2_{p}" for p in range(5)] + [f"3_{p}" for p in range(5)] + ["4_0"]
    info = harness.tasks[tid("4_0")]
    assert info.changelog_end_offset_sum == END_OFFSET_SUM and info.has_changelog
    assert not harness.tasks[tid("1_1")].is_stateful
    assert list(harness.clients) == [ProcessId.of_ints(0, 0)]


def test_clients_report_what_they_held_as_caught_up_and_everything_else_as_far_behind() -> None:
    harness = ConvergenceHarness.initialize_cluster(1, 2, 2, lambda: 5)
    p0, p1 = sorted(harness.clients)
    t0, t1 = tid("1_0"), tid("1_1")
    harness.record(TaskAssignment((KafkaStreamsAssignment.of_tasks(p0, [tid("0_0"), t0], [t1]),)))
    state = harness.prepare_for_next_rebalance(CONFIGS)
    assert state.clients[p0].lag_for(t0) == 0 and state.clients[p0].lag_for(t1) == 0
    assert set(state.clients[p0].previous_active_tasks) == {tid("0_0"), t0}
    assert state.clients[p1].lag_for(t0) == END_OFFSET_SUM


def test_dropped_nodes_keep_their_state_and_new_ids_count_the_dropped() -> None:
    harness = ConvergenceHarness.initialize_cluster(0, 2, 3, lambda: 5)
    converge(harness, warmup, CONFIGS, 1)
    held = harness.clients[ProcessId.of_ints(0, 0)]
    assert harness.drop_node() == ProcessId.of_ints(0, 0)
    assert harness.add_node() == ProcessId.of_ints(0, 3)
    harness.add_or_resurrect_nodes_randomly(_always_resurrect(), 2)
    assert harness.clients[ProcessId.of_ints(0, 0)] == held


def _always_resurrect() -> JavaRandom:
    # new Random(1): nextInt(2) = 1 (one node), nextBoolean() = false (resurrect), nextInt(1) = 0
    prng = JavaRandom(1)
    probe = JavaRandom(1)
    assert (probe.next_int(2), probe.next_boolean(), probe.next_int(1)) == (1, False, 0)
    return prng


# Printed by OpenJDK 17 replaying Kafka's draw order: initialClusterSize, stateless, stateful, maxWarmups,
# standbys, events, the task ids (stateless | stateful), then the first event's nextInt(2).
JDK_DRAWS = {
    1: (6, 9, 8, 4, 6, 5, "0_0,0_1,0_2,0_3,0_4,1_0,1_1,1_2,1_3|2_0,2_1,2_2,2_3,2_4,2_5,2_6,2_7", 1),
    7: (7, 5, 6, 5, 2, 5, "0_0,0_1,0_2,0_3,0_4|1_0,1_1,1_2,1_3,1_4,1_5", 1),
    -42: (6, 7, 3, 1, 2, 3, "0_0,0_1,0_2,0_3,0_4,0_5,0_6|1_0,1_1,2_0", 1),
    8472917349823: (9, 7, 4, 4, 0, 8, "0_0,0_1,0_2,1_0,1_1,1_2,1_3|2_0,2_1,2_2,2_3", 0),
}


@pytest.mark.parametrize("seed", sorted(JDK_DRAWS))
def test_randomized_scenarios_draw_what_kafkas_test_draws(seed: int) -> None:
    drawn = []

    def recording(configs: AssignmentConfigs) -> WarmupAssignor:
        drawn.append(configs)
        return WarmupAssignor()

    scenario = run_randomized_scenario(seed, recording)
    initial, stateless, stateful, warmups, standbys, events, tasks, _ = JDK_DRAWS[seed]
    assert (scenario.initial_clients, scenario.stateless_tasks, scenario.stateful_tasks) == (initial, stateless,
                                                                                              stateful)
    assert (scenario.max_warmup_replicas, scenario.num_standby_replicas, scenario.events) == (warmups, standbys,
                                                                                               events)
    assert drawn[0].max_warmup_replicas == warmups and drawn[0].num_standby_replicas == standbys
    first = scenario.rounds[0].state
    stateless_ids = [str(t) for t in first.task_ids if t not in first.stateful_task_ids]
    assert "|".join([",".join(stateless_ids), ",".join(map(str, first.stateful_task_ids))]) == tasks


def test_the_same_seed_replays_the_same_history() -> None:
    a = run_randomized_scenario(1234, warmup)
    b = run_randomized_scenario(1234, warmup)
    assert a.history == b.history and [r.iterations for r in a.rounds] == [r.iterations for r in b.rounds]


def test_converge_stops_at_the_limit_and_reports_it() -> None:
    harness = ConvergenceHarness.initialize_cluster(0, 4, 1, lambda: 5)
    assert converge(harness, warmup, CONFIGS, 1).converged
    harness.add_node()
    one_warmup = AssignmentConfigs(acceptable_recovery_lag=100, max_warmup_replicas=1)
    capped = converge(harness, warmup, one_warmup, 1)
    assert not capped.converged and capped.iterations == 1
    assert capped.problems(check_balance=False)[0] == "not converged after 1 rebalances"
    done = converge(harness, warmup, CONFIGS, 5)
    assert done.converged and done.problems() == ()
