"""Kafka's TaskAssignorConvergenceTest harness (taskassign.simulate.convergence) with state_aware.

The same bounds as for Kafka's high-availability assignor: adding a node converges within
floor(S / W) + 1 rebalances, dropping one within floor(S / W) + 2, random perturbations within
2 (S + S R); the converged assignment is valid with no warm-up left, and one more rebalance changes
nothing. Kafka's balance checks are count-based (tasks per thread within 1); state_aware balances state
per thread within its tolerance, so they are not asserted here (the harness's tasks all weigh one store,
which makes them nearly the same, see the last test).
"""

from __future__ import annotations

import pytest

from taskassign.analysis.metrics import compute_metrics
from taskassign.configs import AssignmentConfigs
from taskassign.simulate.convergence import (
    ConvergenceHarness,
    ConvergenceRound,
    assignor_factory,
    converge,
    run_randomized_scenario,
)

SA = assignor_factory("state_aware")


def configs(warmups: int = 2, standbys: int = 0, strategy: str = "none") -> AssignmentConfigs:
    return AssignmentConfigs(acceptable_recovery_lag=100, max_warmup_replicas=warmups, num_standby_replicas=standbys,
                             probing_rebalance_interval_ms=60_000, rack_aware_assignment_strategy=strategy)


def assert_settled(harness: ConvergenceHarness, round_: ConvergenceRound, cfg: AssignmentConfigs) -> None:
    problems = round_.problems(check_balance=False)
    assert problems == (), "\n".join([*problems, *harness.history])
    again = converge(harness, SA, cfg, 1)
    assert again.converged and again.assignment.assignments == round_.assignment.assignments


def test_a_static_assignment_converges_with_the_first_assignment() -> None:
    harness = ConvergenceHarness.initialize_cluster(1, 1, 1, lambda: 1)
    assert converge(harness, SA, configs(), 1).problems() == ()


@pytest.mark.parametrize("standbys", [0, 1])
def test_adding_a_node_converges_within_kafkas_bound(standbys: int) -> None:
    harness = ConvergenceHarness.initialize_cluster(7, 11, 1, lambda: 5, num_nodes=10)
    cfg = configs(standbys=standbys)
    assert converge(harness, SA, cfg, 1).converged
    harness.add_node()
    assert_settled(harness, converge(harness, SA, cfg, 11 // 2 + 1), cfg)


@pytest.mark.parametrize("standbys", [0, 1])
def test_dropping_a_node_converges_within_kafkas_bound(standbys: int) -> None:
    harness = ConvergenceHarness.initialize_cluster(11, 13, 7, lambda: 5, num_nodes=10)
    cfg = configs(standbys=standbys)
    converge(harness, SA, cfg, 1)
    harness.drop_node()
    assert_settled(harness, converge(harness, SA, cfg, 13 // 2 + 2), cfg)


@pytest.mark.parametrize("seed", range(25))
def test_random_perturbations_converge(seed: int) -> None:
    scenario = run_randomized_scenario(seed, SA)
    problems = scenario.problems(check_balance=False)
    assert problems == (), "\n".join([*problems, *scenario.history])


def test_with_equal_tasks_it_balances_like_kafka() -> None:
    harness = ConvergenceHarness.initialize_cluster(0, 24, 4, lambda: 6, num_nodes=3)
    cfg = configs(standbys=1)
    round_ = converge(harness, SA, cfg, 20)
    metrics = compute_metrics(round_.state, round_.assignment)
    assert round_.converged and metrics.active_load_skew <= 1 and metrics.changelog_load_skew <= 1
