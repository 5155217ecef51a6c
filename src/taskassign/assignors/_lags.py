"""Who is caught up on each stateful task, and who is most caught up (assignor spec 4.2).

Kafka builds ``caughtUp[t]`` (a sorted set of clients) and ``byLag[t]`` (all clients by lag, then
ProcessId) for every stateful task: T x C entries. Most clients never reported a task, and such a
client's lag is simply the task's end offset sum (host-and-wire spec 2.3: a missing offset counts as 0).
So only the reporters are stored and sorted; every other client sits, in ProcessId order, in one
block at lag = end. Answers are identical to Kafka's full tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.ids import TaskId
from taskassign.model import LATEST_OFFSET, ApplicationState, compute_lag

__all__ = ("TaskLags", "task_lags")


def is_caught_up(lag: int, acceptable_recovery_lag: int) -> bool:
    """Running the task as active (-2), an unbounded acceptable lag, or 0 <= lag <= acceptable."""
    return (lag == LATEST_OFFSET or acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG
            or 0 <= lag <= acceptable_recovery_lag)


class TaskLags:
    """The lags of every client on one stateful task (clients are indices in ProcessId order)."""

    __slots__ = ("_by_lag", "_exceptions", "caught_up_by_default", "end", "num_clients", "reported")

    def __init__(self, end: int, num_clients: int, acceptable_recovery_lag: int) -> None:
        self.end = end
        self.num_clients = num_clients
        #: Client index -> lag, for the clients that reported an offset sum for the task.
        self.reported: dict[int, int] = {}
        #: Whether a client that did not report the task (lag = end) is caught up on it.
        self.caught_up_by_default = is_caught_up(end, acceptable_recovery_lag)
        self._exceptions: set[int] = set()
        self._by_lag: list[tuple[int, int]] | None = None

    def finish(self, acceptable_recovery_lag: int) -> None:
        """Record which reporters differ from the default caught-up status (call once, after reporting)."""
        default = self.caught_up_by_default
        self._exceptions = {c for c, lag in self.reported.items()
                            if is_caught_up(lag, acceptable_recovery_lag) != default}

    def lag(self, client: int) -> int:
        return self.reported.get(client, self.end)

    def is_caught_up(self, client: int) -> bool:
        return (client in self._exceptions) != self.caught_up_by_default

    def caught_up_clients(self) -> set[int] | None:
        """The caught-up clients when they are only some reporters; None when (nearly) everyone is."""
        return None if self.caught_up_by_default else self._exceptions

    def num_caught_up(self) -> int:
        if self.caught_up_by_default:
            return self.num_clients - len(self._exceptions)
        return len(self._exceptions)

    def _reporters_by_lag(self) -> list[tuple[int, int]]:
        if self._by_lag is None:
            self._by_lag = sorted((lag, c) for c, lag in self.reported.items())
        return self._by_lag

    def most_caught_up(self) -> int:
        """The first client of ``byLag``: lowest lag, then lowest ProcessId (-3 sorts first, a Kafka quirk)."""
        reporters = self._reporters_by_lag()
        first_silent = next((c for c in range(self.num_clients) if c not in self.reported), None)
        if first_silent is None:
            return reporters[0][1]
        if reporters and reporters[0] < (self.end, first_silent):
            return reporters[0][1]
        return first_silent

    def by_lag(self) -> Iterator[int]:
        """Every client in ``byLag`` order: reporters merged with the silent clients at lag = end."""
        end, reported = self.end, self.reported
        reporters = self._reporters_by_lag()
        i, n = 0, len(reporters)
        while i < n and reporters[i][0] < end:
            yield reporters[i][1]
            i += 1
        for client in range(self.num_clients):  # the block at lag == end, in ProcessId order
            lag = reported.get(client, end)
            if lag == end:
                yield client
        while i < n and reporters[i][0] <= end:
            i += 1
        while i < n:
            yield reporters[i][1]
            i += 1


def task_lags(application_state: ApplicationState, tasks: Sequence[TaskId]) -> dict[TaskId, TaskLags]:
    """TaskLags of every task in ``tasks`` (tasks with a changelog), from the clients' offset sums."""
    acceptable = application_state.configs.acceptable_recovery_lag
    ends = application_state.changelog_end_offset_sums
    num_clients = len(application_state.process_ids)
    lags = {t: TaskLags(ends[t], num_clients, acceptable) for t in tasks}
    for index, state in enumerate(application_state.kafka_streams_states(True).values()):
        for task, offset_sum in state.task_offset_sums.items():
            entry = lags.get(task)
            if entry is not None:
                entry.reported[index] = compute_lag(entry.end, offset_sum)
    for entry in lags.values():
        entry.finish(acceptable)
    return lags
