"""Kafka's TaskAssignorConvergenceTest as a library: a cluster harness and the convergence loop.

The harness (Kafka's ``TaskAssignorConvergenceTest.Harness``) holds an application of stateless and stateful tasks (end
offset sum 150,000 each) and single-thread clients ``UUID(0, i)``. Before every rebalance, each client reports
exactly what it was assigned last time, fully caught up (lag 0), and lag 150,000 on everything else:
replicas catch up completely between two rebalances. Nodes can be added (fresh ids), dropped (keeping
their last state) and resurrected (coming back caught up on what they held). ``converge`` runs
rebalances until the assignor stops asking for a probing rebalance, up to a limit;
``run_randomized_scenario`` replays Kafka's randomized test from its seed (``java.util.Random``).

Unlike ``simulate``, this calls the assignor directly, as Kafka's test does (no leader, no thread
distribution), so that the bounds Kafka asserts apply unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from taskassign.analysis.invariants import balance_problems, validity_problems
from taskassign.analysis.metrics import compute_metrics
from taskassign.assignors.base import TaskAssignor
from taskassign.assignors.registry import resolve
from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    ApplicationState,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskAssignment,
    TaskInfo,
    TaskTopicPartition,
    new_task_info,
)
from taskassign.simulate.java_random import JavaRandom

__all__ = (
    "END_OFFSET_SUM",
    "ConvergenceHarness",
    "ConvergenceRound",
    "RandomizedScenario",
    "converge",
    "run_randomized_scenario",
)

#: Changelog end offset sum of every stateful task in Kafka's harness.
END_OFFSET_SUM = 150_000
#: Kafka's harness: caught up means lag <= 100.
ACCEPTABLE_RECOVERY_LAG = 100
PROBING_INTERVAL_MS = 60_000


@dataclass(frozen=True, slots=True)
class _Held:
    active: SortedFrozenSet[TaskId] = field(default_factory=SortedFrozenSet)
    standby: SortedFrozenSet[TaskId] = field(default_factory=SortedFrozenSet)


class ConvergenceHarness:
    """The evolving cluster of Kafka's convergence test (mutable: nodes come and go)."""

    def __init__(self, stateless: list[TaskId], stateful: list[TaskId], num_clients: int, *,
                 num_nodes: int = 1, rack_seed: int = 0) -> None:
        self.stateless = SortedFrozenSet(stateless)
        self.stateful = SortedFrozenSet(stateful)
        self.rack_rng = random.Random(rack_seed)
        self.num_nodes = max(1, num_nodes)
        nodes = [f"rack{i}" for i in range(self.num_nodes)]
        self.rack_rng.shuffle(nodes)
        self.tasks = {t: self._task_info(t, nodes, i) for i, t in enumerate(sorted(self.stateless | self.stateful))}
        self.clients: dict[ProcessId, _Held] = {}
        self.racks: dict[ProcessId, str] = {}
        self.dropped: dict[ProcessId, _Held] = {}
        self.history: list[str] = [f"stateless tasks {list(map(str, self.stateless))}, "
                                   f"stateful tasks {list(map(str, self.stateful))}"]
        for _ in range(num_clients):
            self.add_node()

    @classmethod
    def initialize_cluster(cls, num_stateless: int, num_stateful: int, num_clients: int,
                           partition_count: Callable[[], int], *, num_nodes: int = 1, rack_seed: int = 0
                           ) -> ConvergenceHarness:
        """Kafka's ``initializeCluster``: stateless subtopologies first, then stateful ones, each with
        ``partition_count()`` partitions (capped by the tasks still to create)."""
        stateless, next_subtopology = _subtopologies(num_stateless, 0, partition_count)
        stateful, _ = _subtopologies(num_stateful, next_subtopology, partition_count)
        return cls(stateless, stateful, num_clients, num_nodes=num_nodes, rack_seed=rack_seed)

    def _task_info(self, task: TaskId, nodes: list[str], index: int) -> TaskInfo:
        """Source partition ``topic_<s>-<p>`` (and ``changelog-topic_<s>-<p>`` for stateful tasks) with
        replicas on two consecutive nodes of the shuffled node list."""
        racks = SortedFrozenSet({nodes[index % len(nodes)], nodes[(index + 1) % len(nodes)]})
        parts = [TaskTopicPartition(f"topic_{task.subtopology}", task.partition, True, False, racks)]
        stores: tuple[str, ...] = ()
        if task in self.stateful:
            stores = (f"store_{task.subtopology}",)
            parts.append(TaskTopicPartition(f"changelog-topic_{task.subtopology}", task.partition, False, True, racks))
        return new_task_info(task, stores, parts, END_OFFSET_SUM if stores else 0)

    # -- membership (Kafka's addNode / dropNode / dropRandomNodes / addOrResurrectNodesRandomly) -----

    def add_node(self) -> ProcessId:
        pid = ProcessId.of_ints(0, len(self.clients) + len(self.dropped))
        self.clients[pid] = _Held()
        self.racks[pid] = f"rack{self.rack_rng.randrange(self.num_nodes)}"
        self.history.append(f"add {pid}")
        return pid

    def drop_node(self, pid: ProcessId | None = None) -> ProcessId:
        """Drop ``pid`` (default: the lowest id); it keeps what it held, for a resurrection."""
        if not self.clients:
            raise LookupError("there are no nodes to drop")
        target = min(self.clients) if pid is None else pid
        self.dropped[target] = self.clients.pop(target)
        self.history.append(f"drop {target}")
        return target

    def drop_random_nodes(self, count: int, prng: JavaRandom) -> None:
        dropped = 0
        while self.clients and dropped < count:
            self.drop_node(_select(prng, self.clients))
            dropped += 1

    def add_or_resurrect_nodes_randomly(self, prng: JavaRandom, limit: int) -> None:
        for _ in range(prng.next_int(limit)):
            add_new = prng.next_boolean()
            if add_new or not self.dropped:
                self.add_node()
            else:
                pid = _select(prng, self.dropped)
                self.clients[pid] = self.dropped.pop(pid)
                self.history.append(f"resurrect {pid}")

    # -- rebalances -----------------------------------------------------------------------------

    def prepare_for_next_rebalance(self, configs: AssignmentConfigs) -> ApplicationState:
        """Every client reports what it was assigned, caught up (offset sum = end offset sum)."""
        clients: dict[ProcessId, KafkaStreamsState] = {}
        for pid in sorted(self.clients):
            held = self.clients[pid]
            offsets = {t: END_OFFSET_SUM for t in (held.active | held.standby) if t in self.stateful}
            clients[pid] = KafkaStreamsState(
                pid, (f"consumer-{pid}",), previous_active_tasks=held.active, previous_standby_tasks=held.standby,
                task_offset_sums=offsets, rack_id=self.racks[pid],
            )
        return ApplicationState(tasks=self.tasks, clients=clients, configs=configs)

    def record(self, assignment: TaskAssignment) -> None:
        """Remember what each client was assigned (a later entry for a client wins, as on Kafka's leader)."""
        by_client = assignment.by_process()
        for pid in self.clients:
            entry = by_client.get(pid, KafkaStreamsAssignment(pid))
            self.clients[pid] = _Held(entry.active_tasks(), entry.standby_tasks())


