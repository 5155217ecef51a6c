"""A literal, slow transcription of Kafka's sticky assignors (TaskPairs, StickyTaskAssignor, LegacyStickyTaskAssignor),
for tests only.

It follows Kafka's code line by line with plain collections: a real set of task pairs with Kafka's
``maxPairs`` shortcut, a full scan of every client for ``shouldBalance``, Java hash orders rebuilt
with ``JavaHashMap`` at every use. The engine (``assignors/_sticky_placement.py``) replaces each of
these with a faster equivalent; randomized tests check that both give the same assignment.
Rack optimisation is not transcribed (the rack optimiser has its own tests).
"""

from __future__ import annotations

from taskassign.configs import kafka_line_at_least
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.java_order import JavaHashMap, hash_iteration_order, hashset_copy_capacity, hashset_copy_order
from taskassign.model import ApplicationState


class ReferenceSticky:
    def __init__(self, state: ApplicationState, *, legacy: bool, must_preserve: bool) -> None:
        self.state = state
        self.legacy = legacy
        self.must_preserve = must_preserve
        clients: JavaHashMap[ProcessId] = JavaHashMap()
        clients.put_all(state.process_ids)
        self.clients = clients.keys()
        states = state.kafka_streams_states(False)
        self.cap = {p: states[p].num_processing_threads for p in self.clients}
        self.active: dict[ProcessId, set[TaskId]] = {p: set() for p in self.clients}
        self.standby: dict[ProcessId, set[TaskId]] = {p: set() for p in self.clients}
        self.prev_active_map: JavaHashMap[TaskId] = JavaHashMap()
        self.prev_active: dict[TaskId, ProcessId] = {}
        self.prev_standby: dict[TaskId, JavaHashMap[ProcessId]] = {}
        for p in self.clients:
            for t in states[p].previous_active_tasks:
                self.prev_active_map.put(t)
                self.prev_active[t] = p
            for t in states[p].previous_standby_tasks:
                self.prev_standby.setdefault(t, JavaHashMap()).put(p)
        n = len(state.task_ids)
        self.max_pairs = n * (n - 1) // 2
        self.pairs: set[tuple[TaskId, TaskId]] = set()

    # ClientState / AssignmentState
    def tasks_of(self, p: ProcessId) -> set[TaskId]:
        return self.active[p] | self.standby[p]

    def load(self, p: ProcessId) -> float:
        return len(self.tasks_of(p)) / self.cap[p]

    def more_available(self, a: ProcessId, b: ProcessId) -> bool:
        if self.load(a) < self.load(b):
            return True
        return self.legacy and self.load(a) == self.load(b) and self.cap[a] > self.cap[b]

    def should_balance(self, p: ProcessId) -> bool:
        full = len(self.tasks_of(p)) >= self.cap[p] if self.legacy else self.load(p) >= 1
        return full and any(self.more_available(o, p) for o in self.clients)

    # TaskPairs
    def has_new_pair(self, t: TaskId, tasks: set[TaskId]) -> bool:
        if len(self.pairs) == self.max_pairs:
            return False
        return any((min(t, x), max(t, x)) not in self.pairs for x in tasks)

    def finalize(self, t: TaskId, p: ProcessId, active: bool) -> None:
        for x in self.tasks_of(p):
            self.pairs.add((min(t, x), max(t, x)))
        (self.active if active else self.standby)[p].add(t)

    # findClient
    def find_least_loaded(self, t: TaskId, ids: list[ProcessId], check_pairs: bool) -> ProcessId | None:
        best = None
        for p in ids:
            if not self.tasks_of(p):
                return p
            if (best is None or self.more_available(p, best)) and (
                    not check_pairs or self.has_new_pair(t, self.tasks_of(p))):
                best = p
        return best

    def least_loaded(self, t: TaskId, ids: list[ProcessId]) -> ProcessId | None:
        found = self.find_least_loaded(t, ids, True)
        return found if found is not None else self.find_least_loaded(t, ids, False)

    def least_loaded_prev_standby(self, t: TaskId, within: list[ProcessId]) -> ProcessId | None:
        ids = self.prev_standby.get(t)
        if ids is None:
            return None
        copy: JavaHashMap[ProcessId] = JavaHashMap(hashset_copy_capacity(len(ids)))
        copy.put_all(ids.keys())
        return self.least_loaded(t, [p for p in copy if p in within])

    def find_client(self, t: TaskId, within: list[ProcessId]) -> ProcessId:
        if len(within) == 1:
            return within[0]
        prev = self.prev_active.get(t)
        previous = prev if prev is not None and prev in within else self.least_loaded_prev_standby(t, within)
        if previous is None:
            found = self.least_loaded(t, within)
        elif self.should_balance(previous):
            standby = self.least_loaded_prev_standby(t, within)
            found = self.least_loaded(t, within) if standby is None or self.should_balance(standby) else standby
        else:
            found = previous
        assert found is not None
        return found

    def run(self) -> tuple[dict[ProcessId, set[TaskId]], dict[ProcessId, set[TaskId]]]:
        state = self.state
        all_tasks = hash_iteration_order(state.task_ids)
        total = sum(self.cap.values())
        per_thread = len(all_tasks) // total
        if not self.legacy and kafka_line_at_least(state.configs.kafka_version, "4.4"):
            # KAFKA-20198 (4.4): StickyTaskAssignor.AssignmentState.hasRoomForActiveTask's instance limit
            limit = {p: (len(all_tasks) * c + total - 1) // total for p, c in self.cap.items()}
        else:
            limit = {p: c * per_thread for p, c in self.cap.items()}
        assigned: set[TaskId] = set()
        for t in self.prev_active_map:
            p = self.prev_active[t]
            if t in state.tasks and (self.must_preserve or len(self.active[p]) < limit[p]):
                self.finalize(t, p, True)
                assigned.add(t)
        unassigned: JavaHashMap[TaskId] = JavaHashMap(hashset_copy_capacity(len(all_tasks)))
        unassigned.put_all(all_tasks)
        for t in unassigned:
            if t in assigned:
                continue
            for p in (self.prev_standby[t].keys() if t in self.prev_standby else []):
                if len(self.active[p]) < limit[p]:
                    self.finalize(t, p, True)
                    assigned.add(t)
                    break
        everyone: JavaHashMap[ProcessId] = JavaHashMap()
        everyone.put_all(self.clients)
        for t in sorted(set(state.task_ids) - assigned):
            self.finalize(t, self.find_client(t, everyone.keys()), True)
        if self.legacy:
            standby_order = hashset_copy_order(hash_iteration_order(state.stateful_task_ids))
        else:
            standby_order = [t for t, info in state.tasks.items() if info.has_changelog]
        for t in standby_order:
            for _ in range(state.configs.num_standby_replicas):
                within: JavaHashMap[ProcessId] = JavaHashMap()
                within.put_all(p for p in self.clients if t not in self.tasks_of(p))
                if not len(within):
                    break
                self.finalize(t, self.find_client(t, within.keys()), False)
        return self.active, self.standby
