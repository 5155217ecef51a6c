from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.errors import UserInputError
from taskassign.simulate import simulate
from taskassign.simulate.result import SimulationResult
from tests.helpers import PID_1, PID_2, PID_3, client, task
from tests.simulate.assignors import DOUBLE_ACTIVE, FOLLOWUP, WARMUP
from tests.simulate.scenarios import advance, events, join, one_client_owns_everything

START = 1_000_000
FAST = {"acceptable_recovery_lag": 10_000, "probing_rebalance_interval_ms": 60_000}


def timeline(result: SimulationResult) -> list[tuple[int, tuple[str, ...]]]:
    return [(r.time_ms - START, r.reasons) for r in result.rebalances]


def test_four_tasks_move_to_a_new_client_one_warmup_at_a_time() -> None:
    # Round-robin wants 0_1 and 0_3 on P2; one warm-up per rebalance, each restores in 10 s (< 60 s).
    scenario = one_client_owns_everything(4, max_warmup_replicas=1, **FAST)
    result = simulate(scenario, events(join(PID_2)), WARMUP)
    assert timeline(result) == [
        (0, ("initial",)), (0, ("join",)),
        (60_000, ("probing",)), (60_000, ("revocation",)),
        (120_000, ("probing",)), (120_000, ("revocation",)),
    ]
    assert result.probing_rebalances == 2 and result.converged and result.settled_at_ms == 120_000
    final = result.last_result
    assert final is not None
    assert [str(t) for t in final.group.clients[PID_2].active_tasks()] == ["0_1", "0_3"]
    assert not final.group.clients[PID_2].standby_tasks()


def test_eager_protocol_hands_tasks_over_without_revocation_rebalances() -> None:
    scenario = one_client_owns_everything(4, max_warmup_replicas=1, **FAST)
    result = simulate(scenario, events(join(PID_2), protocol="eager"), WARMUP)
    assert timeline(result) == [(0, ("initial",)), (0, ("join",)), (60_000, ("probing",)), (120_000, ("probing",))]


def test_two_warmups_move_both_tasks_in_one_probing_rebalance() -> None:
    scenario = one_client_owns_everything(4, max_warmup_replicas=2, **FAST)
    result = simulate(scenario, events(join(PID_2)), WARMUP)
    assert result.probing_rebalances == 1 and result.count("revocation") == 1 and result.converged


def test_slow_restores_need_several_probing_intervals() -> None:
    # Two warm-ups share 1,000 records/s: each needs 990,000 records to be within the acceptable lag,
    # i.e. 1,980 s; probing rebalances every 600 s find them caught up at the 4th (2,400 s).
    scenario = one_client_owns_everything(4, end=1_000_000, max_warmup_replicas=2, acceptable_recovery_lag=10_000)
    result = simulate(scenario, events(join(PID_2, restore_rate=1_000)), WARMUP)
    probes = [r.time_ms - START for r in result.rebalances if "probing" in r.reasons]
    assert probes == [600_000, 1_200_000, 1_800_000, 2_400_000]
    records_left = [r.standby_records_left for r in result.rebalances if "probing" in r.reasons]
    assert records_left == [1_400_000, 800_000, 200_000, 0]


def test_restore_rate_event_speeds_up_the_warmups() -> None:
    scenario = one_client_owns_everything(4, end=1_000_000, max_warmup_replicas=2, acceptable_recovery_lag=10_000)
    result = simulate(scenario, events(join(PID_2, restore_rate=1_000), advance(1),
                                       {"type": "restore_rate", "client": str(PID_2), "records_per_s": 100_000}),
                      WARMUP)
    assert result.probing_rebalances == 1


def test_a_crash_is_noticed_after_the_session_timeout_and_tasks_stop_meanwhile() -> None:
    scenario = one_client_owns_everything(2, extra_clients=[client(PID_2)], **FAST)
    script = events(advance(10_000), {"type": "crash", "client": str(PID_1)})
    result = simulate(scenario, script, WARMUP)
    crash = next(r for r in result.rebalances if "crash" in r.reasons)
    assert crash.time_ms - START == 10_000 + 45_000
    first_down = next(i for i, s in enumerate(result.samples) if s.clients_alive == 1)
    assert result.samples[first_down - 1].tasks_not_running == 0  # just before the crash
    down = [s for s in result.samples[first_down:] if s.time_ms < crash.time_ms or s.tasks_not_running == 2]
    assert [s.time_ms - START for s in down][:1] == [10_000] and down[-1].time_ms == crash.time_ms
    assert all(s.tasks_not_running == 2 for s in down)
    assert result.samples[-1].tasks_not_running == 0  # P2 restored both and runs them


