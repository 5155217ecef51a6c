"""FallbackPriorTaskAssignor: example E12c and property P32 (every previous active stays on its owner, probing
requested)."""

from __future__ import annotations

from hypothesis import given, settings

from taskassign.assignors.fallback_prior import FallbackPriorTaskAssignor
from taskassign.assignors.identity import IdentityTaskAssignor
from taskassign.assignors.registry import create_assignor
from taskassign.leader.run import rebalance
from taskassign.model import UNKNOWN_OFFSET_SUM, ApplicationState
from tests.assignors.sticky_apps import applications
from tests.helpers import PID_1, PID_2, app_state, client, task, tid


def test_e12c_previous_owner_keeps_everything_and_probing_is_requested() -> None:
    state = app_state([task("0_0"), task("0_1"), task("0_2")],
                      [client(PID_1, prev_active=["0_0", "0_1", "0_2"]), client(PID_2)])
    result = FallbackPriorTaskAssignor().assign(state)
    by_pid = result.by_process()
    assert by_pid[PID_1].active_tasks() == {tid("0_0"), tid("0_1"), tid("0_2")}
    assert not by_pid[PID_2].tasks
    assert result.probing_rebalance_needed is True


@settings(max_examples=200)
@given(applications())
def test_p32_every_previous_active_stays_with_its_owner(state: ApplicationState) -> None:
    result = FallbackPriorTaskAssignor().assign(state)
    assert result.probing_rebalance_needed
    by_pid = result.by_process()
    last_claim = {}  # Kafka's map keeps the last claimant (clients walked in hash order)
    for pid, client_state in state.clients.items():
        for t in client_state.previous_active_tasks:
            last_claim.setdefault(t, set()).add(pid)
    for t, claimants in last_claim.items():
        if t not in state.tasks:
            continue
        owners = [pid for pid, a in by_pid.items() if t in a.active_tasks()]
        assert len(owners) == 1 and owners[0] in claimants
        if len(claimants) == 1:
            assert owners == list(claimants)


def test_the_leader_substitutes_it_when_end_offsets_are_unknown() -> None:
    """Kafka's leader runs FallbackPrior instead of its internal assignor when the end-offset fetch
    failed (every end offset -3), and schedules the probing rebalance on its own client."""

    class NeedsLags(IdentityTaskAssignor):
        fallback_when_lags_unknown = "fallback_prior"

    state = app_state([task("0_0", end=UNKNOWN_OFFSET_SUM), task("0_1", end=UNKNOWN_OFFSET_SUM)],
                      [client(PID_1, prev_active=["0_0", "0_1"]), client(PID_2)],
                      now_ms=1_000, probing_rebalance_interval_ms=60_000)
    result = rebalance(state, NeedsLags(), leader=PID_2, fallback_factory=lambda name: create_assignor(name, {}))
    assert result.assignor.startswith("fallback_prior")
    assert result.group.clients[PID_1].active_tasks() == {tid("0_0"), tid("0_1")}
    assert result.group.clients[PID_2].followup_rebalance_deadline == 61_000
