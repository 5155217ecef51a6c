"""The issue-20 application shape as a scenario file: many subtopologies, half stateful, clients of two
threads over three racks, one standby, churned previous owners.

``scenario(tasks, clients)`` builds the document (``taskassign/scenario/v1``, docs/formats.md) for any
size; the issue's case is ``scenario(100_000, 1_000)``: 1,000 subtopologies of 100 partitions each.
Everything scales with ``tasks``: ``tasks / 100`` subtopologies of 100 partitions (at least one),
subtopology ``s`` stateful when ``s`` is even (one store, a source and a changelog partition; the
stateless ones only read their source). Every partition is replicated on two of the three racks
(``rack-0 .. rack-2``, drawn from the seeded generator); client ``c`` is on rack ``c mod 3`` and runs
two threads.

The churn, from a balanced previous assignment (task ``k`` active on client ``k mod C0`` and standby
on ``(k + 1) mod C0``, C0 = 95% of the clients): 5% of the clients are new (no history), 5% of the
previous clients left (their tasks are orphaned; they are not in the scenario), and every stateful
task's standby reports a random lag of up to twice ``acceptable.recovery.lag``, so some are caught up
and some are not. ``taskassign.kafka.compat`` is not set (the default mode).

``--zones Z`` (issue 33's tags shape, as KIP-708 users run it) gives client ``c`` the client tag
``zone=zone-{c mod Z}`` and sets ``rack.aware.assignment.tags=zone``, so standbys are placed by Kafka's
client-tag-aware standby assignor; with ``Z = 3`` the zones follow the racks.

    python -m benchmarks.scale_app --tasks 100000 --clients 1000 --strategy min_traffic -o app.scenario.json
    python -m benchmarks.scale_app --tasks 100000 --clients 1000 --zones 3 -o tags.scenario.json
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from pathlib import Path
from typing import Any

PARTITIONS_PER_SUBTOPOLOGY = 100
RACKS = 3
END_OFFSET = 100_000
RECOVERY_LAG = 10_000


def _process_ids(clients: int, rng: random.Random) -> list[str]:
    """Random UUIDs, as real clients have (their Java hash codes collide in HashSet buckets as real ones do)."""
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(clients)]


def _tasks(tasks: int, rng: random.Random) -> list[dict[str, Any]]:
    per = min(PARTITIONS_PER_SUBTOPOLOGY, tasks)
    out: list[dict[str, Any]] = []
    for k in range(tasks):
        sub, part = divmod(k, per)
        racks = sorted(f"rack-{r}" for r in rng.sample(range(RACKS), 2))
        partitions: list[dict[str, Any]] = [
            {"topic": f"in-{sub}", "partition": part, "source": True, "changelog": False, "racks": racks}]
        task: dict[str, Any] = {"id": f"{sub}_{part}", "stores": [], "partitions": partitions}
        if sub % 2 == 0:
            changelog_racks = sorted(f"rack-{r}" for r in rng.sample(range(RACKS), 2))
            partitions.append({"topic": f"app-store-{sub}-changelog", "partition": part, "source": False,
                               "changelog": True, "racks": changelog_racks})
            task["stores"] = [f"store-{sub}"]
            task["changelog_end_offset_sum"] = END_OFFSET
            task["state_bytes"] = rng.randint(1, 100) * 1_000_000
        out.append(task)
    return out


def scenario(tasks: int, clients: int, *, strategy: str = "none", seed: int = 20,
             kafka_compat: bool = False, zones: int = 0) -> dict[str, Any]:
    """The scenario document of ``tasks`` tasks on ``clients`` clients (see the module docstring)."""
    rng = random.Random(seed)
    task_docs = _tasks(tasks, rng)
    previous = max(1, clients * 95 // 100)        # clients 0..previous-1 existed before
    left = set(range(0, previous, 20))            # 5% of them left: not in the scenario
    new = clients - (previous - len(left))        # the rest of the clients are new
    actives: dict[int, list[str]] = {c: [] for c in range(previous)}
    standbys: dict[int, dict[str, int]] = {c: {} for c in range(previous)}
    for k, task in enumerate(task_docs):
        actives[k % previous].append(task["id"])
        if task["stores"] and previous > 1:
            standbys[(k + 1) % previous][task["id"]] = END_OFFSET - rng.randint(0, 2 * RECOVERY_LAG)
    stateful = frozenset(t["id"] for t in task_docs if t["stores"])
    pids = _process_ids(previous + new, rng)
    client_docs: list[dict[str, Any]] = []
    for c in range(previous):
        if c in left:
            continue
        sums = dict.fromkeys((t for t in actives[c] if t in stateful), -2)
        sums.update(standbys[c])
        client_docs.append({"process_id": pids[c], "threads": 2, "rack": f"rack-{c % RACKS}",
                            "previous_active": actives[c], "previous_standby": sorted(standbys[c]),
                            "task_offset_sums": sums})
    for c in range(previous, previous + new):
        client_docs.append({"process_id": pids[c], "threads": 2, "rack": f"rack-{c % RACKS}"})
    configs: dict[str, Any] = {"num.standby.replicas": 1, "acceptable.recovery.lag": RECOVERY_LAG,
                               "rack.aware.assignment.strategy": strategy}
    if zones > 0:
        for c, doc in zip([c for c in range(previous) if c not in left] + list(range(previous, previous + new)),
                          client_docs, strict=True):
            doc["tags"] = {"zone": f"zone-{c % zones}"}
        configs["rack.aware.assignment.tags"] = ["zone"]
    if kafka_compat:
        configs["taskassign.kafka.compat"] = True
    name = f"scale-{tasks}x{clients}-{strategy}" + (f"-zones{zones}" if zones > 0 else "")
    return {"format": "taskassign/scenario/v1", "name": name, "now_ms": 0,
            "configs": configs, "tasks": task_docs, "clients": client_docs}


def write(path: Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` compactly (the files are large)."""
    path.write_text(json.dumps(doc, separators=(",", ":")))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=1_000)
    parser.add_argument("--strategy", default="none", choices=["none", "min_traffic", "balance_subtopology"])
    parser.add_argument("--kafka-compat", action="store_true")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--zones", type=int, default=0, help="client tags zone=zone-{c mod Z}, tags=zone")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    write(args.output, scenario(args.tasks, args.clients, strategy=args.strategy, seed=args.seed,
                                kafka_compat=args.kafka_compat, zones=args.zones))


if __name__ == "__main__":
    main()
