"""HighAvailabilityTaskAssignor: examples from Kafka's HighAvailabilityTaskAssignorTest (E1-E5) and its properties
(P8-P17)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any

import pytest

from taskassign.assignors import high_availability
from taskassign.assignors.high_availability import HighAvailabilityTaskAssignor, assign_high_availability
from taskassign.assignors.registry import DEFAULT_ASSIGNOR, create_assignor
from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.errors import TaskassignError, UserInputError
from taskassign.ids import ProcessId, TaskId
from taskassign.leader.run import rebalance
from taskassign.model import LATEST_OFFSET, ApplicationState, KafkaStreamsState, TaskAssignment
from taskassign.standby.base import StandbyMovePredicate
from taskassign.validation import check_completeness
from tests.helpers import PID, PID_1, PID_2, PID_3, app_state, client, task, tid

LONG_MAX = 2**63 - 1


def layout(result: TaskAssignment) -> dict[ProcessId, tuple[list[str], list[str]]]:
    """Each client's (active, standby) task ids as sorted strings."""
    return {a.process_id: ([str(t) for t in a.active_tasks()], [str(t) for t in a.standby_tasks()])
            for a in result.assignments}


def names(*texts: str) -> list[str]:
    return list(texts)


def run(state: ApplicationState) -> TaskAssignment:
    result = HighAvailabilityTaskAssignor().assign(state)
    assert result == assign_high_availability(state, java_heap=True)  # the reference agrees
    return result


def test_registered_as_the_default_assignor() -> None:
    assert DEFAULT_ASSIGNOR == "high_availability"
    assert isinstance(create_assignor("high_availability"), HighAvailabilityTaskAssignor)
    assert HighAvailabilityTaskAssignor.fallback_when_lags_unknown == "fallback_prior"


def test_e1_active_goes_to_the_most_caught_up_client() -> None:
    state = app_state(
        [task("0_0", end=LONG_MAX)],
        [client(PID_1), client(PID_2, offsets={"0_0": LONG_MAX - 1000}),
         client(PID_3, offsets={"0_0": LONG_MAX - 500})],
        acceptable_recovery_lag=100, max_warmup_replicas=2, num_standby_replicas=1,
    )
    result = run(state)
    assert layout(result) == {PID_1: ([], ["0_0"]), PID_2: ([], ["0_0"]), PID_3: (["0_0"], [])}
    assert result.probing_rebalance_needed


def test_e2_sticky_while_warming_up() -> None:
    ids = [f"{s}_{p}" for s in range(3) for p in range(3)]
    state = app_state(
        [task(t, end=LONG_MAX) for t in ids],
        [client(PID_1, prev_active=ids, offsets=dict.fromkeys(ids, LONG_MAX)),
         client(PID_2, prev_standby=ids, offsets=dict.fromkeys(ids, LONG_MAX - 10)),
         client(PID_3)],
        acceptable_recovery_lag=11, max_warmup_replicas=2, num_standby_replicas=1,
    )
    result = run(state)
    assert layout(result) == {
        PID_1: (names("0_0", "0_2", "1_0", "2_0", "2_2"), names("0_1", "1_1", "1_2", "2_1")),
        PID_2: (names("0_1", "1_1", "1_2", "2_1"), names("0_0", "0_2", "1_0", "2_0", "2_2")),
        PID_3: ([], names("0_1", "0_2")),
    }
    assert result.probing_rebalance_needed


def test_e3_new_client_gets_stateless_tasks_and_a_warm_up() -> None:
    state = app_state(
        [task("0_0", end=1000), task("0_1", end=1000), task("1_0", stateful=False), task("1_1", stateful=False)],
        [client(PID_1, prev_active=["0_0", "0_1"], offsets={"0_0": -2, "0_1": -2}), client(PID_2)],
        acceptable_recovery_lag=100, max_warmup_replicas=2,
    )
    result = run(state)
    assert layout(result) == {PID_1: (names("0_0", "0_1"), []), PID_2: (names("1_0", "1_1"), ["0_1"])}
    assert result.probing_rebalance_needed


