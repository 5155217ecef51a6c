"""A custom KIP-924 assignor written in Python, pluggable into taskassign.

    taskassign assign examples/scenarios/two-racks-one-standby.scenario.json \
        --assignor examples/custom_assignor.py:StateWeightedStickyAssignor

It keeps each stateful task on its previous owner while that client's state-weighted load per thread
stays under the fair share, places every other task on the client with the least state per thread,
then places ``num.standby.replicas`` standbys per stateful task on the least-loaded other clients.
A toy next to the built-in assignors, but a complete one: valid everywhere, deterministic.
"""

from __future__ import annotations

from taskassign import (
    ApplicationState,
    AssignedTask,
    AssignmentError,
    BaseTaskAssignor,
    KafkaStreamsAssignment,
    ProcessId,
    TaskAssignment,
    TaskId,
)
from taskassign.model import GroupAssignment, GroupSubscription


class StateWeightedStickyAssignor(BaseTaskAssignor):
    """Balance state size per thread (state_bytes, else number of stores; stateless tasks weigh 1)."""

    name = "state-weighted-sticky (example)"

    def __init__(self) -> None:
        self.last_error: AssignmentError | None = None

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        clients = application_state.kafka_streams_states(compute_task_lags=False)
        tasks = application_state.all_tasks()
        weight = {t: max(1, info.state_weight) for t, info in tasks.items()}
        threads = {pid: c.num_processing_threads for pid, c in clients.items()}
        fair_share = sum(weight.values()) / max(1, sum(threads.values()))
        load = {pid: 0.0 for pid in clients}
        placed: dict[ProcessId, dict[TaskId, AssignedTask]] = {pid: {} for pid in clients}

        def per_thread(pid: ProcessId) -> float:
            return load[pid] / threads[pid]

        def place(pid: ProcessId, task: TaskId, kind: AssignedTask.Type) -> None:
            placed[pid][task] = AssignedTask(task, kind)
            load[pid] += weight[task]

        previous_owner = {t: pid for pid, c in clients.items() for t in c.previous_active_tasks}
        # Heaviest tasks first, so that big state is placed while there is still room for it.
        for task in sorted(tasks, key=lambda t: (-weight[t], t)):
            owner = previous_owner.get(task)
            if owner is not None and (load[owner] + weight[task]) / threads[owner] <= fair_share * 1.1:
                place(owner, task, AssignedTask.Type.ACTIVE)
            else:
                place(min(clients, key=lambda pid: (per_thread(pid), pid)), task, AssignedTask.Type.ACTIVE)

        replicas = application_state.assignment_configs().num_standby_replicas
        for task in application_state.stateful_task_ids:
            candidates = sorted((pid for pid in clients if task not in placed[pid]),
                                key=lambda pid: (per_thread(pid), pid))
            for pid in candidates[:replicas]:
                place(pid, task, AssignedTask.Type.STANDBY)

        return TaskAssignment(tuple(KafkaStreamsAssignment.of(pid, placed[pid].values()) for pid in clients))

    def on_assignment_computed(
        self, assignment: GroupAssignment, subscription: GroupSubscription, error: AssignmentError
    ) -> None:
        self.last_error = error
