"""Factories for the nested application records the pipeline hands the engine (fleet.build.AppInput)."""

from __future__ import annotations

from typing import Any

PID_A = "00000000-0000-0000-0000-00000000000a"
PID_B = "00000000-0000-0000-0000-00000000000b"
PID_C = "00000000-0000-0000-0000-00000000000c"


def block(sub: int, num_tasks: int, *, stateful: bool = True, ends: list[int] | None = None,
          state_bytes: list[int | None] | None = None, racks: list[list[str] | None] | None = None,
          source_partitions: int | None = None) -> dict[str, Any]:
    """A subtopology reading ``in-<sub>`` (``source_partitions`` partitions, default num_tasks) with, when
    stateful, a store and its changelog ``app-store-<sub>-changelog``; the same racks for both topics."""
    topics: list[dict[str, Any]] = [{"topic": f"in-{sub}", "is_source": True, "is_changelog": False,
                                     "num_partitions": source_partitions or num_tasks, "racks": racks}]
    if stateful:
        topics.insert(0, {"topic": f"app-store-{sub}-changelog", "is_source": False, "is_changelog": True,
                          "num_partitions": num_tasks, "racks": racks})
    return {"subtopology": sub, "num_tasks": num_tasks, "stores": [f"store-{sub}"] if stateful else [],
            "topics": topics, "end_offset_sums": (ends or [100] * num_tasks) if stateful else [0] * num_tasks,
            "state_bytes": state_bytes or [None] * num_tasks}


def reported(sub: int, p: int, ownership: str, offset: int | None = None, lag: int | None = None,
             consumers: list[str] | None = None) -> dict[str, Any]:
    return {"subtopology": sub, "partition": p, "ownership": ownership, "offset_sum": offset, "lag": lag,
            "consumers": consumers or []}


def client(pid: str, *, threads: int = 1, tasks: list[dict[str, Any]] | None = None, rack: str | None = None,
           tags: dict[str, str] | None = None, host: str | None = None) -> dict[str, Any]:
    consumers = [f"{pid[-1]}-{i}" for i in range(1, threads + 1)]
    for t in tasks or ():
        if not t["consumers"]:
            t["consumers"] = [consumers[0]]
    return {"process_id": pid, "rack": rack, "tags": list((tags or {}).items()), "host": host,
            "consumers": consumers, "tasks": tasks or []}


def app_input(app_id: str = "app", *, subtopologies: list[dict[str, Any]] | None = None,
              clients: list[dict[str, Any]] | None = None, configs: dict[str, str] | None = None,
              **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "app_id": app_id, "assignor": None, "configs": list((configs or {}).items()), "now_ms": 1_000,
        "leader_process_id": None, "end_offsets_known": True,
        "subtopologies": subtopologies if subtopologies is not None else [block(0, 2), block(1, 1, stateful=False)],
        "clients": clients if clients is not None else [
            client(PID_A, threads=2, tasks=[reported(0, 0, "active", -2, -2), reported(1, 0, "active")]),
            client(PID_B, tasks=[reported(0, 1, "active", -2, -2), reported(0, 0, "standby", 60, 40)]),
        ],
        "source_rows": {"applications": 1, "subtopologies": 2, "repartition_topics": 0, "topic_partitions": 5,
                        "members": 3, "member_tasks": 4},
    }
    record.update(extra)
    return record