def test_e3b_balanced_previous_assignment_migrates_to_the_round_robin_layout() -> None:
    tasks = [task(f"0_{p}", end=1000) for p in range(4)]
    configs: dict[str, Any] = {"acceptable_recovery_lag": 100, "max_warmup_replicas": 2}
    round_one = run(app_state(tasks, [
        client(PID_1, prev_active=["0_0", "0_1"], offsets={"0_0": -2, "0_1": -2}),
        client(PID_2, prev_active=["0_2", "0_3"], offsets={"0_2": -2, "0_3": -2}),
    ], **configs))
    assert layout(round_one) == {PID_1: (names("0_0", "0_1"), ["0_2"]), PID_2: (names("0_2", "0_3"), ["0_1"])}
    assert round_one.probing_rebalance_needed
    round_two = run(app_state(tasks, [  # the warm-ups caught up (lag 0)
        client(PID_1, prev_active=["0_0", "0_1"], offsets={"0_0": -2, "0_1": -2, "0_2": 1000}),
        client(PID_2, prev_active=["0_2", "0_3"], offsets={"0_2": -2, "0_3": -2, "0_1": 1000}),
    ], **configs))
    assert layout(round_two) == {PID_1: (names("0_0", "0_2"), []), PID_2: (names("0_1", "0_3"), [])}
    assert not round_two.probing_rebalance_needed


def test_e4_capacity_weighting() -> None:
    stateful = [task(f"{s}_{p}", end=10) for s in range(3) for p in range(3)]
    stateless = [task(f"3_{p}", stateful=False) for p in range(3)]
    state = app_state(stateful + stateless, [client(PID_1, threads=6), client(PID_2, threads=3)],
                      acceptable_recovery_lag=0, max_warmup_replicas=1)
    result = run(state)
    assert layout(result) == {
        PID_1: (names("0_0", "0_1", "0_2", "1_1", "2_0", "2_2", "3_0", "3_2"), []),
        PID_2: (names("1_0", "1_2", "2_1", "3_1"), []),
    }
    assert not result.probing_rebalance_needed


def test_e5_fresh_cluster_with_standbys() -> None:
    state = app_state(
        [task(f"0_{p}", end=10) for p in range(4)] + [task("1_0", stateful=False), task("1_1", stateful=False)],
        [client(PID_1), client(PID_2), client(PID_3)],
        acceptable_recovery_lag=0, max_warmup_replicas=2, num_standby_replicas=1,
    )
    result = run(state)
    assert layout(result) == {
        PID_1: (names("0_0", "0_3"), ["0_2"]),
        PID_2: (names("0_1", "1_0"), names("0_0", "0_3")),
        PID_3: (names("0_2", "1_1"), ["0_1"]),
    }
    assert not result.probing_rebalance_needed


def test_p8_previous_round_robin_layout_with_caught_up_owners_is_kept_without_probing() -> None:
    clients = [client(PID_1, prev_active=["0_0", "0_2"], offsets={"0_0": -2, "0_2": -2}),
               client(PID_2, prev_active=["0_1", "0_3"], offsets={"0_1": -2, "0_3": -2})]
    result = run(app_state([task(f"0_{p}", end=500) for p in range(4)], clients, acceptable_recovery_lag=100))
    assert layout(result) == {PID_1: (names("0_0", "0_2"), []), PID_2: (names("0_1", "0_3"), [])}
    assert not result.probing_rebalance_needed


def test_p10_swapping_in_a_caught_up_standby_needs_no_warm_up_budget() -> None:
    # round-robin puts 0_0 on P1 (not caught up); P2 holds a caught-up standby of it
    state = app_state([task("0_0", end=1000)],
                      [client(PID_1), client(PID_2, prev_standby=["0_0"], offsets={"0_0": 1000})],
                      acceptable_recovery_lag=0, max_warmup_replicas=1, num_standby_replicas=1)
    result = run(state)
    assert layout(result) == {PID_1: ([], ["0_0"]), PID_2: (["0_0"], [])}
    assert result.details["warmup_replicas"] == 0


