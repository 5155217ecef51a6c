"""Kafka's standby movement piles standbys on the lowest ProcessId (docs/kafka-differences.md, H10).

tests/golden/standby_pile_up/pile-t4-c4-r1-tags: 4 tasks, each active (-2) on its round-robin client, nobody
else has state, 4 clients over 2 zones, 1 standby, ``max.warmup.replicas`` 1. Kafka's tag-aware placement
spreads the standbys one per client; then every standby sits on a client that is not caught up, no
caught-up client may take it (only the active's owner is caught up), and ``mostCaughtUpEligibleClient``
walks the lag order: every client without state ties at the end offset, so the first one by ProcessId not
holding the task takes it. Kafka 4.4's Java gives the golden output (client 1 holds 3 of 5 standbys, 0_2's
moved standby joins its active's zone); under kafka_compat taskassign does too. By default a standby moves
only to a strictly more caught-up client that keeps the task's tag spread, so they stay spread.
"""

from __future__ import annotations

from taskassign.analysis.invariants import standby_pile_up_problems
from taskassign.analysis.metrics import compute_metrics
from taskassign.api.check_assignor import check_case
from taskassign.configs import KAFKA_COMPAT
from taskassign.formats.scenario import with_config_overrides
from taskassign.leader.assign import assign_scenario, result_to_document
from tests.golden_parity import golden_cases, run_case

CASE = golden_cases("standby_pile_up")[0]


def test_kafka_compat_reproduces_kafkas_pile_up() -> None:
    assert run_case(CASE, "high_availability", {KAFKA_COMPAT: True}) == []
    scenario = with_config_overrides(CASE.scenario(), {KAFKA_COMPAT: True})
    result = assign_scenario(scenario, "high_availability")
    problems = standby_pile_up_problems(compute_metrics(scenario.state, result.group))
    assert problems and "holds 3 of 5 standbys" in problems[0]
    assert "pile_up" in {f.check for f in check_case("high_availability", scenario).findings}


def test_default_mode_keeps_standbys_spread_over_zones() -> None:
    scenario = CASE.scenario()
    result = assign_scenario(scenario, "high_availability")
    clients = result_to_document(result)["clients"]
    zone = {str(pid): c.client_tags["zone"] for pid, c in scenario.state.clients.items()}
    active_zone = {t: zone[pid] for pid, c in clients.items() for t in c["active"]}
    for pid, c in clients.items():
        assert len(c["standby"]) == 1
        assert all(zone[pid] != active_zone[t] for t in c["standby"])
    metrics = compute_metrics(scenario.state, result.group)
    assert metrics.standby_pile_up == 1.0
    assert standby_pile_up_problems(metrics) == ()
    assert "pile_up" not in {f.check for f in check_case("high_availability", scenario).findings}
