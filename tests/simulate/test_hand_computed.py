"""Probing rebalances to convergence, counted by hand (the arithmetic is in each test's comments).

Common setup unless stated: 4 changelog tasks 0_0..0_3 with end offset sum 100,000, one thread per
client, acceptable.recovery.lag 10,000, probing.rebalance.interval.ms 60,000, restore 10,000 records/s
per client (so a warm-up of one task catches up in 10 s), cooperative protocol. The high-availability
assignor's round-robin puts 0_0, 0_2 on the first client and 0_1, 0_3 on the second (its round-robin);
a task whose target is not caught up stays on a caught-up client, and the target gets a warm-up while
``max.warmup.replicas`` lasts (``TaskMovement.assignActiveTaskMovements``). The first three cases hold for the test
stand-in WarmupAssignor too.
"""

from __future__ import annotations

import pytest

from taskassign.assignors.registry import BUILTIN_ASSIGNORS
from taskassign.configs import AssignmentConfigs
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, KafkaStreamsState
from taskassign.simulate import simulate
from taskassign.simulate.result import SimulationResult
from tests.helpers import PID_1, PID_2, PID_3, task, tid
from tests.simulate.assignors import WARMUP
from tests.simulate.scenarios import advance, events, join, one_client_owns_everything

HA = "high_availability"
needs_ha = pytest.mark.skipif(HA not in BUILTIN_ASSIGNORS,
                              reason="the high-availability assignor has not landed on this branch yet")
BOTH = [pytest.param(WARMUP, id="warmup-stand-in"), pytest.param(HA, id=HA, marks=needs_ha)]
START = 1_000_000
FAST = {"acceptable_recovery_lag": 10_000, "probing_rebalance_interval_ms": 60_000}


def reasons(result: SimulationResult) -> list[tuple[int, tuple[str, ...]]]:
    return [(r.time_ms - START, r.reasons) for r in result.rebalances]


def actives(result: SimulationResult) -> dict[str, list[str]]:
    assert result.last_result is not None
    return {str(pid)[-1]: [str(t) for t in a.active_tasks()] for pid, a in result.last_result.group.clients.items()}


@pytest.mark.parametrize("assignor", BOTH)
def test_case_a_four_tasks_to_a_new_client_with_one_warmup(assignor: str) -> None:
    # join: 0_1 and 0_3 target P2, which has nothing; both stay on P1, one warm-up (0_1) -> probing.
    # +60 s: P2 restored 0_1 in 10 s, takes it (handed over at the revocation rebalance); 0_3 gets the warm-up.
    # +120 s: 0_3 caught up, handed over; nothing left to move -> 2 probing rebalances.
    scenario = one_client_owns_everything(4, max_warmup_replicas=1, **FAST)
    result = simulate(scenario, events(join(PID_2)), assignor)
    assert result.probing_rebalances == 2
    assert reasons(result) == [(0, ("initial",)), (0, ("join",)), (60_000, ("probing",)), (60_000, ("revocation",)),
                               (120_000, ("probing",)), (120_000, ("revocation",))]
    assert actives(result) == {"1": ["0_0", "0_2"], "2": ["0_1", "0_3"]} and result.converged


@pytest.mark.parametrize("assignor", BOTH)
def test_case_b_two_warmups_move_both_tasks_at_the_first_probing_rebalance(assignor: str) -> None:
    scenario = one_client_owns_everything(4, max_warmup_replicas=2, **FAST)
    result = simulate(scenario, events(join(PID_2)), assignor)
    assert result.probing_rebalances == 1
    assert actives(result) == {"1": ["0_0", "0_2"], "2": ["0_1", "0_3"]} and result.converged


@pytest.mark.parametrize("assignor", BOTH)
def test_case_c_warmups_slower_than_the_probing_interval(assignor: str) -> None:
    # End offset sums 1,000,000, P2 restores 1,000 records/s shared by its two warm-ups (500/s each), and must
    # be within 10,000 records: 990,000 / 500 = 1,980 s. Probing every 600 s: still behind at 600, 1,200 and
    # 1,800 s (warm-ups re-placed each time), caught up at 2,400 s -> 4 probing rebalances.
    scenario = one_client_owns_everything(4, end=1_000_000, max_warmup_replicas=2, acceptable_recovery_lag=10_000)
    result = simulate(scenario, events(join(PID_2, restore_rate=1_000)), assignor)
    assert [t for t, why in reasons(result) if "probing" in why] == [600_000, 1_200_000, 1_800_000, 2_400_000]
    assert result.probing_rebalances == 4 and result.converged