def test_leave_is_immediate_and_the_next_member_leads() -> None:
    scenario = one_client_owns_everything(2, extra_clients=[client(PID_2), client(PID_3)], **FAST)
    result = simulate(scenario, events(advance(5_000), {"type": "leave", "client": str(PID_1)}), WARMUP)
    assert timeline(result)[:2] == [(0, ("initial",)), (5_000, ("leave",))]
    assert result.rebalances[0].leader == str(PID_1)
    assert result.rebalances[1].leader == str(PID_2)


def test_follow_up_deadlines_are_honoured_and_max_rebalances_stops_a_run_that_never_settles() -> None:
    scenario = one_client_owns_everything(1, extra_clients=[client(PID_2)], **FAST)
    result = simulate(scenario, events(max_rebalances=4), FOLLOWUP)
    assert timeline(result) == [(0, ("initial",)), (5_000, ("followup",)), (10_000, ("followup",)),
                                (15_000, ("followup",))]
    assert result.stopped_reason is not None and "max_rebalances" in result.stopped_reason
    assert not result.converged


def test_until_stops_the_clock_and_the_run_settles_restores_otherwise() -> None:
    scenario = one_client_owns_everything(4, end=1_000_000, max_warmup_replicas=2, acceptable_recovery_lag=10_000)
    cut = simulate(scenario, events(join(PID_2, restore_rate=1_000), until_ms=700_000), WARMUP)
    assert cut.end_ms == START + 700_000 and cut.probing_rebalances == 1 and not cut.converged
    settled = simulate(scenario, events(join(PID_2)), WARMUP)
    assert settled.samples[-1].records_left == 0 and settled.converged


def test_rolling_restart_takes_clients_down_one_after_another() -> None:
    scenario = one_client_owns_everything(2, extra_clients=[client(PID_2)], **FAST)
    result = simulate(scenario, events({"type": "rolling_restart", "downtime_ms": 10_000, "interval_ms": 30_000}),
                      WARMUP)
    membership = [(t, reasons) for t, reasons in timeline(result) if "leave" in reasons or "rejoin" in reasons]
    assert membership == [(0, ("leave",)), (10_000, ("rejoin",)), (30_000, ("leave",)), (40_000, ("rejoin",))]


def test_rack_down_crashes_its_clients_and_rack_up_brings_them_back() -> None:
    scenario = one_client_owns_everything(
        2, rack="a", extra_clients=[client(PID_2, rack="b"), client(PID_3, rack="b")], **FAST)
    result = simulate(scenario, events({"type": "rack_down", "rack": "b"}, advance(100_000),
                                       {"type": "rack_up", "rack": "b"}), WARMUP)
    crash = next(r for r in result.rebalances if "crash" in r.reasons)
    assert crash.metrics["clients"] == 1
    rejoin = next(r for r in result.rebalances if "rejoin" in r.reasons)
    assert rejoin.metrics["clients"] == 3 and rejoin.time_ms - START == 100_000


def test_append_rate_grows_the_changelogs() -> None:
    scenario = one_client_owns_everything(1, end=1_000, **FAST)
    result = simulate(scenario, events({"type": "append_rate", "records_per_s": 10}, advance(60_000),
                                       {"type": "rebalance"}), WARMUP)
    assert result.final_scenario.state.changelog_end_offset_sums[task("0_0").id] == 1_000 + 600
    assert timeline(result)[-1] == (60_000, ("forced",))


def test_perturbations_are_deterministic_for_a_seed() -> None:
    scenario = one_client_owns_everything(6, extra_clients=[client(PID_2), client(PID_3)], **FAST)
    script = events({"type": "perturb", "count": 4}, advance(120_000), {"type": "perturb", "count": 4})
    a = simulate(scenario, script, WARMUP, seed=11).to_document()
    b = simulate(scenario, script, WARMUP, seed=11).to_document()
    c = simulate(scenario, script, WARMUP, seed=12).to_document()
    assert a == b
    assert a != c


def test_an_invalid_assignment_stops_the_run() -> None:
    scenario = one_client_owns_everything(1, extra_clients=[client(PID_2)], **FAST)
    result = simulate(scenario, events(), DOUBLE_ACTIVE)
    assert result.rebalances[0].error == "ACTIVE_TASK_ASSIGNED_MULTIPLE_TIMES"
    assert result.stopped_reason is not None and "failed validation" in result.stopped_reason


