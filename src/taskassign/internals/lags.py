"""Who is caught up on each stateful task, and who is most caught up (Kafka's ``HighAvailabilityTaskAssignor``,
KIP-441).

Kafka builds ``caughtUp[t]`` (a sorted set of clients) and ``byLag[t]`` (all clients by lag, then
ProcessId) for every stateful task: T x C entries. Most clients never reported a task, and such a
client's lag is simply the task's end offset sum (``ClientState#computeTaskLags``: a missing offset counts as 0).
So only the reported lags are stored, per client and per task; every other client sits, in ProcessId
order, in one block at lag = end. Answers are identical to Kafka's full tables.

Clients are indices in ProcessId order, tasks are numbers in TaskId order (see ``_client_state``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import chain, repeat
from typing import Any

import numpy as np

from taskassign.configs import UNBOUNDED_RECOVERY_LAG
from taskassign.ids import TaskId
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, ApplicationState, compute_lag

__all__ = ("LagTable", "TaskLags", "compute_lags", "is_caught_up")


def is_caught_up(lag: int, acceptable_recovery_lag: int) -> bool:
    """Running the task as active (-2), an unbounded acceptable lag, or 0 <= lag <= acceptable."""
    return (lag == LATEST_OFFSET or acceptable_recovery_lag == UNBOUNDED_RECOVERY_LAG
            or 0 <= lag <= acceptable_recovery_lag)


def compute_lags(ends: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``model.compute_lag`` of every (end offset sum, offset sum) pair at once: -2 and -3 stay, a client ahead
    of the changelog lags by the whole end offset sum, else end minus offset. int64 or object (Python ints)
    arrays alike."""
    kept = (offsets == LATEST_OFFSET) | (offsets == UNKNOWN_OFFSET_SUM)
    return np.where(kept, offsets, np.where(ends < offsets, ends, ends - offsets))


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


Reports = Sequence[Mapping[TaskId, int]]
ReportedLags = tuple[list[dict[int, int]], dict[int, dict[int, int]]]
#: (task numbers, client indices) of movements, as two arrays.
Movements = tuple[np.ndarray, np.ndarray]
#: Shared, never mutated: a task nobody reported outside the block, or that no reporter is caught up on.
_NO_REPORTERS_OUTSIDE_THE_BLOCK: tuple[list[int], list[int], set[int]] = ([], [], set())
_NOBODY: set[int] = set()


def reported_lags(reports: Reports, numbers: Mapping[TaskId, int], ends: Mapping[int, int]) -> ReportedLags:
    """Every client's lag on each task it reported an offset sum for, the plain way: per client (task
    number -> lag) and per task (client -> lag). Reports of stateless or unknown tasks are left out, as
    Kafka keeps no lag for them. (The reference ``LagTable`` is tested against.)"""
    by_client: list[dict[int, int]] = []
    by_task: dict[int, dict[int, int]] = {}
    for client, offsets in enumerate(reports):
        own: dict[int, int] = {}
        for task_id, offset in offsets.items():
            number = numbers.get(task_id)
            if number is None or number not in ends:
                continue
            own[number] = lag = compute_lag(ends[number], offset)
            by_task.setdefault(number, {})[client] = lag
        by_client.append(own)
    return by_client, dict(sorted(by_task.items()))


