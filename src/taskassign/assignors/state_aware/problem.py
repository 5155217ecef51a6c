"""One application state as the state-aware assignor reads it: numbered tasks and clients, weights,
who ran what, who holds which state and how far behind, and what a placement costs.

Tasks are numbers in TaskId order and clients indices in ProcessId order (as in the high-availability
assignor's ``_client_state``), so every tie is broken by comparing ints in Kafka's orders and nothing
depends on hash order.

Costs, in units of state (the mean stateful task = 1):

* ``restore(t, c)``: what client c must restore to host task t: the task's state times the fraction of
  its changelog c is missing (0 when c runs t, the whole state when c has nothing or its offset is
  unknown, 0 for a task without changelog);
* ``cross(t, c)``: partitions of t that c reads from another rack (source partitions for an active,
  changelog partitions for a standby); partitions or clients without rack information count 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from taskassign.assignors.state_aware.settings import Settings
from taskassign.assignors.state_aware.weights import TaskWeights, task_weights
from taskassign.errors import UserInputError
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.client_state import task_numbers
from taskassign.internals.lags import LagTable
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, ApplicationState

__all__ = ("Problem", "RackView")

RACK_TAG = "rack"


class RackView:
    """Cross-rack partition counts for one kind of partition (source partitions, or changelog partitions)."""

    __slots__ = ("_client_rack", "_known", "_on_rack")

    def __init__(self, client_rack: list[int | None], on_rack: list[dict[int, int]], known: list[int]) -> None:
        self._client_rack = client_rack
        #: Per task: rack -> partitions with a replica there.
        self._on_rack = on_rack
        #: Per task: partitions whose replicas' racks are known.
        self._known = known

    @classmethod
    def build_both(cls, state: ApplicationState, task_ids: Sequence[TaskId]) -> tuple[RackView, RackView]:
        """The views of source partitions (actives) and changelog partitions (standbys), in one pass;
        rack names are interned as integers in order of first appearance (clients first)."""
        index: dict[str, int] = {}
        client_rack = [None if (name := state.clients[pid].rack_id) is None else index.setdefault(name, len(index))
                       for pid in state.process_ids]
        views: list[tuple[list[dict[int, int]], list[int]]] = [([], []), ([], [])]
        for t in task_ids:
            counts: list[dict[int, int]] = [{}, {}]
            known = [0, 0]
            for part in state.tasks[t].topic_partitions:
                racks = part.rack_ids
                for scope, included in enumerate((part.is_source, part.is_changelog)):
                    if not included or not racks:
                        continue
                    known[scope] += 1
                    on = counts[scope]
                    for rack_name in racks:
                        r = index.setdefault(rack_name, len(index))
                        on[r] = on.get(r, 0) + 1
            for scope in (0, 1):
                views[scope][0].append(counts[scope])
                views[scope][1].append(known[scope])
        return cls(client_rack, *views[0]), cls(client_rack, *views[1])

    def cross(self, task: int, client: int) -> int:
        rack = self._client_rack[client]
        if rack is None:
            return 0
        return self._known[task] - self._on_rack[task].get(rack, 0)

    def rack_of(self, client: int) -> int | None:
        return self._client_rack[client]

    def on_racks(self, task: int) -> Mapping[int, int]:
        """Rack -> partitions of ``task`` with a replica there."""
        return self._on_rack[task]

    def known(self, task: int) -> int:
        """Partitions of ``task`` whose replicas' racks are known."""
        return self._known[task]

    def cross_on(self, task: int, rack: int | None) -> int:
        """Partitions of ``task`` a client in ``rack`` reads from another rack (0 for an unknown rack)."""
        return 0 if rack is None else self._known[task] - self._on_rack[task].get(rack, 0)


