"""Rack-aware test instances: tasks with racked partitions, clients on racks, random small problems,
and a networkx reference optimum (tests only)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, KafkaStreamsState, TaskInfo, TaskTopicPartition
from taskassign.rack.balance_subtopology import BalanceSubtopologyGraph, groups_by_subtopology
from taskassign.rack.cost import CostModel, PartitionScope, RackTable
from taskassign.rack.min_traffic import MinTrafficGraph
from taskassign.rack.problem import FlowProblem, GraphConstructor
from tests.helpers import PID, tid

Racks = Sequence[str] | None


def racked_task(text: str, sources: Sequence[Racks], changelogs: Sequence[Racks] = (), *,
                stateful: bool | None = None) -> TaskInfo:
    """A task with one source partition per entry of ``sources`` (its replica racks) and likewise changelogs."""
    t = tid(text)
    parts = [TaskTopicPartition(f"topic{t.subtopology}", t.partition * 10 + k, True, False,
                                None if racks is None else frozenset(racks)) for k, racks in enumerate(sources)]
    parts += [TaskTopicPartition(f"app-store{t.subtopology}-changelog", t.partition * 10 + k, False, True,
                                 None if racks is None else frozenset(racks)) for k, racks in enumerate(changelogs)]
    has_store = bool(changelogs) if stateful is None else stateful
    return TaskInfo(t, (f"store{t.subtopology}",) if has_store else (), tuple(parts), 0)


def racked_client(n: int, rack: str | None, *, tags: Mapping[str, str] | None = None) -> KafkaStreamsState:
    pid = PID[n] if n in PID else ProcessId.of_ints(0, n)
    return KafkaStreamsState(pid, (f"{pid}-StreamThread-1",), rack_id=rack, client_tags=dict(tags or {}))


def racked_state(
    tasks: Sequence[TaskInfo], clients: Sequence[KafkaStreamsState], **configs: object
) -> ApplicationState:
    configured = AssignmentConfigs(**configs)  # type: ignore[arg-type]
    return ApplicationState(tasks=list(tasks), clients=list(clients), configs=configured)


@dataclass(frozen=True)
class Instance:
    """A random application with a current assignment (every task active somewhere, a few standbys)."""

    state: ApplicationState
    active: dict[ProcessId, set[TaskId]]
    standby: dict[ProcessId, set[TaskId]]
    traffic_cost: int
    non_overlap_cost: int


def random_instance(rng: random.Random, *, max_tasks: int = 12, max_clients: int = 6, tags: bool = False,
                    **configs: object) -> Instance:
    rack_count = rng.randint(1, 4)
    racks = [f"r{i}" for i in range(rack_count)]
    pool = [*racks, "r-orphan"]  # a rack hosting replicas but no client

    def replica_racks() -> list[str]:
        return rng.sample(pool, rng.randint(1, min(3, len(pool))))

    subtopologies = rng.randint(1, 3)
    task_count = rng.randint(1, max_tasks)
    tasks = []
    for k in range(task_count):
        name = f"{k % subtopologies}_{k // subtopologies}"
        tasks.append(racked_task(name, [replica_racks() for _ in range(rng.randint(1, 3))],
                                 [replica_racks() for _ in range(rng.randint(1, 2))]))
    client_count = rng.randint(1, max_clients)
    clients = [racked_client(n, rng.choice(racks), tags={"zone": rng.choice("ab")} if tags else None)
               for n in range(1, client_count + 1)]
    state = racked_state(tasks, clients, **configs)
    pids = list(state.process_ids)
    active: dict[ProcessId, set[TaskId]] = {p: set() for p in pids}
    standby: dict[ProcessId, set[TaskId]] = {p: set() for p in pids}
    for t in state.task_ids:
        owner = rng.choice(pids)
        active[owner].add(t)
        others = [p for p in pids if p != owner]
        for p in rng.sample(others, min(len(others), rng.randint(0, 2))):
            standby[p].add(t)
    return Instance(state, active, standby, rng.randint(0, 10), rng.randint(0, 10))


def active_problem(instance: Instance, *, traffic: int | None = None, non_overlap: int | None = None) -> FlowProblem:
    costs = CostModel(RackTable.build(instance.state, PartitionScope.SOURCE),
                      instance.traffic_cost if traffic is None else traffic,
                      instance.non_overlap_cost if non_overlap is None else non_overlap)
    return FlowProblem.of(tuple(instance.state.task_ids), instance.state.process_ids, instance.active, costs)


def constructors(state: ApplicationState) -> dict[str, GraphConstructor]:
    return {"min_traffic": MinTrafficGraph(), "balance_subtopology": BalanceSubtopologyGraph(
        groups_by_subtopology(state.task_ids))}


def group_caps(problem: FlowProblem, groups: Sequence[Sequence[TaskId]]) -> list[tuple[list[int], list[int]]]:
    """Per group: the task indices in it and each client's cap (Kafka's formula, recomputed here)."""
    index = {t: i for i, t in enumerate(problem.tasks)}
    result = []
    for group in groups:
        members = [index[t] for t in group if t in index]
        caps = [0 if o == 0 else math.ceil(o / len(problem.tasks) * len(members)) for o in problem.orig]
        result.append((members, caps))
    return result


def reference_optimum(problem: FlowProblem, groups: Sequence[Sequence[TaskId]] | None = None) -> int:
    """The minimum cost of re-mapping ``problem``'s tasks (networkx), keeping counts (and group caps)."""
    g = nx.DiGraph()
    for i in range(len(problem.tasks)):
        g.add_node(("t", i), demand=-1)
    for j, orig in enumerate(problem.orig):
        g.add_node(("c", j), demand=orig)
    if groups is None:
        for i in range(len(problem.tasks)):
            for j in range(len(problem.clients)):
                g.add_edge(("t", i), ("c", j), capacity=1, weight=problem.cost(i, j))
    else:
        for gi, (members, caps) in enumerate(group_caps(problem, groups)):
            for j, cap in enumerate(caps):
                g.add_edge(("g", gi, j), ("c", j), capacity=cap, weight=0)
                for i in members:
                    g.add_edge(("t", i), ("g", gi, j), capacity=1, weight=problem.cost(i, j))
    return int(nx.min_cost_flow_cost(g))
