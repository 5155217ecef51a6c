"""Factories for the nested application records the pipeline hands the engine (fleet.build.AppInput)."""

from __future__ import annotations

from typing import Any

PID_A = "00000000-0000-0000-0000-00000000000a"
PID_B = "00000000-0000-0000-0000-00000000000b"
PID_C = "00000000-0000-0000-0000-00000000000c"


def partition(topic: str, p: int, *, source: bool = True, changelog: bool = False,
              racks: list[str] | None = None) -> dict[str, Any]:
    return {"topic": topic, "partition": p, "is_source": source, "is_changelog": changelog, "racks": racks}


def task(sub: int, p: int, *, stateful: bool = True, end: int = 100, state_bytes: int | None = None,
         racks: list[str] | None = None) -> dict[str, Any]:
    parts = [partition(f"in-{sub}", p, racks=racks)]
    if stateful:
        parts.append(partition(f"app-store-{sub}-changelog", p, source=False, changelog=True, racks=racks))
    return {"subtopology": sub, "partition": p, "stores": [f"store-{sub}"] if stateful else [],
            "end_offset_sum": end if stateful else 0, "state_bytes": state_bytes, "partitions": parts}


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


def app_input(app_id: str = "app", *, tasks: list[dict[str, Any]] | None = None,
              clients: list[dict[str, Any]] | None = None, configs: dict[str, str] | None = None,
              **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "app_id": app_id, "assignor": None, "configs": list((configs or {}).items()), "now_ms": 1_000,
        "leader_process_id": None, "end_offsets_known": True,
        "tasks": tasks if tasks is not None else [task(0, 0), task(0, 1), task(1, 0, stateful=False)],
        "clients": clients if clients is not None else [
            client(PID_A, threads=2, tasks=[reported(0, 0, "active", -2, -2), reported(1, 0, "active")]),
            client(PID_B, tasks=[reported(0, 1, "active", -2, -2), reported(0, 0, "standby", 60, 40)]),
        ],
        "source_rows": {"applications": 1, "subtopologies": 2, "repartition_topics": 0, "topic_partitions": 5,
                        "members": 3, "member_tasks": 4},
    }
    record.update(extra)
    return record
