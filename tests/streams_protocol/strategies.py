"""Hypothesis strategies: random streams groups (topologies, members over processes, previous targets,
reported offsets, standby counts)."""

from __future__ import annotations

from hypothesis import strategies as st

from taskassign.streams_protocol.model import GroupMember, StreamsGroup, Subtopology, task_map


@st.composite
def streams_groups(draw: st.DrawFn, assignor: str = "sticky", max_members: int = 9) -> StreamsGroup:
    names = draw(st.sampled_from([("0", "1", "2", "3"), ("10", "9", "a", "B"), ("s",)]))
    subtopologies = tuple(
        Subtopology(sid, draw(st.integers(0, 7)), draw(st.booleans()))
        for sid in names[: draw(st.integers(0, len(names)))]
    )
    tasks = [(s.id, p) for s in subtopologies for p in range(s.partitions)] + [("gone", 0)]
    processes = [f"p{k}" for k in range(draw(st.integers(1, 5)))]
    count = draw(st.integers(0, max_members))
    members = []
    for k in range(count):
        def some() -> list[tuple[str, int]]:
            return draw(st.lists(st.sampled_from(tasks), max_size=4, unique=True))

        offsets: dict[str, dict[int, int]] = {}
        for sid, p in some():
            offsets.setdefault(sid, {})[p] = draw(st.integers(0, 300))
        members.append(GroupMember(
            member_id=draw(st.sampled_from(["m", "member-", "x"])) + str(k),
            process_id=draw(st.sampled_from(processes)),
            active_tasks=task_map(some()), standby_tasks=task_map(some()), warmup_tasks=task_map(some()),
            task_offsets=offsets,
        ))
    standbys = draw(st.sampled_from(["0", "1", "2", "3"]))
    return StreamsGroup("random", subtopologies, tuple(members), {"num.standby.replicas": standbys}, assignor)
