"""The ``balance_subtopology`` strategy (Kafka's ``BalanceSubtopologyGraphConstructor``): min_traffic plus a
per-subtopology spread.

Tasks are grouped by subtopology; client j may receive at most ``ceil(orig_j / T * n_g)`` tasks of group g
(Kafka's double arithmetic, in that operation order), so each client keeps its total while each
subtopology spreads roughly in proportion. Kafka starts from an Edmonds-Karp max flow, not from the
current assignment (which may break the caps), then cancels negative cycles.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import TaskId
from taskassign.rack.compact import solve_compact
from taskassign.rack.graph import Graph
from taskassign.rack.problem import FlowProblem, KafkaGraph

__all__ = ("BalanceSubtopologyGraph", "groups_by_subtopology", "groups_by_subtopology_number")

SOURCE = -1


def groups_by_subtopology(tasks: Iterable[TaskId]) -> tuple[tuple[TaskId, ...], ...]:
    """Kafka's internal grouping: one group per Subtopology (id, then named topology, unnamed first)."""
    groups: dict[tuple[int, bool, str], list[TaskId]] = {}
    for t in tasks:
        name, subtopology = t[0], t[1]  # tuple access: this runs over every task of the application
        key = (subtopology, False, "") if name is None else (subtopology, True, name)
        groups.setdefault(key, []).append(t)
    return tuple(tuple(sorted(groups[key])) for key in sorted(groups))


def groups_by_subtopology_number(tasks: Iterable[TaskId]) -> tuple[tuple[TaskId, ...], ...]:
    """The public helpers' grouping: by ``TaskId.subtopology`` alone (named topologies merge)."""
    groups: dict[int, list[TaskId]] = {}
    for t in tasks:
        groups.setdefault(t[1], []).append(t)
    return tuple(tuple(sorted(groups[key])) for key in sorted(groups))


class BalanceSubtopologyGraph:
    """Kafka's ``BalanceSubtopologyGraphConstructor`` over ordered task groups."""

    name = "balance_subtopology"

    def __init__(self, groups: Sequence[Sequence[TaskId]]) -> None:
        self.groups = groups

    def _layout(self, problem: FlowProblem) -> tuple[list[list[int]], np.ndarray]:
        """Each group's task indices (TaskId order) and per-client capacities of each group (groups x
        clients)."""
        index = {t: i for i, t in enumerate(problem.tasks)}
        members: list[list[int]] = []
        seen = 0
        for group in self.groups:
            inside = sorted(index[t] for t in group if t in index)
            members.append(inside)
            seen += len(inside)
        if seen != len(problem.tasks):
            grouped = {t for group in self.groups for t in group}
            missing = next(t for t in problem.tasks if t not in grouped)
            raise RackAwareOptimizationError(f"Task {missing} not in tasksForTopicGroup")
        return members, _group_capacities(problem.orig, len(problem.tasks), [len(inside) for inside in members])

    def kafka_graph(self, problem: FlowProblem) -> KafkaGraph:
        members, cap_array = self._layout(problem)
        caps: list[list[int]] = cap_array.tolist()  # Python ints for Kafka's graph
        t_count, c_count, g_count = len(problem.tasks), len(problem.clients), len(members)
        second = t_count + c_count * g_count
        sink = second + c_count
        node_of = [0] * t_count
        for node, i in enumerate(i for inside in members for i in inside):
            node_of[i] = node
        graph = Graph()
        client_of_node: dict[int, int] = {}
        for g, inside in enumerate(members):
            for j in range(c_count):
                group_node = t_count + c_count * g + j
                client_of_node[group_node] = j
                for i in inside:
                    graph.add_edge(node_of[i], group_node, 1, problem.cost(i, j), 0)
                if inside:
                    graph.add_edge(group_node, second + j, caps[g][j], 0, 0)
        for i in range(t_count):
            graph.add_edge(SOURCE, node_of[i], 1, 0, 0)
        for j, orig in enumerate(problem.orig):
            graph.add_edge(second + j, sink, orig, 0, 0)
        graph.set_source_node(SOURCE)
        graph.set_sink_node(sink)
        return KafkaGraph(graph, tuple(node_of), client_of_node, True)

    def solve_fast(self, problem: FlowProblem) -> tuple[list[int], int]:
        members, caps = self._layout(problem)
        used = [g for g, inside in enumerate(members) if inside]
        return solve_compact(problem, [members[g] for g in used], caps[used])


def _group_capacity(orig: int, task_count: int, group_size: int) -> int:
    """``(int) Math.ceil(orig * 1.0 / T * n_g)``, 0 for a client holding nothing."""
    if orig == 0:
        return 0
    return math.ceil(orig * 1.0 / task_count * group_size)


def _group_capacities(orig: Sequence[int], task_count: int, group_sizes: Sequence[int]) -> np.ndarray:
    """``_group_capacity`` for every group and client at once (groups x clients): the same IEEE double
    operations in the same order (orig * 1.0 / T, then * n_g, then ceil), elementwise. Kept as an array:
    at 10^3 x 10^3 a list of lists is 10^6 Python ints."""
    share = np.asarray(orig, dtype=np.float64) * 1.0 / task_count
    caps = np.ceil(share[None, :] * np.asarray(group_sizes, dtype=np.float64)[:, None]).astype(np.int64)
    caps[:, np.asarray(orig) == 0] = 0
    return caps

