"""The simulator under the streams protocol (KIP-1071): the broker recomputes the target assignment when the
group changes, moves happen at once (no warm-ups, no probing, no revocation rebalance), a crashed member keeps
its tasks until the session timeout, and a client that comes back joins with new member ids."""

from __future__ import annotations

import pytest

from taskassign.errors import UserInputError
from taskassign.formats.events import read_events
from taskassign.formats.scenario import read_scenario
from taskassign.simulate import simulate
from taskassign.simulate.result import SimulationResult
from tests.helpers import EXAMPLES_DIR, PID_2, PID_3
from tests.simulate.scenarios import advance, events, join, one_client_owns_everything

START = 1_000_000


def timeline(result: SimulationResult) -> list[tuple[int, tuple[str, ...]]]:
    return [(r.time_ms - START, r.reasons) for r in result.rebalances]


def test_a_join_moves_tasks_at_once_and_they_restore_where_they_land() -> None:
    result = simulate(one_client_owns_everything(4), events(join(PID_2)), "streams_sticky")
    assert result.protocol == "streams"
    assert timeline(result) == [(0, ("initial",)), (0, ("join",))]
    joined = result.rebalances[1]
    assert joined.metrics["active_moves"] == 2 and joined.metrics["records_to_restore"] == 200_000
    assert joined.tasks_not_running == 2 and joined.leader == "" and not joined.probing_rebalance_needed
    assert result.converged and result.probing_rebalances == 0
    assert result.samples[-1].records_left == 0 and result.samples[-1].tasks_not_running == 0
    assert result.end_ms - START == 20_000  # 200,000 records at 10,000 records/s
    final = result.last_result
    assert final is not None and [str(t) for t in final.group.clients[PID_2].active_tasks()] == ["0_2", "0_3"]


def test_the_classic_protocol_warms_up_instead() -> None:
    classic = simulate(one_client_owns_everything(4, max_warmup_replicas=1, probing_rebalance_interval_ms=60_000),
                       events(join(PID_2)), "high_availability")
    assert classic.probing_rebalances == 2
    assert classic.rebalances[1].tasks_not_running == 0  # the new client only warms up


def test_a_crashed_member_keeps_its_tasks_until_the_session_timeout() -> None:
    script = events(join(PID_2), advance(10_000), {"type": "crash", "client": str(PID_2)}, advance(10_000),
                    join(PID_3))
    result = simulate(one_client_owns_everything(4), script, "streams_sticky")
    assert timeline(result) == [(0, ("initial",)), (0, ("join",)), (20_000, ("join",)), (55_000, ("crash",))]
    during = result.rebalances[2]
    assert during.metrics["clients"] == 3  # the broker still counts the crashed client
    assert during.tasks_not_running == 2  # 0_2 and 0_3 stay on it, not running
    after = result.rebalances[3]
    assert after.metrics["clients"] == 2 and after.metrics["unassigned_tasks"] == 0
    classic = simulate(one_client_owns_everything(4), script, "high_availability")
    assert classic.rebalances[2].metrics["clients"] == 2  # the classic leader's rebalance goes on without it


def test_a_client_that_comes_back_has_new_member_ids_and_its_state_counts_through_offsets() -> None:
    scenario = read_scenario(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
    restart = read_events(EXAMPLES_DIR / "events" / "rolling-restart.events.json")
    result = simulate(scenario, restart, "streams_sticky")
    rejoins = [r for r in result.rebalances if "rejoin" in r.reasons]
    assert len(rejoins) == 3
    assert [r.metrics["records_to_restore"] for r in rejoins] == [0, 0, 0]  # back onto its own local state
    consumers = [c for state in result.final_scenario.state.clients.values() for c in state.consumer_client_ids]
    assert sorted(consumers) == sorted(f"{c}#2" for c in (
        "app-1b6f-StreamThread-1", "app-1b6f-StreamThread-2", "app-5c2d-StreamThread-1", "app-5c2d-StreamThread-2",
        "app-9e4a-StreamThread-1", "app-9e4a-StreamThread-2"))


def test_same_inputs_same_run() -> None:
    scenario = read_scenario(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
    script = read_events(EXAMPLES_DIR / "events" / "random-perturbations.events.json")
    first = simulate(scenario, script, "streams_balanced").to_document()
    assert simulate(scenario, script, "streams_balanced").to_document() == first
    assert first["protocol"] == "streams" and first["summary"]["probing_rebalances"] == 0


def test_protocol_and_assignor_must_agree() -> None:
    with pytest.raises(UserInputError, match="'streams' runs a broker-side assignor"):
        simulate(one_client_owns_everything(2), events(join(PID_2), protocol="streams"), "high_availability")
    with pytest.raises(UserInputError, match="not of the classic 'eager' one"):
        simulate(one_client_owns_everything(2), events(join(PID_2), protocol="eager"), "streams_sticky")
    ok = simulate(one_client_owns_everything(2), events(join(PID_2), protocol="streams"), "streams_balanced")
    assert ok.protocol == "streams"


def test_every_return_gets_new_member_ids() -> None:
    bounce = [{"type": "leave", "client": str(PID_2)}, advance(1_000), {"type": "rejoin", "client": str(PID_2)},
              advance(1_000)]
    result = simulate(one_client_owns_everything(4), events(join(PID_2), advance(1_000), *bounce, *bounce),
                      "streams_sticky")
    assert result.final_scenario.state.clients[PID_2].consumer_client_ids == (f"{PID_2}-StreamThread-1#3",)