class LagTable:
    """Every client's lag on every stateful task (by task number), from the clients' reports.

    The reports are held as flat numpy arrays (one row per reported offset sum, clients in ProcessId
    order, tasks in TaskId order within a client), so that per-task figures (lowest lag, number of
    caught-up clients) and the scan for tasks placed on clients that are not caught up are array
    operations; per-client and per-task dicts are built only when asked for.
    """

    __slots__ = ("_by_client", "_by_task", "_caught", "_caught_up_sets", "_client_rows", "_end_of", "_has_end",
                 "_key", "_lag", "_lag_order", "_most_caught_up", "_most_caught_up_lag", "_most_caught_up_lag_array",
                 "_num_caught_up",
                 "_num_caught_up_array", "_silent_caught_up",
                 "_task_lags", "_task_row_lists", "_task_rows", "_unbounded", "acceptable_recovery_lag", "ends",
                 "num_clients", "num_tasks")

    def __init__(self, application_state: ApplicationState, numbers: Mapping[TaskId, int]) -> None:
        acceptable = self.acceptable_recovery_lag = application_state.configs.acceptable_recovery_lag
        self._unbounded = acceptable == UNBOUNDED_RECOVERY_LAG
        #: Task number -> changelog end offset sum, for the tasks with a changelog.
        sums = application_state.changelog_end_offset_sums
        # every task has a changelog (the usual case): its number is its position, no TaskId lookups
        every_task = len(sums) == len(numbers)
        self.ends: dict[int, int] = (dict(enumerate(sums.values())) if every_task
                                     else dict(zip(map(numbers.__getitem__, sums), sums.values(), strict=True)))
        reports = [state.task_offset_sums for state in application_state.kafka_streams_states(True).values()]
        self.num_clients = num_clients = len(reports)
        self.num_tasks = num_tasks = len(numbers)
        if every_task:  # (one conversion of the sums, no index list: numpy reads Python ints one by one)
            self._has_end = np.ones(num_tasks, dtype=bool)
        else:
            self._has_end = np.zeros(num_tasks, dtype=bool)
            self._has_end[list(self.ends)] = True
        try:
            if every_task:
                self._end_of = np.array(list(sums.values()), dtype=np.int64)  # (fromiter over a mapping is slower)
            else:
                self._end_of = np.zeros(num_tasks, dtype=np.int64)
                self._end_of[list(self.ends)] = list(self.ends.values())
            task, client, offset = _report_rows(reports, numbers, self._has_end, np.int64)
        except OverflowError:  # an offset beyond a Java long: the same arithmetic on Python ints
            self._end_of = np.zeros(num_tasks, dtype=object)
            self._end_of[list(self.ends)] = list(self.ends.values())
            task, client, offset = _report_rows(reports, numbers, self._has_end, object)
        end = self._end_of[task]
        lag = compute_lags(end, offset)
        #: Rows sorted by client, then task: ``client * num_tasks + task`` per row (for lookups).
        self._key = client * num_tasks + task
        self._lag = lag
        self._caught = self._caught_up_mask(lag)
        self._client_rows = (client, task, lag)
        order = np.argsort(task, kind="stable")  # by task, then client
        self._task_rows = (task[order], client[order], lag[order], self._caught[order])

        # per task: reporters, lowest reported lag, reporters whose caught-up status differs from a silent client's
        counts = np.bincount(task, minlength=num_tasks)
        default = self._caught_up_mask(self._end_of)
        differing = np.bincount(task, weights=self._caught != default[task], minlength=num_tasks).astype(np.int64)
        self._num_caught_up_array = np.where(default, num_clients - differing, differing)
        self._num_caught_up: list[int] = self._num_caught_up_array.tolist()
        lowest = self._end_of.copy()
        if task.size:
            reported_tasks = np.flatnonzero(counts)
            starts = np.searchsorted(self._task_rows[0], reported_tasks)
            minima = np.minimum.reduceat(self._task_rows[2], starts)
            ends_there = self._end_of[reported_tasks]
            everyone = counts[reported_tasks] == num_clients
            lowest[reported_tasks] = np.where(everyone | (minima < ends_there), minima, ends_there)
        #: The lag of the first client of ``byLag`` (the lowest lag of any client) per task (and as the array).
        self._most_caught_up_lag: list[int] = lowest.tolist()
        self._most_caught_up_lag_array = lowest
        self._by_client: list[dict[int, int]] | None = None
        self._by_task: _ReportsByTask | None = None
        self._task_lags: dict[int, TaskLags] = {}
        self._caught_up_sets: dict[int, set[int]] | None = None
        #: Per task number: a client that did not report the task is caught up on it.
        self._silent_caught_up: list[bool] = []
        self._lag_order: dict[int, tuple[list[int], list[int], set[int]]] | None = None
        self._most_caught_up: list[int] | None = None
        self._task_row_lists: tuple[list[int], list[int], list[int]] | None = None

    def _caught_up_mask(self, lags: np.ndarray) -> np.ndarray:
        if self._unbounded:
            return np.ones(lags.shape, dtype=bool)
        caught: np.ndarray = (lags == LATEST_OFFSET) | ((lags >= 0) & (lags <= self.acceptable_recovery_lag))
        return caught

    @property
    def reported_by_client(self) -> list[dict[int, int]]:
        """Per client (ProcessId order): task number -> lag, for the tasks it reported."""
        if self._by_client is None:
            task, lag = self._client_rows[1].tolist(), self._client_rows[2].tolist()
            sizes = np.bincount(self._client_rows[0], minlength=self.num_clients).tolist()
            self._by_client = []
            start = 0
            for size in sizes:
                self._by_client.append(dict(zip(task[start:start + size], lag[start:start + size], strict=True)))
                start += size
        return self._by_client

    @property
    def reported_by_task(self) -> Mapping[int, dict[int, int]]:
        """Per task number: client -> lag, for the clients that reported it (ProcessId order)."""
        if self._by_task is None:
            task, client, lag, _ = self._task_rows
            self._by_task = _ReportsByTask(task, client, lag)
        return self._by_task

    def lag_order_parts(self, task: int) -> tuple[list[int], list[int], set[int]]:
        """What a walk along ``byLag[task]`` needs besides the block of clients at lag = end (ProcessId
        order): the reporters before the block and after it, in lag order, and the set of both. Worked out
        per task when first asked (a rebalance walks a small share of its tasks)."""
        if self._lag_order is None:
            self._lag_order = {}
        parts = self._lag_order.get(task)
        if parts is None:
            parts = self._lag_order[task] = self._lag_order_of(task)
        return parts

    def _lag_order_of(self, task: int) -> tuple[list[int], list[int], set[int]]:
        if self._task_row_lists is None:  # the rows by task as lists, and where each task's rows start
            rows = self._task_rows
            bounds = np.zeros(self.num_tasks + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows[0], minlength=self.num_tasks), out=bounds[1:])
            self._task_row_lists = (bounds.tolist(), rows[1].tolist(), rows[2].tolist())
        starts, clients, lags = self._task_row_lists
        low, high = starts[task], starts[task + 1]
        end = self.ends.get(task, 0)  # (a task without a changelog: 0, as in _end_of)
        if high - low == 1:  # one reporter (most tasks: the previous owner)
            lag, client = lags[low], clients[low]
            if lag == end:
                return _NO_REPORTERS_OUTSIDE_THE_BLOCK
            return ([client], [], {client}) if lag < end else ([], [client], {client})
        outside = sorted((lag, client) for client, lag in zip(clients[low:high], lags[low:high], strict=True)
                         if lag != end)
        if not outside:
            return _NO_REPORTERS_OUTSIDE_THE_BLOCK
        return ([c for lag, c in outside if lag < end], [c for lag, c in outside if lag > end],
                {c for _, c in outside})

    def placed_behind(self, assigned: Sequence[Collection[int]], skip: Mapping[int, Collection[int]] | None = None,
                      ) -> Movements:
        """Kafka's enqueue condition of ``TaskMovement``: every (task, client) with the task in
        ``assigned[client]`` where the client is not caught up and some client has a strictly lower lag
        (-3 counts as lowest); as two arrays (tasks, clients) in client order, then TaskId order.
        ``skip[client]`` lists tasks left out."""
        sizes = [len(tasks) for tasks in assigned]
        total = sum(sizes)
        if not total:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        # each client's tasks as its set iterates; the few rows kept are sorted at the end (no sort per client)
        task = np.fromiter(chain.from_iterable(assigned), dtype=np.int64, count=total)
        client = np.repeat(np.arange(len(assigned), dtype=np.int64), sizes)
        key = client * self.num_tasks + task
        lag = self._end_of[task]
        if self._key.size:
            row = np.minimum(np.searchsorted(self._key, key), self._key.size - 1)
            found = self._key[row] == key
            lag = np.where(found, self._lag[row], lag)
        behind = self._has_end[task] & ~self._caught_up_mask(lag)
        rows = np.flatnonzero(behind)
        lowest = self._most_caught_up_lag_array[task[rows]]
        rows = rows[lowest < lag[rows]]
        rows = rows[np.argsort(key[rows])]  # client order, then TaskId order (each key once)
        task, client = task[rows], client[rows]
        if skip:
            keep = np.ones(task.size, dtype=bool)
            for c, tasks in skip.items():
                for t in tasks:
                    keep &= (task != t) | (client != c)
            task, client = task[keep], client[keep]
        return task, client

    def num_caught_up_of(self, tasks: np.ndarray) -> np.ndarray:
        """``num_caught_up`` of each task of an array of task numbers."""
        counts: np.ndarray = self._num_caught_up_array[tasks]
        return counts

    def lag(self, client: int, task: int) -> int:
        lag = self.reported_by_client[client].get(task)
        return self.ends[task] if lag is None else lag

    def is_caught_up(self, client: int, task: int) -> bool:
        return is_caught_up(self.lag(client, task), self.acceptable_recovery_lag)

    def caught_up_clients(self, task: int) -> set[int] | None:
        """``TaskLags.caught_up_clients`` of ``task``."""
        if self._caught_up_sets is None:
            self._caught_up_sets = self._caught_up_reporters()
        if self._silent_caught_up[task]:
            return None
        return self._caught_up_sets.get(task, _NOBODY)

    def _caught_up_reporters(self) -> dict[int, set[int]]:
        """Per task whose silent clients are not caught up: its caught-up reporters (one pass over the rows)."""
        silent = self._caught_up_mask(self._end_of)
        self._silent_caught_up = silent.tolist()
        task, client, _, caught = self._task_rows
        keep = caught & ~silent[task]
        sets: dict[int, set[int]] = {}
        for t, c in zip(task[keep].tolist(), client[keep].tolist(), strict=True):
            found = sets.get(t)
            if found is None:
                sets[t] = {c}
            else:
                found.add(c)
        return sets

    def most_caught_up_lag(self, task: int) -> int:
        """The lowest lag of any client on ``task`` (``TaskLags.most_caught_up_lag``, without building it)."""
        return self._most_caught_up_lag[task]

    def most_caught_up(self, task: int) -> int:
        """``TaskLags.most_caught_up`` of ``task`` (the first client of ``byLag``), without building it: worked
        out for every task at once on first use (a movement to the most caught-up client is the common case
        when nobody is caught up, e.g. every task new)."""
        if self._most_caught_up is None:
            if self._lag.dtype == object:  # offsets beyond a Java long: per task, as TaskLags does
                return self[task].most_caught_up
            self._most_caught_up = self._most_caught_up_of_all()
        return self._most_caught_up[task]

    def _most_caught_up_of_all(self) -> list[int]:
        """Per task: the reporter with the least (lag, client), unless the first client that did not report
        (lag = end) sorts before it (as in ``TaskLags.most_caught_up``)."""
        task, client, lag, _ = self._task_rows  # by task, then client
        counts = np.bincount(task, minlength=self.num_tasks)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        # the first silent client: the first position at which a task's reporters (ascending) skip an index
        position = np.arange(task.size, dtype=np.int64) - starts[task]
        first_silent = counts.astype(np.int64)
        skipped = np.flatnonzero(client != position)
        if skipped.size:
            first = skipped[np.concatenate(([True], task[skipped][1:] != task[skipped][:-1]))]
            first_silent[task[first]] = position[first]
        result = first_silent
        reported = np.flatnonzero(counts)
        if reported.size:
            best = np.lexsort((client, lag, task))[starts[reported]]  # rows by task, lag, client: each task's first
            best_lag, best_client = lag[best], client[best]
            silent = first_silent[reported]
            end = self._end_of[reported]
            reporter_first = ((silent >= self.num_clients) | (best_lag < end)
                              | ((best_lag == end) & (best_client < silent)))
            result = first_silent.copy()
            result[reported] = np.where(reporter_first, best_client, silent)
        most: list[int] = result.tolist()
        return most

    def num_caught_up(self, task: int) -> int:
        """``TaskLags.num_caught_up`` of ``task``, without building it."""
        return self._num_caught_up[task]

    def __getitem__(self, task: int) -> TaskLags:
        lags = self._task_lags.get(task)
        if lags is None:
            lags = self._task_lags[task] = TaskLags(
                self.ends[task], self.num_clients, self.reported_by_task.get(task, {}), self.acceptable_recovery_lag)
        return lags