@dataclass(frozen=True, slots=True)
class ConvergenceRound:
    """One call of Kafka's ``testForConvergence``: how many rebalances, and the final assignment."""

    iterations: int
    limit: int
    converged: bool
    state: ApplicationState
    assignment: TaskAssignment

    def problems(self, *, subtopology_skew_threshold: int = 1, check_balance: bool = True) -> tuple[str, ...]:
        """Kafka's checks after convergence: a valid assignment without warm-ups, and (unless skipped,
        as Kafka skips it for min_traffic) a balanced one."""
        found = list(validity_problems(self.state, self.assignment))
        if check_balance:
            metrics = compute_metrics(self.state, self.assignment)
            found += balance_problems(metrics, subtopology_skew_threshold=subtopology_skew_threshold)
        if not self.converged:
            found.insert(0, f"not converged after {self.limit} rebalances")
        return tuple(found)


AssignorFactory = Callable[[AssignmentConfigs], TaskAssignor]


def assignor_factory(name: str) -> AssignorFactory:
    """A fresh, configured instance of a registered assignor per rebalance (as Kafka's leader does)."""
    assignor = resolve(name)
    return lambda configs: assignor.create(configs.to_properties())


def converge(harness: ConvergenceHarness, make_assignor: AssignorFactory, configs: AssignmentConfigs,
             limit: int) -> ConvergenceRound:
    """Rebalance until the assignor asks for no probing rebalance, at most ``limit`` times."""
    iteration = 0
    pending = True
    state = harness.prepare_for_next_rebalance(configs)
    assignment = TaskAssignment(())
    while pending and iteration < limit:
        iteration += 1
        state = harness.prepare_for_next_rebalance(configs)
        assignment = make_assignor(configs).assign(state)
        harness.record(assignment)
        pending = assignment.probing_rebalance_needed
        harness.history.append(f"rebalance {iteration}: probing {pending}")
    return ConvergenceRound(iteration, limit, not pending, state, assignment)