def two_clients_in_ha_layout(**configs: int) -> Scenario:
    """P1 runs 0_0, 0_2 and holds caught-up standbys of 0_1, 0_3; P2 the mirror: what the high-availability
    assignor itself computes for two clients with one standby, so the first rebalance changes nothing."""

    def member(pid: ProcessId, active: list[str], standby: list[str]) -> KafkaStreamsState:
        offsets = {tid(t): -2 for t in active} | {tid(t): 100_000 for t in standby}
        return KafkaStreamsState(pid, (f"{pid}-StreamThread-1",), previous_active_tasks=frozenset(map(tid, active)),
                                 task_offset_sums=offsets)

    state = ApplicationState(
        tasks=[task(f"0_{p}", end=100_000) for p in range(4)],
        clients=[member(PID_1, ["0_0", "0_2"], ["0_1", "0_3"]), member(PID_2, ["0_1", "0_3"], ["0_0", "0_2"])],
        configs=AssignmentConfigs(num_standby_replicas=1, max_warmup_replicas=2, **FAST, **configs), now_ms=START)
    return Scenario("two-clients", state)


@needs_ha
def test_case_d_third_client_joins_with_standbys() -> None:
    # P3 joins. Round-robin: P1 {0_0, 0_3}, P2 {0_1}, P3 {0_2}; load-based standbys: 0_0->P2, 0_1->P3, 0_2->P1,
    # 0_3->P2. 0_2 on P3 (not caught up) is swapped with P1's caught-up standby (no warm-up budget used); P3's
    # standbys 0_1 and 0_2 move to P1 and P2 and P3 keeps both copies as warm-ups -> probing. 0_3 changes owner
    # (P2 -> P1), so a revocation rebalance follows and takes the same decision. +60 s: P3 caught up on both in
    # 20 s -> 0_2 is handed to P3 (another revocation rebalance), nothing pending -> 1 probing rebalance.
    result = simulate(two_clients_in_ha_layout(), events(join(PID_3)), HA)
    assert reasons(result) == [(0, ("initial",)), (0, ("join",)), (0, ("revocation",)), (60_000, ("probing",)),
                               (60_000, ("revocation",))]
    assert result.probing_rebalances == 1 and result.converged
    assert actives(result) == {"1": ["0_0", "0_3"], "2": ["0_1"], "3": ["0_2"]}
    assert result.rebalances[-1].metrics["standby_shortfall_tasks"] == 0
    assert result.rebalances[-1].metrics["extra_standby_replicas"] == 0


@needs_ha
def test_case_e_crash_then_rejoin_behind_the_changelog() -> None:
    # Two clients in HA's own layout, every changelog grows 100 records/s. P1 crashes at 30 s; at 75 s (session
    # timeout) P2 is caught up on everything and runs all four, no probing. P1 rejoins at 300 s, 27,000 records
    # behind (> 10,000) on all four: its round-robin tasks 0_0, 0_2 are swapped with P2's standbys (P1 keeps them
    # as standbys), probing. P1 restores 4 x 27,000 at 10,000/s (~11 s, ahead of the appends); at 360 s everything
    # is caught up -> 1 probing rebalance.
    script = events({"type": "append_rate", "records_per_s": 100}, advance(30_000),
                    {"type": "crash", "client": str(PID_1)}, advance(270_000),
                    {"type": "rejoin", "client": str(PID_1)})
    result = simulate(two_clients_in_ha_layout(), script, HA)
    assert reasons(result) == [(0, ("initial",)), (75_000, ("crash",)), (300_000, ("rejoin",)),
                               (360_000, ("probing",)), (360_000, ("revocation",))]
    assert result.probing_rebalances == 1 and result.converged
    crash = result.rebalances[1]
    assert crash.metrics["records_to_restore"] == 0 and not crash.probing_rebalance_needed
    assert actives(result) == {"1": ["0_0", "0_2"], "2": ["0_1", "0_3"]}