def _report_rows(reports: Reports, numbers: Mapping[TaskId, int], has_end: np.ndarray, dtype: type
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(task, client, offset) per reported offset sum of a task with a changelog (``has_end`` by task number),
    client-major."""
    sizes = [len(offsets) for offsets in reports]
    total = sum(sizes)
    task = np.array(list(chain.from_iterable(map(numbers.get, offsets, repeat(-1)) for offsets in reports)),
                    dtype=np.int64)
    known = task >= 0  # reports of unknown tasks (-1) and of tasks without a changelog are left out
    known[known] = has_end[task[known]]
    offsets_flat = chain.from_iterable(offsets.values() for offsets in reports)
    offset = (np.fromiter(offsets_flat, dtype=np.int64, count=total) if dtype is np.int64
              else np.array(list(offsets_flat), dtype=object))
    client = np.repeat(np.arange(len(reports), dtype=np.int64), sizes)
    if not known.all():
        task, client, offset = task[known], client[known], offset[known]
    return task, client, offset


class _ReportsByTask(Mapping[int, dict[int, int]]):
    """Per task number, client -> lag of its reporters; each task's dict is built on first access."""

    __slots__ = ("_bounds", "_built", "_client", "_lag")

    def __init__(self, task: np.ndarray, client: np.ndarray, lag: np.ndarray) -> None:
        tasks = np.unique(task)
        starts = np.searchsorted(task, tasks, side="left").tolist()
        stops = np.searchsorted(task, tasks, side="right").tolist()
        self._bounds = dict(zip(tasks.tolist(), zip(starts, stops, strict=True), strict=True))
        self._client: list[int] = client.tolist()
        self._lag: list[int] = lag.tolist()
        self._built: dict[int, dict[int, int]] = {}

    def __getitem__(self, task: int) -> dict[int, int]:
        built = self._built.get(task)
        if built is None:
            lo, hi = self._bounds[task]
            built = self._built[task] = dict(zip(self._client[lo:hi], self._lag[lo:hi], strict=True))
        return built

    def get(self, task: int, default: Any = None) -> Any:
        return self[task] if task in self._bounds else default

    def __contains__(self, task: object) -> bool:
        return task in self._bounds

    def __iter__(self) -> Iterator[int]:
        return iter(self._bounds)

    def __len__(self) -> int:
        return len(self._bounds)