@pytest.mark.parametrize(("event", "message"), [
    ({"type": "leave", "client": str(PID_3)}, r"\$\.events\[0\]: client .* is not in the scenario"),
    ({"type": "rejoin", "client": str(PID_1)}, r"\$\.events\[0\]: client .* is not down"),
    ({"type": "crash", "count": 5}, r"asks for 5 clients but only 1 are running"),
    (join(PID_1), r"\$\.events\[0\]\.process_id: client .* is already known"),
    ({"type": "append_rate", "tasks": ["9_9"], "records_per_s": 1}, r"task 9_9 has no changelog"),
])
def test_bad_references_name_the_event(event: dict[str, object], message: str) -> None:
    scenario = one_client_owns_everything(1, **FAST)
    with pytest.raises(UserInputError, match=message):
        simulate(scenario, events(event), WARMUP)


_EVENT = st.one_of(
    st.builds(lambda ms: advance(ms), st.integers(0, 400_000)),
    st.builds(lambda n, t: {"type": "perturb", "count": n, "threads": t}, st.integers(1, 3), st.integers(1, 3)),
    st.just({"type": "rolling_restart", "downtime_ms": 20_000, "interval_ms": 40_000}),
    st.builds(lambda r: {"type": "restore_rate", "records_per_s": r}, st.integers(100, 50_000)),
    st.builds(lambda r: {"type": "append_rate", "records_per_s": r}, st.integers(0, 50)),
    st.just({"type": "rebalance"}),
)


@settings(max_examples=25)
@given(st.lists(_EVENT, max_size=8), st.integers(0, 2**32), st.sampled_from(["cooperative", "eager"]))
def test_any_script_replays_identically_and_keeps_time_and_counts_sane(
    script: list[dict[str, object]], seed: int, protocol: str
) -> None:
    scenario = one_client_owns_everything(5, stateless=2, extra_clients=[client(PID_2)], max_warmup_replicas=1,
                                          **FAST)
    parsed = events(*script, protocol=protocol, max_rebalances=200)
    first = simulate(scenario, parsed, WARMUP, seed=seed)
    assert first.to_document() == simulate(scenario, parsed, WARMUP, seed=seed).to_document()
    times = [s.time_ms for s in first.samples]
    assert times == sorted(times) and [r.time_ms for r in first.rebalances] == sorted(r.time_ms
                                                                                      for r in first.rebalances)
    for record in first.rebalances:
        assert record.error == "NONE"
        assert record.metrics["unassigned_tasks"] == 0 and 0 <= record.tasks_not_running <= 7
    if first.stopped_reason is None and first.rebalances:
        assert first.converged == (first.rebalances[-1].next_followup_ms is None
                                   and not first.rebalances[-1].withheld_tasks)


@pytest.mark.parametrize("kind", ["rack_down", "rack_up"])
def test_a_rack_no_client_has_is_an_error_naming_the_event(kind: str) -> None:
    """Issue 18, point 9: rack_down of an unknown rack was ignored silently."""
    scenario = one_client_owns_everything(2, rack="a", extra_clients=[client(PID_2, rack="b")], **FAST)
    with pytest.raises(UserInputError, match=r"\$\.events\[1\]\.rack: no client has rack 'c' \(the clients' racks: "
                                              r"a, b\)"):
        simulate(scenario, events(advance(1_000), {"type": kind, "rack": "c"}), WARMUP)


def test_a_known_rack_with_nobody_to_act_on_is_a_note() -> None:
    scenario = one_client_owns_everything(2, rack="a", extra_clients=[client(PID_2, rack="b")], **FAST)
    result = simulate(scenario, events({"type": "rack_up", "rack": "b"}), WARMUP)
    assert any("no down client in rack 'b'" in n for n in result.notes)


def test_a_tiny_sample_interval_is_bounded() -> None:
    """Issue 18, point 9: sample_interval_ms 1 made a run practically endless; it stops at MAX_SAMPLES."""
    from taskassign.simulate.runner import MAX_SAMPLES

    scenario = one_client_owns_everything(4, end=10**9, max_warmup_replicas=2, **FAST)
    result = simulate(scenario, events(join(PID_2, restore_rate=1), sample_interval_ms=1), WARMUP)
    assert len(result.samples) == MAX_SAMPLES
    assert result.stopped_reason is not None and "raise sample_interval_ms" in result.stopped_reason
