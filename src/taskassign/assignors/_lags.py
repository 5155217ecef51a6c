"""Who is caught up on each stateful task, and who is most caught up (assignor spec 4.2).

Kafka builds ``caughtUp[t]`` (a sorted set of clients) and ``byLag[t]`` (all clients by lag, then
ProcessId) for every stateful task: T x C entries. Most clients never reported a task, and such a
client's lag is simply the task's end offset sum (host-and-wire spec 2.3: a missing offset counts as 0).
So only the reported lags are stored, per client and per task; every other client sits, in ProcessId
order, in one block at lag = end. Answers are identical to Kafka's full tables.

Clients are indices in ProcessId order, tasks are numbers in TaskId order (see ``_client_state``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.ids import TaskId
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, ApplicationState

__all__ = ("LagTable", "TaskLags", "is_caught_up")


def is_caught_up(lag: int, acceptable_recovery_lag: int) -> bool:
    """Running the task as active (-2), an unbounded acceptable lag, or 0 <= lag <= acceptable."""
    return (lag == LATEST_OFFSET or acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG
            or 0 <= lag <= acceptable_recovery_lag)


def _lowest_lag(end: int, num_clients: int, reported: Mapping[int, int]) -> int:
    """The lowest lag among the reporters and, if some client did not report, the end offset sum."""
    if not reported:
        return end
    lowest = min(reported.values())
    return lowest if len(reported) == num_clients or lowest < end else end


class TaskLags:
    """The lags of every client on one stateful task, for the tasks a movement looks at."""

    __slots__ = ("_ahead_behind", "_by_lag", "_exceptions", "caught_up_by_default", "caught_up_clients", "end",
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
        #: The lag of the first client of ``byLag``.
        self.most_caught_up_lag = _lowest_lag(end, num_clients, reported)
        self._by_lag: list[tuple[int, int]] | None = None
        self._ahead_behind: tuple[list[int], list[int]] | None = None

    def lag(self, client: int) -> int:
        return self.reported.get(client, self.end)

    def is_caught_up(self, client: int) -> bool:
        return (client in self._exceptions) != self.caught_up_by_default

    def by_lag_reporters(self) -> list[tuple[int, int]]:
        """(lag, client) of the reporters, ascending."""
        if self._by_lag is None:
            self._by_lag = sorted((lag, c) for c, lag in self.reported.items())
        return self._by_lag

    def reporters_around_block(self) -> tuple[list[int], list[int]]:
        """The reporters before the block of clients at lag = end, and after it (lag order)."""
        if self._ahead_behind is None:
            end = self.end
            reporters = self.by_lag_reporters()
            self._ahead_behind = ([c for lag, c in reporters if lag < end], [c for lag, c in reporters if lag > end])
        return self._ahead_behind

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
    """Every client's lag on every stateful task (by task number), from the clients' reports."""

    __slots__ = ("_by_task", "_most_caught_up_lag", "_num_caught_up", "acceptable_recovery_lag", "ends",
                 "num_clients", "reported_by_client", "reported_by_task")

    def __init__(self, application_state: ApplicationState, numbers: Mapping[TaskId, int]) -> None:
        self.acceptable_recovery_lag = application_state.configs.acceptable_recovery_lag
        #: Task number -> changelog end offset sum, for the tasks with a changelog.
        self.ends: dict[int, int] = {numbers[t]: end for t, end in application_state.changelog_end_offset_sums.items()}
        ends = self.ends
        #: Per client (ProcessId order): task number -> lag, for the tasks it reported.
        self.reported_by_client: list[dict[int, int]] = []
        #: Per task number: client -> lag, for the clients that reported it.
        self.reported_by_task: dict[int, dict[int, int]] = {}
        by_task = self.reported_by_task
        for client, state in enumerate(application_state.kafka_streams_states(True).values()):
            own: dict[int, int] = {}
            for task_id, offset in state.task_offset_sums.items():
                number = numbers.get(task_id)
                if number is None or number not in ends:
                    continue  # a stateless or unknown task: Kafka keeps no lag for it
                end = ends[number]
                # -2 / -3 stay; a client ahead of the changelog restores from scratch (lag = end)
                lag = offset if offset in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM) else end if end < offset else end - offset
                own[number] = lag
                by_task.setdefault(number, {})[client] = lag
            self.reported_by_client.append(own)
        self.num_clients = len(self.reported_by_client)
        self._by_task: dict[int, TaskLags] = {}
        self._most_caught_up_lag: dict[int, int] = {}
        self._num_caught_up: dict[int, int] = {}

    def lag(self, client: int, task: int) -> int:
        lag = self.reported_by_client[client].get(task)
        return self.ends[task] if lag is None else lag

    def is_caught_up(self, client: int, task: int) -> bool:
        return is_caught_up(self.lag(client, task), self.acceptable_recovery_lag)

    def caught_up_clients(self, task: int) -> set[int] | None:
        """``TaskLags.caught_up_clients`` of ``task``."""
        lags = self._by_task.get(task)
        return (lags if lags is not None else self[task]).caught_up_clients

    def most_caught_up_lag(self, task: int) -> int:
        """The lowest lag of any client on ``task`` (``TaskLags.most_caught_up_lag``, without building it)."""
        lag = self._most_caught_up_lag.get(task)
        if lag is None:
            lag = self._most_caught_up_lag[task] = _lowest_lag(
                self.ends[task], self.num_clients, self.reported_by_task.get(task, {}))
        return lag

    def num_caught_up(self, task: int) -> int:
        """``TaskLags.num_caught_up`` of ``task``, without building it."""
        count = self._num_caught_up.get(task)
        if count is None:
            acceptable = self.acceptable_recovery_lag
            default = is_caught_up(self.ends[task], acceptable)
            unbounded = acceptable == UNBOUNDED_RECOVERY_LAG
            differing = sum(1 for lag in self.reported_by_task.get(task, {}).values()
                            if (lag == LATEST_OFFSET or unbounded or 0 <= lag <= acceptable) != default)
            count = self._num_caught_up[task] = self.num_clients - differing if default else differing
        return count

    def __getitem__(self, task: int) -> TaskLags:
        lags = self._by_task.get(task)
        if lags is None:
            lags = self._by_task[task] = TaskLags(
                self.ends[task], self.num_clients, self.reported_by_task.get(task, {}), self.acceptable_recovery_lag)
        return lags
