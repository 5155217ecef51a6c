"""Replaying rebalance after rebalance: the event timeline, the triggers, one leader rebalance each.

The runner turns the events script into timed actions and walks the clock from one instant to the
next: an action, a membership change, a crash noticed after the session timeout, or a client's
follow-up deadline (probing rebalances included). At each instant it first applies the actions, then
runs at most one rebalance, exactly as ``taskassign assign`` does (``leader.assign.assign_scenario``: a fresh
assignor instance, validation, the callback, follow-up deadlines on the leader's client). Between
instants the world restores state (world.py). Every random choice comes from ``random.Random(seed)``.

Modelling choices (docs/events.md): a rebalance takes no time; members that crashed and are not yet
noticed are left out of any rebalance that happens meanwhile; with the cooperative protocol (the
scenario's ``taskassign.rebalance.protocol``, or the events file's ``protocol``) an active task the leader
withheld, because another member still owned it, is handed over at an immediate second rebalance.

A streams-protocol assignor (``streams_sticky``, ``streams_balanced``) switches the run to the streams
protocol (KIP-1071; docs/streams-protocol.md): each "rebalance" is the broker recomputing the target
assignment when the group changes, with no leader, no probing or follow-up rebalance and no second
rebalance for a hand-over (the owner revokes, then the new owner starts, within the instant); crashed members
stay in the group, with their tasks, until the session timeout (world.py).
"""

from __future__ import annotations

import heapq
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from taskassign.analysis.metrics import AssignmentMetrics, compute_metrics
from taskassign.assignors.registry import STREAMS_GROUP_ASSIGNORS, ResolvedAssignor, resolve
from taskassign.configs import REBALANCE_PROTOCOL
from taskassign.errors import UserInputError
from taskassign.formats.events import (
    Advance,
    AppendRate,
    ClientSelector,
    Crash,
    Event,
    EventsFile,
    Join,
    Leave,
    Perturb,
    RackDown,
    RackUp,
    Rebalance,
    Rejoin,
    RestoreRate,
    RollingRestart,
)
from taskassign.formats.scenario import Scenario, with_config_overrides
from taskassign.ids import LONG_MAX, ProcessId
from taskassign.leader.assign import assign_scenario
from taskassign.leader.run import RebalanceResult
from taskassign.model import AssignmentError
from taskassign.simulate.restore import MS_PER_S
from taskassign.simulate.result import RebalanceRecord, SimulationResult
from taskassign.simulate.world import World

__all__ = ("simulate",)

#: The events file's ``protocol`` for the streams rebalance protocol (KIP-1071).
STREAMS_PROTOCOL = "streams"


@dataclass(frozen=True, slots=True)
class _Down:
    process_id: ProcessId
    graceful: bool
    wipe_state: bool


@dataclass(frozen=True, slots=True)
class _Up:
    process_id: ProcessId


@dataclass(frozen=True, slots=True)
class _NoticeCrash:
    process_id: ProcessId
    epoch: int


_Action = Event | _Down | _Up | _NoticeCrash


def simulate(
    scenario: Scenario,
    events: EventsFile,
    assignor: ResolvedAssignor | str,
    *,
    seed: int | None = None,
    on_rebalance: Callable[[RebalanceRecord], None] | None = None,
) -> SimulationResult:
    """Replay ``events`` on ``scenario`` with ``assignor`` (a spec is resolved here, once for the whole run);
    ``seed`` overrides the events file's seed. Same inputs and seed, same result. A streams-protocol assignor
    runs the streams protocol."""
    resolved = resolve(assignor)
    streams = resolved.is_streams
    if events.protocol == STREAMS_PROTOCOL and not streams:
        raise UserInputError(f"$.protocol: 'streams' runs a broker-side assignor: give -a "
                             f"{' or -a '.join(STREAMS_GROUP_ASSIGNORS)}, not {resolved.spec!r}")
    if streams and events.protocol not in (None, STREAMS_PROTOCOL):
        raise UserInputError(f"$.protocol: {resolved.spec} is an assignor of the streams protocol, not of the classic "
                             f"{events.protocol!r} one")
    if events.protocol is not None and not streams:
        scenario = with_config_overrides(scenario, {REBALANCE_PROTOCOL: events.protocol})
    return _Run(scenario, events, resolved, events.seed if seed is None else seed, on_rebalance, streams).run()



