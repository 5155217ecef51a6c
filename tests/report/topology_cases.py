"""Generated inputs for the topology page: a scenario of any size (subtopologies chained by repartition topics,
processes in three zones, every client owning what it owned before and a few moves to come)."""

from __future__ import annotations

from typing import Any

ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")


def process_id(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"


def large_scenario(subtopologies: int, processes: int, partitions: int = 4, *, standbys: int = 1) -> dict[str, Any]:
    """A ``taskassign/scenario/v1`` document: subtopology ``s`` reads ``input-s`` (or, every third one, the
    repartition topic the one before writes) and has a store unless s is a multiple of 5; process ``n`` owned the
    tasks ``(s * partitions + p) % processes == n`` before, and the last tenth of the processes are new."""
    tasks = []
    for s in range(subtopologies):
        source = f"app-by-key-{s - 1}-repartition" if s % 3 == 2 else f"input-{s}"
        stateful = s % 5 != 0
        for p in range(partitions):
            parts = [{"topic": source, "partition": p, "source": True, "changelog": False}]
            if stateful:
                parts.append({"topic": f"app-store-{s}-changelog", "partition": p, "source": False, "changelog": True})
            task: dict[str, Any] = {"id": f"{s}_{p}", "partitions": parts}
            if stateful:
                task["stores"] = [f"store-{s}"]
                task["changelog_end_offset_sum"] = 1_000_000 * (p + 1)
            tasks.append(task)
    old = max(1, processes - processes // 10)
    clients = []
    for n in range(processes):
        owned = [f"{s}_{p}" for s in range(subtopologies) for p in range(partitions)
                 if (s * partitions + p) % old == n]
        clients.append({"process_id": process_id(n + 1), "consumers": [f"app-{n:03d}-StreamThread-1"],
                        "tags": {"zone": ZONES[n % 3]}, "host": f"streams-{n:03d}.example:7070",
                        "previous_active": owned, "previous_standby": [],
                        "task_offset_sums": {t: -2 for t in owned if int(t.split("_")[0]) % 5 != 0}})
    return {"format": "taskassign/scenario/v1", "name": f"generated-{subtopologies}x{processes}", "now_ms": 0,
            "configs": {"num.standby.replicas": standbys, "rack.aware.assignment.tags": ["zone"]},
            "tasks": tasks, "clients": clients}
