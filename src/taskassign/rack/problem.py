"""One rack-aware optimisation as plain values, and the small Protocol graph constructors implement.

``FlowProblem`` is the frozen parameter object every piece shares (instead of Kafka's eleven positional
arguments): the tasks to re-map in Kafka's task order, the clients in Kafka's client order, who holds
each task now, and the cost model. A ``GraphConstructor`` (min_traffic, balance_subtopology) turns it
into Kafka's flow graph for the exact solver, or solves it on its own compact graph for the fast one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Protocol

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.rack.cost import CostModel
from taskassign.rack.graph import Graph

__all__ = ("FlowProblem", "GraphConstructor", "KafkaGraph")


@dataclass(frozen=True, slots=True)
class FlowProblem:
    """Re-map ``tasks`` over ``clients`` keeping each client's count, at minimum cost.

    ``holders[i]`` is the index in ``clients`` of the client holding ``tasks[i]``; ``client_racks`` the
    rack index of each client (aligned with ``clients``).
    """

    tasks: tuple[TaskId, ...]
    clients: tuple[ProcessId, ...]
    client_racks: tuple[int, ...]
    holders: tuple[int, ...]
    costs: CostModel
    orig: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        counts = [0] * len(self.clients)
        for h in self.holders:
            counts[h] += 1
        object.__setattr__(self, "orig", tuple(counts))

    @classmethod
    def of(
        cls,
        tasks: Sequence[TaskId],
        clients: Sequence[ProcessId],
        holds: Mapping[ProcessId, AbstractSet[TaskId]],
        costs: CostModel,
        *,
        strict: bool = True,
    ) -> FlowProblem:
        """Find each task's holder among ``clients``; Kafka's errors for a task held twice or not at all.

        ``strict`` (the internal optimiser) also refuses a task without relevant partitions or with a
        partition lacking rack information; otherwise such a task simply costs no traffic.
        """
        wanted = _known(tasks, costs)
        owner: dict[TaskId, int] = {}
        claims = 0
        for j, client in enumerate(clients):
            held = holds.get(client)
            if held:
                mine = wanted.intersection(held)
                claims += len(mine)
                owner.update(dict.fromkeys(mine, j))
        holders = [owner.get(t, -1) for t in tasks]
        if claims != len(owner) or len(owner) != len(wanted):
            _raise_holder_error(tasks, clients, holds)
        return cls._checked(tasks, clients, holders, costs, strict)

    @classmethod
    def with_holders(cls, tasks: Sequence[TaskId], clients: Sequence[ProcessId], holders: Sequence[int],
                     costs: CostModel, *, strict: bool = True) -> FlowProblem:
        """``of`` for a caller that already knows each task's holder (``holders[i]`` indexes ``clients``): the
        standby optimiser's pairs, whose two sides are disjoint by construction. Same task checks."""
        _known(tasks, costs)
        return cls._checked(tasks, clients, holders, costs, strict)

    @classmethod
    def _checked(cls, tasks: Sequence[TaskId], clients: Sequence[ProcessId], holders: Sequence[int],
                 costs: CostModel, strict: bool) -> FlowProblem:
        if strict:
            costs.table.require(tasks)
        racks = tuple(costs.table.rack_of(c) for c in clients)
        return cls(tuple(tasks), tuple(clients), racks, tuple(holders), costs)

    def cost(self, i: int, j: int) -> int:
        """Kafka's edge cost of placing task i on client j."""
        return self.costs.cost(self.tasks[i], self.client_racks[j], j != self.holders[i])

    def assignment_cost(self, holders: Sequence[int]) -> int:
        """Kafka's graph cost of an assignment: traffic at the new holders plus non-overlap per moved task."""
        return sum(self.cost(i, j) for i, j in enumerate(holders))


def _known(tasks: Sequence[TaskId], costs: CostModel) -> frozenset[TaskId]:
    """The tasks as a set; Kafka's error for a task not of the application (and ours for a repeated one)."""
    wanted = frozenset(tasks)
    if len(wanted) != len(tasks):
        raise ValueError("the tasks to optimise must be distinct")
    partitions = costs.table.partitions  # a mapping over every task: difference() would walk it all
    unknown = sorted(t for t in wanted if t not in partitions)
    if unknown:
        raise RackAwareOptimizationError(f"Task {unknown[0]} is not a task of the application")
    return wanted


def _raise_holder_error(
    tasks: Sequence[TaskId], clients: Sequence[ProcessId], holds: Mapping[ProcessId, AbstractSet[TaskId]]
) -> None:
    """Kafka's error for the first task (in task order) held by no client or by several."""
    for t in tasks:
        owners = [c for c in clients if t in holds.get(c, ())]
        if not owners:
            raise RackAwareOptimizationError(f"Task {t} not assigned to any client")
        if len(owners) > 1:
            raise RackAwareOptimizationError(f"Task {t} assigned to multiple clients {owners[0]}, {owners[1]}")


@dataclass(frozen=True, slots=True)
class KafkaGraph:
    """Kafka's flow graph of a problem: the graph, each task's node, and node -> client index."""

    graph: Graph
    task_nodes: tuple[int, ...]
    client_of_node: Mapping[int, int]
    #: balance_subtopology starts from an Edmonds-Karp max flow instead of the current assignment.
    starts_from_max_flow: bool


class GraphConstructor(Protocol):
    """A rack-aware strategy: Kafka's graph for the exact solver and its own fast optimal solve."""

    name: str

    def kafka_graph(self, problem: FlowProblem) -> KafkaGraph:
        """Kafka's graph with node numbering, edge costs and starting flow exactly as Kafka builds them."""
        ...

    def solve_fast(self, problem: FlowProblem) -> tuple[list[int], int]:
        """A minimum-cost assignment (new holder per task), with the fewest moves among the optimal ones,
        and its cost (``FlowProblem.assignment_cost``)."""
        ...