@dataclass(frozen=True, slots=True)
class RandomizedScenario:
    """Kafka's ``runRandomizedScenario(seed)``: the drawn parameters and every convergence round."""

    seed: int
    initial_clients: int
    stateless_tasks: int
    stateful_tasks: int
    max_warmup_replicas: int
    num_standby_replicas: int
    events: int
    rounds: tuple[ConvergenceRound, ...]
    history: tuple[str, ...]

    def problems(self, *, subtopology_skew_threshold: int = 1, check_balance: bool = True) -> tuple[str, ...]:
        found = []
        for i, r in enumerate(self.rounds):
            for problem in r.problems(subtopology_skew_threshold=subtopology_skew_threshold,
                                      check_balance=check_balance):
                found.append(f"seed {self.seed}, round {i}: {problem}")
        return tuple(found)


def run_randomized_scenario(seed: int, make_assignor: AssignorFactory, *,
                            rack_aware_assignment_strategy: str = "none") -> RandomizedScenario:
    """Replay Kafka's randomized convergence scenario for ``seed`` (same draws as the JDK)."""
    prng = JavaRandom(seed)
    initial = prng.next_int(10) + 1
    stateless = prng.next_int(10) + 1
    stateful = prng.next_int(10) + 1
    warmups = prng.next_int(stateful) + 1
    standbys = prng.next_int(initial + 1)
    events = prng.next_int(10) + 1
    configs = AssignmentConfigs(
        acceptable_recovery_lag=ACCEPTABLE_RECOVERY_LAG, max_warmup_replicas=warmups, num_standby_replicas=standbys,
        probing_rebalance_interval_ms=PROBING_INTERVAL_MS,
        rack_aware_assignment_strategy=rack_aware_assignment_strategy,
    )
    harness = ConvergenceHarness.initialize_cluster(stateless, stateful, initial, lambda: prng.next_int(10) + 1,
                                                    num_nodes=stateless + stateful, rack_seed=seed)
    rounds = [converge(harness, make_assignor, configs, 1)]
    for _ in range(events):
        if prng.next_int(2) == 0:
            harness.drop_random_nodes(prng.next_int(initial), prng)
        else:
            harness.add_or_resurrect_nodes_randomly(prng, initial)
        if harness.clients:
            rounds.append(converge(harness, make_assignor, configs, 2 * (stateful + stateful * standbys)))
    return RandomizedScenario(seed, initial, stateless, stateful, warmups, standbys, events, tuple(rounds),
                              tuple(harness.history))


def _subtopologies(count: int, first: int, partition_count: Callable[[], int]) -> tuple[list[TaskId], int]:
    """``count`` tasks over subtopologies ``first``, ``first + 1``, ... of ``partition_count()`` partitions each
    (the last one smaller); also returns the next free subtopology number."""
    tasks: list[TaskId] = []
    subtopology = first
    while len(tasks) < count:
        tasks += [TaskId(subtopology, p) for p in range(min(count - len(tasks), partition_count()))]
        subtopology += 1
    return tasks, subtopology


def _select(prng: JavaRandom, clients: dict[ProcessId, _Held]) -> ProcessId:
    """Kafka's ``selectRandomElement``: the ``nextInt(size)``-th client in ProcessId order."""
    return sorted(clients)[prng.next_int(len(clients))]