class Problem:
    """The assignor's read-only view of one rebalance (built once, shared by every step)."""

    def __init__(self, state: ApplicationState, settings: Settings) -> None:
        self.state = state
        self.settings = settings
        self.configs = state.configs
        self.task_ids: tuple[TaskId, ...] = state.task_ids.items
        self.numbers: dict[TaskId, int] = task_numbers(self.task_ids)
        infos = [state.tasks[t] for t in self.task_ids]
        self.pids: tuple[ProcessId, ...] = state.process_ids
        self.num_tasks = len(self.task_ids)
        self.num_clients = len(self.pids)
        clients = [state.clients[pid] for pid in self.pids]
        for pid, client in zip(self.pids, clients, strict=True):
            if client.num_processing_threads <= 0:
                raise UserInputError(f"client {pid} has no consumers (threads), so it cannot run tasks")
        self.threads: list[int] = [c.num_processing_threads for c in clients]
        total_threads = sum(self.threads)
        #: Each client's share of the application's threads.
        self.share: list[float] = [n / total_threads for n in self.threads] if total_threads else []
        self.weights: TaskWeights = task_weights(infos, settings.stateless_task_weight)
        self.state_weight = self.weights.state
        self.active_weight = self.weights.active
        #: Subtopology group of each task (numbered in TaskId order of the groups).
        groups: dict[tuple[str | None, int], int] = {}
        self.subtopology: list[int] = [
            groups.setdefault((t.topology_name, t.subtopology), len(groups)) for t in self.task_ids
        ]
        self.num_subtopologies = len(groups)
        self.lags = LagTable(state, self.numbers)
        #: Task numbers with a changelog: they have lags and get standbys.
        self.changelog: frozenset[int] = frozenset(self.lags.ends)
        #: What a client without any copy of each task restores.
        self.full: list[float] = [
            self.state_weight[t] if t in self.changelog and self.lags.ends[t] != 0 else 0.0
            for t in range(self.num_tasks)
        ]
        self._reported = self.lags.reported_by_client
        self.prev_owner: list[int] = self._previous_owners(clients)
        #: Per task number, the members that held it as a standby before.
        self.prev_standby: dict[int, list[int]] = {}
        for index, client in enumerate(clients):
            for task_id in client.previous_standby_tasks:
                number = self.numbers.get(task_id)
                if number is not None:
                    self.prev_standby.setdefault(number, []).append(index)
        #: Per task, the clients that reported an offset sum for it (a local copy of its state), by index.
        self.copies: list[tuple[int, ...]] = [
            tuple(sorted(self.lags.reported_by_task.get(t, {}))) for t in range(self.num_tasks)
        ]
        #: The client a task sticks to: its previous active owner, else (nobody runs it: its client left, or
        #: its active is in transit between two clients) the caught-up copy with the least to restore.
        self.sticky_owner: list[int] = [o if o >= 0 else self._best_copy(t) for t, o in enumerate(self.prev_owner)]
        self.tags: list[Mapping[str, str]] = self._standby_tags(clients)
        self.tag_keys: tuple[str, ...] = tuple(sorted({k for tags in self.tags for k in tags}))
        racks_known = any(c.rack_id is not None for c in clients)
        use_racks = racks_known and settings.traffic_cost > 0
        self.source_racks: RackView | None = None
        self.changelog_racks: RackView | None = None
        if use_racks:
            self.source_racks, self.changelog_racks = RackView.build_both(state, self.task_ids)

    def _previous_owners(self, clients: Sequence[object]) -> list[int]:
        """Each task's previous active owner among the members (-1: none). Two claimants (stale input):
        the one with the lower lag, then the lower ProcessId."""
        owners = [-1] * self.num_tasks
        for index, pid in enumerate(self.pids):
            for task_id in self.state.clients[pid].previous_active_tasks:
                t = self.numbers.get(task_id)
                if t is None:
                    continue
                other = owners[t]
                if other < 0 or (t in self.changelog and self._lag_key(t, index) < self._lag_key(t, other)):
                    owners[t] = index
        return owners

    def _best_copy(self, task: int) -> int:
        """The caught-up copy of ``task`` with the least to restore (ties: ProcessId order), or -1."""
        caught = [c for c in self.copies[task] if self.is_caught_up(task, c)]
        return min(caught, key=lambda c: (self.restore(task, c), c), default=-1)

    def _lag_key(self, task: int, client: int) -> tuple[int, int]:
        lag = self.lags.lag(client, task)
        return (-1 if lag == LATEST_OFFSET else self.lags.ends[task] + 1 if lag == UNKNOWN_OFFSET_SUM else lag,
                client)

    def _standby_tags(self, clients: Sequence[object]) -> list[Mapping[str, str]]:
        """The tags standbys are spread over: ``rack.aware.assignment.tags`` when configured, else the
        client's rack when every client has one and there are several racks, else none."""
        keys = self.configs.rack_aware_assignment_tags
        states = [self.state.clients[pid] for pid in self.pids]
        if keys:
            return [{k: s.client_tags[k] for k in keys if k in s.client_tags} for s in states]
        racks = [s.rack_id for s in states]
        if racks and all(r is not None for r in racks) and len(set(racks)) > 1:
            return [{RACK_TAG: r} for r in racks if r is not None]
        return [{} for _ in states]

    # -- costs --------------------------------------------------------------------------------

    def is_caught_up(self, task: int, client: int) -> bool:
        """Within ``acceptable.recovery.lag`` (or running it); a task without changelog needs no catching up."""
        return task not in self.changelog or self.lags.is_caught_up(client, task)

    def restore(self, task: int, client: int) -> float:
        """Units of state ``client`` must restore to host ``task`` (see the module docstring)."""
        lag = self._reported[client].get(task)
        if lag is None:
            return self.full[task]
        return self.restore_for_lag(task, lag)

    def restore_for_lag(self, task: int, lag: int) -> float:
        if lag == LATEST_OFFSET:
            return 0.0
        weight = self.state_weight[task]
        end = self.lags.ends[task]
        if lag == UNKNOWN_OFFSET_SUM or end < 0:
            return weight
        if end == 0:
            return 0.0
        return weight * min(1.0, lag / end)

    def full_restore(self, task: int) -> float:
        """What a client without any copy restores."""
        return self.full[task]

    def active_cross(self, task: int, client: int) -> int:
        return 0 if self.source_racks is None else self.source_racks.cross(task, client)

    def standby_cross(self, task: int, client: int) -> int:
        return 0 if self.changelog_racks is None else self.changelog_racks.cross(task, client)

    def active_cost(self, task: int, client: int) -> float:
        """Movement and traffic cost of running ``task``'s active on ``client``."""
        s = self.settings
        return s.movement_cost * self.restore(task, client) + s.traffic_cost * self.active_cross(task, client)

    def standby_cost(self, task: int, client: int) -> float:
        s = self.settings
        return s.movement_cost * self.restore(task, client) + s.traffic_cost * self.standby_cross(task, client)

    def rack_of(self, client: int) -> int | None:
        return None if self.source_racks is None else self.source_racks.rack_of(client)
