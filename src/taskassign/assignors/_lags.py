"""Who is caught up on each stateful task, and who is most caught up (assignor spec 4.2).

Kafka builds ``caughtUp[t]`` (a sorted set of clients) and ``byLag[t]`` (all clients by lag, then
ProcessId) for every stateful task: T x C entries. Most clients never reported a task, and such a
client's lag is simply the task's end offset sum (host-and-wire spec 2.3: a missing offset counts as 0).
So lags are computed from the clients' own reports on demand, and per task only the reporters are
indexed and sorted; every other client sits, in ProcessId order, in one block at lag = end. Answers
are identical to Kafka's full tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.ids import TaskId
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, ApplicationState, compute_lag

__all__ = ("LagTable", "TaskLags", "is_caught_up")


def is_caught_up(lag: int, acceptable_recovery_lag: int) -> bool:
    """Running the task as active (-2), an unbounded acceptable lag, or 0 <= lag <= acceptable."""
    return (lag == LATEST_OFFSET or acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG
            or 0 <= lag <= acceptable_recovery_lag)


class TaskLags:
    """The lags of every client on one stateful task (clients are indices in ProcessId order)."""

    __slots__ = ("_by_lag", "_exceptions", "caught_up_by_default", "caught_up_clients", "end",
                 "most_caught_up_lag", "num_caught_up", "num_clients", "reported")

    def __init__(self, end: int, num_clients: int, reported: dict[int, int], acceptable_recovery_lag: int) -> None:
        self.end = end
        self.num_clients = num_clients
        #: Client index -> lag, for the clients that reported an offset sum for the task.
        self.reported = reported
        unbounded = acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG
        #: Whether a client that did not report the task (lag = end) is caught up on it.
        self.caught_up_by_default = default = is_caught_up(end, acceptable_recovery_lag)
        #: The reporters whose caught-up status differs from a silent client's.
        self._exceptions = exceptions = {
            c for c, lag in reported.items()
            if (lag == LATEST_OFFSET or unbounded or 0 <= lag <= acceptable_recovery_lag) != default
        }
        #: Exactly the caught-up clients when they are only some reporters; None when the silent clients
        #: are caught up too (then nearly everyone is).
        self.caught_up_clients: set[int] | None = None if default else exceptions
        self.num_caught_up = num_clients - len(exceptions) if default else len(exceptions)
        lowest = min(reported.values()) if reported else end
        #: The lag of the first client of ``byLag``.
        self.most_caught_up_lag = lowest if len(reported) == num_clients or lowest < end else end
        self._by_lag: list[tuple[int, int]] | None = None

    def lag(self, client: int) -> int:
        return self.reported.get(client, self.end)

    def is_caught_up(self, client: int) -> bool:
        return (client in self._exceptions) != self.caught_up_by_default

    def by_lag_reporters(self) -> list[tuple[int, int]]:
        """(lag, client) of the reporters, ascending."""
        if self._by_lag is None:
            self._by_lag = sorted((lag, c) for c, lag in self.reported.items())
        return self._by_lag

    @property
    def most_caught_up(self) -> int:
        """The first client of ``byLag``: lowest lag, then lowest ProcessId (-3 sorts first, a Kafka quirk)."""
        reporters = self.by_lag_reporters()
        first_silent = 0
        while first_silent in self.reported:
            first_silent += 1
        if first_silent >= self.num_clients or (reporters and reporters[0] < (self.end, first_silent)):
            return reporters[0][1]
        return first_silent

    def by_lag(self) -> Iterator[int]:
        """Every client in ``byLag`` order: lowest lag first (-3 and -2 before any real lag), then ProcessId."""
        end, reported = self.end, self.reported
        reporters = self.by_lag_reporters()
        i, n = 0, len(reporters)
        while i < n and reporters[i][0] < end:
            yield reporters[i][1]
            i += 1
        for client in range(self.num_clients):  # the block at lag == end, in ProcessId order
            if reported.get(client, end) == end:
                yield client
        while i < n and reporters[i][0] <= end:
            i += 1
        while i < n:
            yield reporters[i][1]
            i += 1


class LagTable:
    """Lags of every client on every stateful task, computed from the reports as they are asked for."""

    __slots__ = ("_by_task", "_reporters", "acceptable_recovery_lag", "ends", "num_clients", "offsets")

    def __init__(self, application_state: ApplicationState) -> None:
        self.acceptable_recovery_lag = application_state.configs.acceptable_recovery_lag
        self.ends: Mapping[TaskId, int] = application_state.changelog_end_offset_sums
        states = application_state.kafka_streams_states(True)
        #: Per client (ProcessId order): its reported offset sums.
        self.offsets: list[Mapping[TaskId, int]] = [s.task_offset_sums for s in states.values()]
        self.num_clients = len(self.offsets)
        self._reporters: dict[TaskId, dict[int, int]] | None = None
        self._by_task: dict[TaskId, TaskLags] = {}

    def lag(self, client: int, task: TaskId) -> int:
        end = self.ends[task]
        offset = self.offsets[client].get(task)
        return end if offset is None else compute_lag(end, offset)

    def is_caught_up(self, client: int, task: TaskId) -> bool:
        return is_caught_up(self.lag(client, task), self.acceptable_recovery_lag)

    def caught_up_clients(self, task: TaskId) -> set[int] | None:
        """``TaskLags.caught_up_clients`` of ``task``."""
        lags = self._by_task.get(task)
        return (lags if lags is not None else self[task]).caught_up_clients

    def __getitem__(self, task: TaskId) -> TaskLags:
        lags = self._by_task.get(task)
        if lags is None:
            if self._reporters is None:
                self._reporters = self._index_reporters()
            lags = TaskLags(self.ends[task], self.num_clients, self._reporters.get(task, {}),
                            self.acceptable_recovery_lag)
            self._by_task[task] = lags
        return lags

    def _index_reporters(self) -> dict[TaskId, dict[int, int]]:
        ends = self.ends
        index: dict[TaskId, dict[int, int]] = {}
        for client, offsets in enumerate(self.offsets):
            for task, offset in offsets.items():
                end = ends.get(task)
                if end is not None:
                    if offset in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
                        lag = offset
                    else:
                        lag = end if end < offset else end - offset
                    index.setdefault(task, {})[client] = lag
        return index