def test_p10_at_most_max_warmup_replicas_extra_copies() -> None:
    tasks = [task(f"0_{p}", end=1000) for p in range(6)]
    owner = client(PID_1, prev_active=[f"0_{p}" for p in range(6)], offsets={f"0_{p}": -2 for p in range(6)})
    result = run(app_state(tasks, [owner, client(PID_2), client(PID_3)], max_warmup_replicas=2,
                           acceptable_recovery_lag=100))
    # P2 and P3 got four tasks by round-robin; all moved back to P1, only two leave a warm-up
    assert layout(result)[PID_1][0] == [f"0_{p}" for p in range(6)]
    assert sum(len(a.standby_tasks()) for a in result.assignments) == 2
    assert result.probing_rebalance_needed


def test_p11_unbounded_acceptable_lag_never_probes() -> None:
    state = app_state([task(f"0_{p}", end=10**9) for p in range(4)],
                      [client(PID_1, offsets={"0_0": -3}), client(PID_2), client(PID_3, offsets={"0_1": 5})],
                      acceptable_recovery_lag=UNBOUNDED_RECOVERY_LAG, num_standby_replicas=1)
    result = run(state)
    assert not result.probing_rebalance_needed
    assert result.details["warmup_replicas"] == 0


def test_p12_nobody_caught_up_active_goes_to_the_lowest_lag_with_a_warm_up_behind() -> None:
    state = app_state([task("0_0", end=10_000)],
                      [client(PID_1, offsets={"0_0": 1_000}), client(PID_2, offsets={"0_0": 9_000})],
                      acceptable_recovery_lag=10)
    result = run(state)
    assert layout(result) == {PID_1: ([], ["0_0"]), PID_2: (["0_0"], [])}
    assert result.probing_rebalance_needed


def test_unknown_offset_sorts_first_in_lag_order_a_kafka_quirk() -> None:
    # P2 reported -3 (unknown): it counts as the most caught-up client and pulls the active over
    state = app_state([task("0_0", end=10_000)], [client(PID_1, offsets={"0_0": 5_000}),
                                                  client(PID_2, offsets={"0_0": -3})],
                      acceptable_recovery_lag=10)
    result = run(state)
    assert layout(result) == {PID_1: ([], ["0_0"]), PID_2: (["0_0"], [])}


def test_p13_no_standbys_on_a_single_client_and_none_for_stateless_tasks() -> None:
    state = app_state([task("0_0"), task("0_1"), task("1_0", stateful=False)], [client(PID_1)],
                      num_standby_replicas=2)
    assert layout(run(state)) == {PID_1: (names("0_0", "0_1", "1_0"), [])}
    two = run(app_state([task("0_0"), task("1_0", stateful=False)], [client(PID_1), client(PID_2)],
                        num_standby_replicas=3))
    assert all(str(t) != "1_0" for a in two.assignments for t in a.standby_tasks())


@pytest.mark.parametrize(("threads", "tasks", "expected"), [((1, 2, 3), 6, (1, 2, 3)), ((6, 3), 9, (6, 3))])
def test_p14_capacity_weighting(threads: tuple[int, ...], tasks: int, expected: tuple[int, ...]) -> None:
    state = app_state([task(f"0_{p}", end=10) for p in range(tasks)],
                      [client(PID[i + 1], threads=n) for i, n in enumerate(threads)], acceptable_recovery_lag=0)
    assert tuple(len(a.active_tasks()) for a in run(state).assignments) == expected


def test_all_clients_caught_up_gives_the_balanced_round_robin() -> None:
    state = app_state([task(f"0_{p}") for p in range(7)], [client(PID[n]) for n in (1, 2, 3)])  # end 0: caught up
    result = run(state)
    assert [len(a.active_tasks()) for a in result.assignments] == [3, 2, 2]
    assert not result.probing_rebalance_needed


