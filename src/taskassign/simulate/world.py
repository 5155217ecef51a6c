"""The simulated application between rebalances: clients, their local stores, changelogs, the clock.

The world answers two questions for the runner: *what does the group leader see now* (an
ApplicationState built exactly as the leader builds it from subscriptions) and *what happens when an
assignment takes effect*. In between, ``advance`` moves the clock: changelogs grow at their append
rates, clients restore at their restore rates (actives first, see restore.py), restored actives start
RUNNING, and unowned local stores are deleted after ``state.cleanup.delay.ms``.

What a client reports follows Kafka Streams: a RUNNING active reports offset sum -2; every other task
with a local store (restoring active, standby, warm-up, or a store left from an earlier assignment)
reports its offset sum, so it counts as a previous standby.

Under the streams protocol (``streams=True``, KIP-1071) the group is the broker's: a crashed client stays a
member, with its target assignment, until the broker notices (``notice_crash``), so a recomputation meanwhile
still gives it tasks that do not run; each member's current target is what the broker assigns from, reported
per thread (``consumer_previous_tasks``); a client that comes back joins with new member ids and empty targets
(its state counts only through the offsets it reports).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from taskassign.errors import UserInputError
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    GroupAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskInfo,
)
from taskassign.simulate.restore import RateCarry, share_restore

__all__ = ("FollowUp", "Sample", "SimClient", "Store", "World")


@dataclass(slots=True)
class Store:
    """A client's local copy of one task's state: how far it has read the changelog (an offset sum)."""

    offset: int
    #: When the client stopped owning the task (None while it owns it); the cleaner deletes it later.
    released_at: int | None = None


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A follow-up rebalance a client was told to trigger; ``kind`` is ``probing`` or ``followup``."""

    deadline_ms: int
    kind: str


@dataclass(slots=True)
class SimClient:
    """One KafkaStreams instance over its life in the simulation (mutable scratch state of the run)."""

    process_id: ProcessId
    consumers: tuple[str, ...]
    rack: str | None
    tags: Mapping[str, str]
    host: str | None
    restore_rate: int
    alive: bool = True
    #: (time joined, join sequence number): the earliest living member leads the group.
    joined: tuple[int, int] = (0, 0)
    stores: dict[TaskId, Store] = field(default_factory=dict)
    active: set[TaskId] = field(default_factory=set)
    running: set[TaskId] = field(default_factory=set)
    standby: set[TaskId] = field(default_factory=set)
    #: Actives assigned here but withheld until their previous owner revoked them (cooperative protocol);
    #: meanwhile they restore like standbys (Kafka's temporary standbys).
    withheld: set[TaskId] = field(default_factory=set)
    followup: FollowUp | None = None
    carry: RateCarry = field(default_factory=RateCarry)
    #: Incremented every time the client goes down (to ignore stale crash detections).
    down_epoch: int = 0
    #: Streams protocol: a member of the group (a crashed client stays one until the broker notices).
    in_group: bool = True
    #: Streams protocol: each member's current target assignment, by consumer (None: not known yet).
    targets: dict[str, set[TaskId]] | None = None
    #: Streams protocol: how many times the client joined (new member ids each time: ``<consumer>#<n>``).
    incarnation: int = 1
    #: Streams protocol: the consumer ids of its first incarnation, which later member ids derive from.
    first_consumers: tuple[str, ...] = ()

    def release_all(self, now: int) -> None:
        for store in self.stores.values():
            if store.released_at is None:
                store.released_at = now
        self.active.clear()
        self.running.clear()
        self.standby.clear()
        self.withheld.clear()
        self.followup = None
        self.targets = None


@dataclass(frozen=True, slots=True)
class Sample:
    """The application at one instant: what is left to restore and how many tasks are not processing."""

    time_ms: int
    active_records_left: int
    standby_records_left: int
    tasks_not_running: int
    clients_alive: int

    @property
    def records_left(self) -> int:
        return self.active_records_left + self.standby_records_left


