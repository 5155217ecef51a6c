"""The balanced assignor's ``balance`` skips pairs that cannot move a task; a literal port of Kafka's double
loop must give the same answers on any group."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings

from taskassign.streams_protocol import StreamsGroup, balanced, run_assignor
from taskassign.streams_protocol.balanced import _Process, _should_move
from tests.streams_protocol.strategies import streams_groups


def literal_balance(processes: list[_Process], kind: Callable[[_Process], set[int]]) -> None:
    """HighAvailabilityTaskAssignor.balanceTasksOverThreads as written: every pair, every pass."""
    moved = True
    while moved:
        moved = False
        for source in processes:
            for destination in processes:
                if source is destination:
                    continue
                tasks, target = kind(source), kind(destination)
                for t in sorted(tasks):
                    if not _should_move(source, destination):
                        break
                    if t not in destination.all:
                        tasks.discard(t)
                        source.all.discard(t)
                        destination.add(target, t)
                        moved = True


@settings(max_examples=300, deadline=None)
@given(streams_groups("balanced", max_members=12))
def test_skipping_pairs_changes_nothing(group: StreamsGroup) -> None:
    if not group.members:
        return
    fast = run_assignor(group)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(balanced, "_balance", literal_balance)
        assert run_assignor(group) == fast