def _catch_up(state: ApplicationState, result: TaskAssignment) -> ApplicationState:
    """The next rebalance after every replica restored: actives report -2, standbys lag 0."""
    ends = state.changelog_end_offset_sums
    clients = []
    for assignment in result.assignments:
        offsets = {t: ends[t] for t in assignment.standby_tasks()}
        offsets.update(dict.fromkeys((t for t in assignment.active_tasks() if t in ends), LATEST_OFFSET))
        old = state.clients[assignment.process_id]
        clients.append(KafkaStreamsState(assignment.process_id, old.consumer_client_ids,
                                         assignment.active_tasks(), assignment.standby_tasks(), offsets))
    return ApplicationState(state.tasks, clients, state.configs)


def _rebalances_until_stable(state: ApplicationState, limit: int = 100) -> tuple[int, ApplicationState]:
    for iteration in range(1, limit + 1):
        result = run(state)
        state = _catch_up(state, result)
        if not result.probing_rebalance_needed:
            return iteration, state
    raise AssertionError("no convergence")


@pytest.mark.parametrize("replicas", [0, 1])
def test_p16_convergence_after_adding_and_dropping_a_client(replicas: int) -> None:
    warmups = 2
    tasks = [task(f"{s}_{p}", end=1000) for s in range(2) for p in range(6)]
    state = app_state(tasks, [client(PID[n]) for n in (1, 2, 3)], acceptable_recovery_lag=100,
                      max_warmup_replicas=warmups, num_standby_replicas=replicas)
    _, state = _rebalances_until_stable(state)
    static, _ = _rebalances_until_stable(state)
    assert static == 1
    grown = ApplicationState(state.tasks, [*state.clients.values(), client(PID[4])], state.configs)
    added, state = _rebalances_until_stable(grown)
    assert added <= len(tasks) // warmups + 1
    shrunk = ApplicationState(state.tasks, [c for p, c in state.clients.items() if p != PID[2]], state.configs)
    dropped, state = _rebalances_until_stable(shrunk)
    assert dropped <= len(tasks) // warmups + 2
    final = run(state)
    assert not check_completeness(state, final).unassigned_tasks
    loads = [len(a.active_tasks()) for a in final.assignments]
    assert max(loads) - min(loads) <= 1  # P5: balanced once converged
    stateful = [len(a.active_tasks()) + len(a.standby_tasks()) for a in final.assignments]
    assert max(stateful) - min(stateful) <= 1  # P6
    for sub in (0, 1):  # P7: every subtopology spread
        per_client = [sum(1 for t in a.active_tasks() if t.subtopology == sub) for a in final.assignments]
        assert max(per_client) - min(per_client) <= 1


