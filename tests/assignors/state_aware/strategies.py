"""Random applications for the state-aware assignor: Kafka-style ones with state sizes and racks."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from taskassign.model import ApplicationState, SortedFrozenSet
from tests.assignors.strategies import applications

RACKS = ("r1", "r2", "r3")
#: Skewed state sizes, including empty state and a few huge stores.
SIZES = (None, 0, 1_000, 50_000, 2_000_000, 80_000_000, 3_000_000_000, 50_000_000_000)


@st.composite
def sized_applications(draw: st.DrawFn, max_clients: int = 8) -> ApplicationState:
    """``tests.assignors.strategies.applications`` plus state sizes (state_bytes) and, half the time,
    racks on clients and partitions."""
    state = draw(applications(max_clients=max_clients))
    with_racks = draw(st.booleans())
    tasks = []
    for info in state.tasks.values():
        size = draw(st.sampled_from(SIZES)) if info.is_stateful else None
        parts = info.topic_partitions
        if with_racks:
            parts = tuple(replace(p, rack_ids=SortedFrozenSet(draw(st.sets(st.sampled_from(RACKS), max_size=2))))
                          for p in parts)
        tasks.append(replace(info, state_bytes=size, topic_partitions=parts))
    clients = []
    for client in state.clients.values():
        rack = draw(st.sampled_from(RACKS)) if with_racks and draw(st.integers(0, 9)) else None
        clients.append(replace(client, rack_id=rack))
    return ApplicationState(tasks=tasks, clients=clients, configs=state.configs, now_ms=state.now_ms)