class World:
    """The application's clients and changelogs at the current simulated time ``now``."""

    def __init__(self, scenario: Scenario, *, restore_rate: int, state_cleanup_delay_ms: int,
                 streams: bool = False) -> None:
        state = scenario.state
        self.scenario = scenario
        self.streams = streams
        self.now = state.now_ms
        self.cleanup_delay_ms = state_cleanup_delay_ms
        self.tasks: dict[TaskId, TaskInfo] = dict(state.tasks)
        self.changelog = frozenset(state.stateful_task_ids)
        unknown = [t for t in sorted(self.changelog) if state.changelog_end_offset_sums[t] == UNKNOWN_OFFSET_SUM]
        if unknown:
            raise UserInputError(f"task {unknown[0]} has an unknown changelog end offset sum (-3); the simulator "
                                 "needs every changelog's end offset to let lags evolve")
        self.end: dict[TaskId, int] = {t: state.changelog_end_offset_sums[t] for t in sorted(self.changelog)}
        self.append_rate: dict[TaskId, int] = dict.fromkeys(self.end, 0)
        self.append_carry: dict[TaskId, RateCarry] = {t: RateCarry() for t in self.end}
        self.clients: dict[ProcessId, SimClient] = {}
        self._join_seq = 0
        first = scenario.leader_process_id
        order = sorted(state.clients, key=lambda pid: (pid != first, pid))
        for pid in order:
            self._add_from_state(state.clients[pid], restore_rate)

    # -- membership -----------------------------------------------------------------------------

    def _next_join(self) -> tuple[int, int]:
        self._join_seq += 1
        return (self.now, self._join_seq)

    def _add_from_state(self, reported: KafkaStreamsState, restore_rate: int) -> None:
        client = SimClient(reported.process_id, reported.consumer_client_ids, reported.rack_id,
                           dict(reported.client_tags), reported.host_info, restore_rate, joined=self._next_join())
        for t, offset_sum in reported.task_offset_sums.items():
            end = self.end[t]
            if offset_sum == LATEST_OFFSET:
                offset = end
            elif offset_sum == UNKNOWN_OFFSET_SUM or offset_sum > end:
                offset = 0  # unknown, or ahead of the changelog: Kafka restores such a store from scratch
            else:
                offset = offset_sum
            client.stores[t] = Store(offset)
        client.active = set(reported.previous_active_tasks)
        client.standby = set(reported.previous_standby_tasks)
        if reported.consumer_previous_tasks:
            client.targets = {c: set(ts) for c, ts in reported.consumer_previous_tasks.items()}
        for t in (client.active | client.standby) & self.changelog:
            client.stores.setdefault(t, Store(0))
        client.running = {t for t in client.active if self._caught_up(client, t)}
        self.clients[client.process_id] = client

    def add_client(self, process_id: ProcessId, *, threads: int, rack: str | None, tags: Mapping[str, str],
                   host: str | None, restore_rate: int) -> SimClient:
        """A brand-new client joins (no local state)."""
        consumers = tuple(f"{process_id}-StreamThread-{i}" for i in range(1, threads + 1))
        client = SimClient(process_id, consumers, rack, dict(tags), host, restore_rate, joined=self._next_join())
        self.clients[process_id] = client
        return client

    def take_down(self, process_id: ProcessId, *, wipe_state: bool, leave_group: bool = True) -> None:
        """The client stops (left or crashed): it owns nothing any more; its disk keeps its stores. Under the
        streams protocol a crash (``leave_group=False``) keeps its membership and targets until noticed."""
        client = self.clients[process_id]
        client.alive = False
        client.down_epoch += 1
        if self.streams and not leave_group:
            client.running.clear()
            client.followup = None
        else:
            client.in_group = False
            client.release_all(self.now)
        if wipe_state:
            client.stores.clear()

    def notice_crash(self, process_id: ProcessId) -> None:
        """Streams protocol: the broker removes a crashed client's members (session timeout)."""
        client = self.clients[process_id]
        if client.in_group:
            client.in_group = False
            client.release_all(self.now)

    def bring_up(self, process_id: ProcessId) -> None:
        """A down client starts again, as a new group member, with the stores still on its disk."""
        client = self.clients[process_id]
        client.alive = True
        client.joined = self._next_join()
        client.carry = RateCarry()
        if self.streams:  # new member ids, empty targets; members left behind by a crash are replaced
            client.release_all(self.now)
            client.in_group = True
            client.first_consumers = client.first_consumers or client.consumers
            client.incarnation += 1
            client.consumers = tuple(f"{c}#{client.incarnation}" for c in client.first_consumers)

    def alive_ids(self) -> list[ProcessId]:
        return sorted(pid for pid, c in self.clients.items() if c.alive)

    def member_ids(self) -> list[ProcessId]:
        """The clients in the group: the running ones, and under the streams protocol crashed ones the broker
        has not noticed yet."""
        return sorted(pid for pid, c in self.clients.items() if c.alive or (self.streams and c.in_group))

    def down_ids(self) -> list[ProcessId]:
        return sorted(pid for pid, c in self.clients.items() if not c.alive)

    def leader(self) -> ProcessId | None:
        """The group leader: the living member that joined first (Kafka's coordinator keeps its leader
        while it lives and picks another member when it leaves)."""
        alive = [c for c in self.clients.values() if c.alive]
        return min(alive, key=lambda c: c.joined).process_id if alive else None

    # -- time -------------------------------------------------------------------------------------

    def _caught_up(self, client: SimClient, task: TaskId) -> bool:
        return task not in self.changelog or client.stores[task].offset >= self.end[task]

    def advance(self, to_ms: int) -> None:
        """Move the clock to ``to_ms``: changelogs grow, clients restore, stores get cleaned up."""
        elapsed = to_ms - self.now
        if elapsed <= 0:
            return
        for t, rate in self.append_rate.items():
            if rate:
                self.end[t] += self.append_carry[t].take(rate, elapsed)
        for pid in self.alive_ids():
            self._restore(self.clients[pid], elapsed)
        self.now = to_ms
        for pid in self.alive_ids():
            self._clean_up(self.clients[pid])

    def _restore(self, client: SimClient, elapsed: int) -> None:
        stores, end = client.stores, self.end
        for t in client.running & self.changelog:
            stores[t].offset = end[t]  # a running active writes its changelog: always caught up
        budget = client.carry.take(client.restore_rate, elapsed)
        restoring = sorted(t for t in client.active - client.running if t in self.changelog)
        replicas = sorted(t for t in client.standby | client.withheld if t in self.changelog)
        given = share_restore(
            budget,
            [(t, end[t] - stores[t].offset) for t in restoring],
            [(t, end[t] - stores[t].offset) for t in replicas],
        )
        for t, records in given.items():
            stores[t].offset += records
        client.running.update(t for t in restoring if stores[t].offset >= end[t])

    def _clean_up(self, client: SimClient) -> None:
        expired = [t for t, s in client.stores.items()
                   if s.released_at is not None and self.now - s.released_at >= self.cleanup_delay_ms]
        for t in expired:
            del client.stores[t]

    # -- rebalances -------------------------------------------------------------------------------

    def application_state(self) -> ApplicationState:
        """What the group leader sees now: living clients' subscriptions, current changelog ends."""
        tasks = {t: replace(info, changelog_end_offset_sum=self.end[t]) if t in self.changelog else info
                 for t, info in self.tasks.items()}
        clients = {pid: self._subscription(pid) for pid in self.member_ids()}
        return ApplicationState(tasks=tasks, clients=clients, configs=self.scenario.state.configs, now_ms=self.now)

    def _subscription(self, pid: ProcessId) -> KafkaStreamsState:
        client = self.clients[pid]
        offsets = {
            t: LATEST_OFFSET if t in client.running else min(store.offset, self.end[t])
            for t, store in sorted(client.stores.items())
        }
        targets = client.targets if self.streams and client.targets is not None else {}
        return KafkaStreamsState(
            process_id=pid,
            consumer_client_ids=client.consumers,
            previous_active_tasks=SortedFrozenSet(client.active),
            previous_standby_tasks=SortedFrozenSet(t for t in offsets if t not in client.active),
            task_offset_sums=offsets,
            host_info=client.host,
            client_tags=client.tags,
            rack_id=client.rack,
            consumer_previous_tasks={c: SortedFrozenSet(targets.get(c, ())) for c in client.consumers}
            if targets else {},
        )

    def apply(self, group: GroupAssignment, *, probing_deadline_ms: int | None) -> int:
        """The assignment takes effect; returns how many active tasks the leader withheld.

        The leader's thread-level assignment says which actives it withheld because another member still
        owned their partitions (cooperative protocol): the new owner gets them at the immediate follow-up
        rebalance and restores them as temporary standbys meanwhile. ``probing_deadline_ms`` is the
        deadline the leader set for a probing request, to tell probing follow-ups from an assignor's own.
        """
        withheld_total = 0
        consumers = group.consumers or {}
        for pid in self.member_ids():
            client = self.clients[pid]
            entry = group.clients.get(pid)
            active = set(entry.active_tasks()) if entry is not None else set()
            standby = set(entry.standby_tasks()) if entry is not None else set()
            if self.streams:
                shares = consumers.get(pid, {})
                client.targets = {c: set(share.active) | set(share.standby) for c, share in shares.items()}
                if not client.alive:  # a crashed member the broker still counts: its targets do not run
                    client.active, client.standby = active, standby
                    continue
            withheld = {t for share in consumers.get(pid, {}).values() for t in share.withheld}
            withheld_total += len(withheld)
            client.active = active - withheld
            client.withheld = withheld
            client.standby = standby
            client.running &= client.active
            held = (client.active | client.withheld | client.standby) & self.changelog
            for t in held:
                client.stores.setdefault(t, Store(0)).released_at = None
            for t, store in client.stores.items():
                if t not in held and store.released_at is None:
                    store.released_at = self.now
            client.running.update(t for t in client.active if self._caught_up(client, t))
            deadline = entry.followup_rebalance_deadline if entry is not None else None
            if deadline is None:
                client.followup = None
            else:
                kind = "probing" if deadline == probing_deadline_ms else "followup"
                client.followup = FollowUp(deadline, kind)
        return withheld_total

    def due_followups(self) -> list[FollowUp]:
        """Every living client's pending follow-up, earliest first."""
        items = [c.followup for c in self.clients.values() if c.alive and c.followup is not None]
        return sorted(items, key=lambda f: (f.deadline_ms, f.kind))

    # -- observation ------------------------------------------------------------------------------

    def sample(self) -> Sample:
        active_left = standby_left = 0
        running: set[TaskId] = set()
        alive = 0
        for client in self.clients.values():
            if not client.alive:
                continue
            alive += 1
            running |= client.running
            for t in client.active - client.running:
                if t in self.changelog:
                    active_left += self.end[t] - client.stores[t].offset
            for t in client.standby | client.withheld:
                if t in self.changelog:
                    standby_left += self.end[t] - client.stores[t].offset
        return Sample(self.now, active_left, standby_left, sum(1 for t in self.tasks if t not in running), alive)
