"""Small assignors that exercise the simulator without depending on the built-in ones."""

from __future__ import annotations

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.ids import ProcessId, TaskId
from taskassign.model import LATEST_OFFSET, ApplicationState, AssignedTask, KafkaStreamsAssignment, TaskAssignment


class WarmupAssignor(BaseTaskAssignor):
    """A stand-in for the high-availability assignor's movement rule: the target layout is round-robin
    over clients in ProcessId order; a changelog task whose target is not caught up stays on the first
    caught-up client, the target gets a warm-up standby while ``max.warmup.replicas`` lasts, and a
    probing rebalance is requested."""

    name = "warmup-test"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        state = application_state
        clients = list(state.process_ids)
        states = state.kafka_streams_states(True)
        acceptable = state.configs.acceptable_recovery_lag
        budget = state.configs.max_warmup_replicas
        placed: dict[ProcessId, list[AssignedTask]] = {pid: [] for pid in clients}
        probing = False

        def caught_up(pid: ProcessId, task: TaskId) -> bool:
            lag = states[pid].lag_for(task)
            return lag == LATEST_OFFSET or 0 <= lag <= acceptable

        for k, task in enumerate(state.task_ids):
            target = clients[k % len(clients)]
            if task in state.stateful_task_ids and not caught_up(target, task):
                ready = [pid for pid in clients if caught_up(pid, task)]
                if ready:
                    placed[ready[0]].append(AssignedTask.active(task))
                    probing = True
                    if budget > 0:
                        placed[target].append(AssignedTask.standby(task))
                        budget -= 1
                    continue
            placed[target].append(AssignedTask.active(task))
        return TaskAssignment(tuple(KafkaStreamsAssignment.of(pid, placed[pid]) for pid in clients), probing)


class FollowUpInFiveSeconds(BaseTaskAssignor):
    """Everything on the first client, and always a follow-up rebalance 5 s later (never settles)."""

    name = "followup-test"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        pids = application_state.process_ids
        first = KafkaStreamsAssignment.of_tasks(pids[0], application_state.task_ids)
        first = first.with_followup_rebalance(application_state.now_ms + 5_000)
        return TaskAssignment((first, *(KafkaStreamsAssignment(pid) for pid in pids[1:])))


class DoubleActive(BaseTaskAssignor):
    """Invalid: every task active on every client."""

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return TaskAssignment(tuple(KafkaStreamsAssignment.of_tasks(pid, application_state.task_ids)
                                    for pid in application_state.process_ids))


WARMUP = f"{__name__}:WarmupAssignor"
FOLLOWUP = f"{__name__}:FollowUpInFiveSeconds"
DOUBLE_ACTIVE = f"{__name__}:DoubleActive"