class _RecordingOptimizer:
    """Stands in for the rack-aware optimiser: records the calls, changes nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def can_enable_rack_aware_assignor(self) -> bool:
        return True

    def active_number_moves(
        self, tasks: Sequence[int], active: Mapping[ProcessId, Set[int]], traffic_cost: int,
        non_overlap_cost: int,
    ) -> tuple[list[tuple[int, ProcessId, ProcessId]], int]:
        self.calls.append(("active", traffic_cost, non_overlap_cost))
        return [], 0

    def standby_task_moves(
        self, active: Mapping[ProcessId, Set[TaskId]], standby: Mapping[ProcessId, Set[TaskId]],
        traffic_cost: int, non_overlap_cost: int, can_move: StandbyMovePredicate,
    ) -> list[tuple[TaskId, ProcessId, ProcessId]]:
        self.calls.append(("standby", traffic_cost, non_overlap_cost))
        pids = sorted(standby)
        can_move(pids[0], pids[1], tid("0_0"), active, standby)  # the predicate takes the assignment maps
        return []


@pytest.mark.parametrize(("replicas", "costs", "expected"), [
    (0, {}, [("active", 10, 1), ("active", 1, 0)]),
    (1, {}, [("active", 10, 1), ("standby", 10, 1), ("active", 1, 0)]),
    (1, {"rack_aware_traffic_cost": 3, "rack_aware_non_overlap_cost": 0},
     [("active", 3, 0), ("standby", 3, 0), ("active", 1, 0)]),
])
def test_p17_rack_optimiser_calls_and_costs(
    monkeypatch: pytest.MonkeyPatch, replicas: int, costs: dict[str, int], expected: list[tuple[str, int, int]],
) -> None:
    optimizer = _RecordingOptimizer()
    monkeypatch.setattr(high_availability, "make_rack_aware_assignor", lambda state: optimizer)
    state = app_state([task("0_0"), task("0_1"), task("1_0", stateful=False)],
                      [client(PID_1, tags={"zone": "a"}), client(PID_2, tags={"zone": "b"})],
                      num_standby_replicas=replicas, rack_aware_assignment_strategy="min_traffic",
                      rack_aware_assignment_tags=["zone"], **costs)
    assign_high_availability(state)
    assert optimizer.calls == expected


def test_rack_optimiser_only_when_it_can_be_enabled() -> None:
    assert high_availability.make_rack_aware_assignor(app_state([task("0_0")], [client(PID_1)])) is None
    no_racks = app_state([task("0_0")], [client(PID_1)], rack_aware_assignment_strategy="min_traffic")
    assert high_availability.make_rack_aware_assignor(no_racks) is None
    with_racks = app_state([task("0_0", source_racks=["r1"])], [client(PID_1, rack="r1")],
                           rack_aware_assignment_strategy="min_traffic")
    assert high_availability.make_rack_aware_assignor(with_racks) is not None


def test_no_clients() -> None:
    assert run(app_state([], [])).assignments == ()
    with pytest.raises(TaskassignError, match="no clients"):
        HighAvailabilityTaskAssignor().assign(app_state([task("0_0")], []))


def test_client_without_threads_is_a_user_error() -> None:
    state = app_state([task("0_0")], [KafkaStreamsState(PID_1, ())])
    with pytest.raises(UserInputError, match="no consumers"):
        HighAvailabilityTaskAssignor().assign(state)


def test_leader_puts_the_probing_deadline_on_the_leader_client() -> None:
    state = app_state([task("0_0", end=1000)], [client(PID_1), client(PID_2, offsets={"0_0": -2})],
                      now_ms=1_000, acceptable_recovery_lag=10, probing_rebalance_interval_ms=60_000)
    result = rebalance(state, HighAvailabilityTaskAssignor(), leader=PID_2)
    assert result.probing_rebalance_needed
    assert result.group.clients[PID_2].followup_rebalance_deadline == 61_000
    assert result.group.clients[PID_1].followup_rebalance_deadline is None


def test_input_state_is_not_mutated() -> None:
    state = app_state([task("0_0", end=100), task("0_1", end=100)],
                      [client(PID_1, prev_active=["0_0"], offsets={"0_0": -2}), client(PID_2, offsets={"0_1": 3})],
                      num_standby_replicas=1, acceptable_recovery_lag=1)
    before = repr(state)
    run(state)
    assert repr(state) == before


def test_p15_zero_traffic_cost_keeps_the_layout_of_rack_awareness_off() -> None:
    racks = ["r1", "r2", "r3"]
    tasks = [task(f"{s}_{p}", end=1000, source_racks=[racks[(s + p) % 3]], changelog_racks=[racks[p % 3]])
             for s in range(2) for p in range(5)]
    tasks.append(task("2_0", stateful=False, source_racks=["r1"]))
    clients = [client(PID[n], rack=racks[n % 3], offsets={"0_0": -2} if n == 1 else {}) for n in range(1, 6)]
    common: dict[str, Any] = {"num_standby_replicas": 1, "acceptable_recovery_lag": 100}
    off = run(app_state(tasks, clients, **common))
    on = run(app_state(tasks, clients, rack_aware_assignment_strategy="min_traffic", rack_aware_traffic_cost=0,
                       rack_aware_non_overlap_cost=10, **common))

    def stateful(result: TaskAssignment) -> dict[ProcessId, tuple[list[str], list[str]]]:
        return {pid: ([t for t in a if not t.startswith("2_")], s) for pid, (a, s) in layout(result).items()}

    assert stateful(on) == stateful(off)