#: The most restore samples a run takes (one per sample_interval_ms while anything restores): a bound on a
#: run's work and on the size of simulation.json, which a tiny sample interval would otherwise make
#: practically endless. The default interval fills it in about 11.5 days of restoring.
MAX_SAMPLES = 100_000

class _Run:
    def __init__(self, scenario: Scenario, events: EventsFile, assignor: ResolvedAssignor, seed: int,
                 on_rebalance: Callable[[RebalanceRecord], None] | None, streams: bool) -> None:
        self.scenario = scenario
        self.streams = streams
        self.events = events
        self.assignor = assignor
        self.seed = seed
        self.rng = random.Random(seed)
        self.on_rebalance = on_rebalance
        self.world = World(scenario, restore_rate=events.restore_rate,
                           state_cleanup_delay_ms=events.state_cleanup_delay_ms, streams=streams)
        self.start = self.world.now
        #: The latest instant the clock can reach (max_duration_ms, or until_ms if later): every time, end
        #: offset and deadline the run writes must be a Java long up to then (checked here and at append_rate).
        self.last_ms = self.start + max(events.max_duration_ms, events.until_ms or 0)
        self._check_horizon(scenario)
        self.queue: list[tuple[int, int, _Action, str]] = []
        self.seq = 0
        self.pending: list[str] = []
        self.records: list[RebalanceRecord] = []
        self.samples = [self.world.sample()]
        self.notes: list[str] = []
        self.stopped: str | None = None
        self.last: RebalanceResult | None = None
        self.last_state = self.world.application_state()
        self.last_metrics: AssignmentMetrics | None = None
        cursor = self.start
        paths = events.paths or tuple(f"$.events[{i}]" for i in range(len(events.events)))
        for event, path in zip(events.events, paths, strict=True):
            if isinstance(event, Advance):
                cursor += event.ms
            else:
                self._push(cursor, event, path)

    def _check_horizon(self, scenario: Scenario) -> None:
        """The run's last instant plus the probing interval (the latest deadline it can set) is a Java long."""
        latest = scenario.state.configs.latest_now_ms
        if self.last_ms > latest:
            span = latest - self.start
            raise UserInputError(
                f"$.max_duration_ms / $.until_ms: the run may go on until now_ms + {self.last_ms - self.start} ms = "
                f"{self.last_ms}, but a probing deadline set then (+ probing.rebalance.interval.ms) would pass "
                f"Long.MAX_VALUE ({LONG_MAX}); from now_ms {self.start}, max_duration_ms and until_ms must be at most "
                f"{span}")

    # -- the timeline ---------------------------------------------------------------------------

    def _push(self, at_ms: int, action: _Action, path: str) -> None:
        self.seq += 1
        heapq.heappush(self.queue, (at_ms, self.seq, action, path))

    def _next_instant(self) -> int | None:
        candidates = []
        if self.queue:
            candidates.append(self.queue[0][0])
        if self.pending:
            candidates.append(self.world.now)
        followups = self.world.due_followups()
        if followups:
            candidates.append(max(self.world.now, followups[0].deadline_ms))
        return min(candidates) if candidates else None

    def run(self) -> SimulationResult:
        self._rebalance(["initial"])
        until = None if self.events.until_ms is None else self.start + self.events.until_ms
        horizon = self.start + self.events.max_duration_ms
        while self.stopped is None:
            instant = self._next_instant()
            if instant is None or (until is not None and instant > until):
                break
            if instant > horizon:
                self.stopped = (f"stopped after {self.events.max_duration_ms} ms of simulated time "
                                "(max_duration_ms) with more still to happen")
                break
            if not self._advance(instant):
                break
            acted = False
            while self.queue and self.queue[0][0] <= instant:
                _, _, action, path = heapq.heappop(self.queue)
                self._act(action, path)
                acted = True
            if acted:
                self.samples.append(self.world.sample())
            reasons = self._due_reasons()
            if reasons and self.stopped is None:
                self._rebalance(reasons)
        self._settle(until, horizon)
        return self._result()

    def _advance(self, to_ms: int) -> bool:
        """Move the clock, sampling every sample interval while something is restoring (an idle
        stretch is one step: nothing changes in it but the changelog ends, which running tasks follow).
        False if the run stopped on the way (MAX_SAMPLES)."""
        step = self.events.sample_interval_ms
        while self.world.now < to_ms:
            if len(self.samples) >= MAX_SAMPLES:
                self.stopped = (f"stopped after {MAX_SAMPLES} restore samples at +{self.world.now - self.start} ms "
                                "with more still to happen: raise sample_interval_ms (or shorten until_ms)")
                return False
            idle = self.samples[-1].records_left == 0
            self.world.advance(to_ms if idle else min(to_ms, self.world.now + step))
            self.samples.append(self.world.sample())
        return True

    def _settle(self, until: int | None, horizon: int) -> None:
        """After the last rebalance: run to ``until``, or until nothing is left to restore."""
        if self.stopped is not None:
            return
        if until is not None:
            self._advance(until)
            return
        while self.samples[-1].records_left > 0 and self.world.now < horizon and self.stopped is None:
            before = self.samples[-1].records_left
            self._advance(min(horizon, self.world.now + self.events.sample_interval_ms))
            if self.samples[-1].records_left >= before:
                self.notes.append("restoration stopped progressing (restore rates at or below append rates)")
                break

    def _due_reasons(self) -> list[str]:
        reasons = list(dict.fromkeys(self.pending))
        self.pending.clear()
        for followup in self.world.due_followups():
            if followup.deadline_ms <= self.world.now and followup.kind not in reasons:
                reasons.append(followup.kind)
        return reasons

    # -- one rebalance --------------------------------------------------------------------------

    def _rebalance(self, reasons: list[str]) -> None:
        world = self.world
        if not world.member_ids():
            self.notes.append(f"at +{world.now - self.start} ms no client is running: no rebalance "
                              f"({', '.join(reasons)})")
            return
        state = world.application_state()
        leader = world.leader()
        current = Scenario(self.scenario.name, state, self.scenario.raw_configs, None, leader)
        result = assign_scenario(current, self.assignor)
        metrics = compute_metrics(state, result.group)
        probing_deadline = state.now_ms + state.configs.probing_rebalance_interval_ms \
            if result.probing_rebalance_needed else None
        withheld = 0
        if result.error is AssignmentError.NONE:
            withheld = world.apply(result.group, probing_deadline_ms=probing_deadline)
            if withheld:
                self.pending.append("revocation")
        else:
            self.stopped = (f"rebalance {len(self.records)}: the assignor's output failed validation "
                            f"({result.error.name}); Kafka's leader fails the rebalance here")
        followups = world.due_followups()
        sample = world.sample()
        self.samples.append(sample)
        record = RebalanceRecord(
            index=len(self.records),
            time_ms=world.now,
            reasons=tuple(reasons),
            leader="" if self.streams else str(leader),
            assignor=result.assignor,
            error=result.error.name,
            probing_rebalance_needed=result.probing_rebalance_needed,
            next_followup_ms=followups[0].deadline_ms if followups else None,
            withheld_tasks=withheld,
            active_records_left=sample.active_records_left,
            standby_records_left=sample.standby_records_left,
            tasks_not_running=sample.tasks_not_running,
            metrics=metrics.to_dict(),
        )
        self.records.append(record)
        self.last = result
        self.last_state = state
        self.last_metrics = metrics
        if self.on_rebalance is not None:
            self.on_rebalance(record)
        if self.stopped is None and len(self.records) >= self.events.max_rebalances and (
            self.pending or followups or self.queue
        ):
            self.stopped = (f"stopped after {len(self.records)} rebalances (max_rebalances) with more pending; "
                            "an assignor that always asks for a follow-up never settles")

    # -- events ---------------------------------------------------------------------------------

    def _act(self, action: _Action, path: str) -> None:
        world = self.world
        if isinstance(action, _NoticeCrash):
            client = world.clients[action.process_id]
            if not client.alive and client.down_epoch == action.epoch:
                world.notice_crash(action.process_id)
                self.pending.append("crash")
        elif isinstance(action, _Down):
            self._down(action.process_id, graceful=action.graceful, wipe_state=action.wipe_state, path=path)
        elif isinstance(action, _Up):
            self._up(action.process_id, path)
        elif isinstance(action, Join):
            self._join(action, path)
        elif isinstance(action, Leave):
            for pid in self._select(action.clients, world.alive_ids(), path, "running"):
                self._down(pid, graceful=True, wipe_state=False, path=path)
        elif isinstance(action, Crash):
            for pid in self._select(action.clients, world.alive_ids(), path, "running"):
                self._down(pid, graceful=False, wipe_state=action.wipe_state, path=path)
        elif isinstance(action, Rejoin):
            for pid in self._select(action.clients, world.down_ids(), path, "down"):
                self._up(pid, path)
        elif isinstance(action, RollingRestart):
            self._rolling_restart(action, path)
        elif isinstance(action, RackDown):
            for pid in self._in_rack(action.rack, world.alive_ids(), path, "running"):
                self._down(pid, graceful=False, wipe_state=action.wipe_state, path=path)
        elif isinstance(action, RackUp):
            for pid in self._in_rack(action.rack, world.down_ids(), path, "down"):
                self._up(pid, path)
        elif isinstance(action, RestoreRate):
            for pid in self._select(action.clients, sorted(world.clients), path, "known"):
                world.clients[pid].restore_rate = action.records_per_s
        elif isinstance(action, AppendRate):
            self._append_rate(action, path)
        elif isinstance(action, Perturb):
            for _ in range(action.count):
                self._perturb_once(action, path)
        elif isinstance(action, Rebalance):
            self.pending.append("forced")

    def _in_rack(self, rack: str, eligible: list[ProcessId], path: str, what: str) -> list[ProcessId]:
        """The ``eligible`` clients in ``rack``. A rack no client has ever had is a mistake in the script
        (an error naming the event); a known rack with no client to act on is a note."""
        racks = sorted({c.rack for c in self.world.clients.values() if c.rack is not None})
        if rack not in racks:
            raise UserInputError(f"{path}.rack: no client has rack {rack!r} (the clients' racks: "
                                 f"{', '.join(racks) or 'none'})")
        chosen = [pid for pid in eligible if self.world.clients[pid].rack == rack]
        if not chosen:
            self.notes.append(f"{path}: no {what} client in rack {rack!r} at +{self.world.now - self.start} ms")
        return chosen

    def _select(self, selector: ClientSelector, eligible: list[ProcessId], path: str, what: str) -> list[ProcessId]:
        if selector.all:
            return list(eligible)
        if selector.count is not None:
            if selector.count > len(eligible):
                raise UserInputError(f"{path}: asks for {selector.count} clients but only {len(eligible)} are {what} "
                                     f"at +{self.world.now - self.start} ms")
            return sorted(self.rng.sample(eligible, selector.count))
        chosen = []
        for pid in selector.process_ids:
            if pid not in self.world.clients:
                raise UserInputError(f"{path}: client {pid} is not in the scenario and has not joined")
            if pid not in eligible:
                raise UserInputError(f"{path}: client {pid} is not {what} at +{self.world.now - self.start} ms")
            chosen.append(pid)
        return chosen

    def _down(self, pid: ProcessId, *, graceful: bool, wipe_state: bool, path: str) -> None:
        world = self.world
        if not world.clients[pid].alive:
            self.notes.append(f"{path}: client {pid} was already down at +{world.now - self.start} ms")
            return
        world.take_down(pid, wipe_state=wipe_state, leave_group=graceful)
        if graceful:
            self.pending.append("leave")
        else:
            client = world.clients[pid]
            self._push(world.now + self.events.session_timeout_ms, _NoticeCrash(pid, client.down_epoch), path)

    def _up(self, pid: ProcessId, path: str) -> None:
        if self.world.clients[pid].alive:
            self.notes.append(f"{path}: client {pid} was already running at +{self.world.now - self.start} ms")
            return
        self.world.bring_up(pid)
        self.pending.append("rejoin")

    def _new_process_id(self) -> ProcessId:
        while True:
            pid = ProcessId(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            if pid not in self.world.clients:
                return pid

    def _join(self, join: Join, path: str) -> None:
        tags = dict(join.tags)
        for key in self.scenario.state.configs.rack_aware_assignment_tags:
            if key not in tags:
                raise UserInputError(f"{path}.tags: rack.aware.assignment.tags lists {key!r}, so every client "
                                     "needs that tag")
        rate = self.events.restore_rate if join.restore_rate is None else join.restore_rate
        for _ in range(join.count):
            pid = join.process_id if join.process_id is not None else self._new_process_id()
            if pid in self.world.clients:
                raise UserInputError(f"{path}.process_id: client {pid} is already known; use 'rejoin' to bring a "
                                     "client back with its state")
            self.world.add_client(pid, threads=join.threads, rack=join.rack, tags=tags, host=join.host,
                                  restore_rate=rate)
        self.pending.append("join")

    def _rolling_restart(self, restart: RollingRestart, path: str) -> None:
        chosen = self._select(restart.clients, self.world.alive_ids(), path, "running")
        if restart.random_order:
            self.rng.shuffle(chosen)
        for i, pid in enumerate(chosen):
            down_at = self.world.now + i * restart.interval_ms
            self._push(down_at, _Down(pid, graceful=True, wipe_state=False), path)
            self._push(down_at + restart.downtime_ms, _Up(pid), path)

    def _append_rate(self, change: AppendRate, path: str) -> None:
        world = self.world
        tasks = sorted(world.changelog) if change.tasks is None else list(change.tasks)
        left_ms = self.last_ms - world.now
        for t in tasks:
            if t not in world.changelog:
                raise UserInputError(f"{path}.tasks: task {t} has no changelog in the scenario")
            # The changelog's end offset, a Java long, must stay one until the run's last instant.
            if left_ms > 0 and change.records_per_s > (LONG_MAX - world.end[t]) * MS_PER_S // left_ms:
                highest = min((LONG_MAX - world.end[u]) * MS_PER_S // left_ms for u in tasks)
                raise UserInputError(
                    f"{path}.records_per_s: must be between 0 and {highest}, got {change.records_per_s}: at that rate "
                    f"task {t}'s changelog end offset would pass Long.MAX_VALUE ({LONG_MAX}) within the "
                    f"{left_ms} ms the run may still go on (max_duration_ms)")
        for t in tasks:
            world.append_rate[t] = change.records_per_s

    def _perturb_once(self, perturb: Perturb, path: str) -> None:
        world = self.world
        alive, down = world.alive_ids(), world.down_ids()
        choices = ["join"] + (["leave", "crash"] if alive else []) + (["rejoin"] if down else [])
        choice = self.rng.choice(choices)
        if choice == "join":
            template = world.clients[self.rng.choice(sorted(world.clients))] if world.clients else None
            pid = self._new_process_id()
            world.add_client(pid, threads=perturb.threads, rack=template.rack if template else None,
                             tags=template.tags if template else {}, host=None, restore_rate=self.events.restore_rate)
            self.pending.append("join")
        elif choice == "rejoin":
            self._up(self.rng.choice(down), path)
        else:
            self._down(self.rng.choice(alive), graceful=choice == "leave", wipe_state=False, path=path)

    # -- the result -----------------------------------------------------------------------------

    def _result(self) -> SimulationResult:
        final_state = self.world.application_state()
        if final_state.tasks and not final_state.clients:
            self.notes.append("final.scenario.json is not written: no client is running at the end, and a "
                              "scenario with tasks has at least one client")
        return SimulationResult(
            scenario_name=self.scenario.name,
            assignor=self.last.assignor if self.last is not None else self.assignor.spec,
            seed=self.seed,
            protocol=STREAMS_PROTOCOL if self.streams
            else str(self.scenario.state.configs.extension(REBALANCE_PROTOCOL)),
            start_ms=self.start,
            end_ms=self.world.now,
            rebalances=tuple(self.records),
            samples=tuple(self.samples),
            final_scenario=Scenario(f"{self.scenario.name}-final", final_state, self.scenario.raw_configs, None,
                                    self.world.leader()),
            last_result=self.last,
            last_state=self.last_state,
            last_metrics=self.last_metrics,
            stopped_reason=self.stopped,
            notes=tuple(self.notes),
        )
