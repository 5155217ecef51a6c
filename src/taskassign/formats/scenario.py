"""Scenario files (``taskassign/scenario/v1``, see docs/formats.md): read, validate, write.

A scenario is what a Kafka Streams group leader knows at one rebalance. Reading it builds the
KIP-924 ApplicationState, deriving previous tasks and lags exactly as Kafka's leader does; every
malformed value raises ScenarioError naming its JSON path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from taskassign.configs import CONFIG_KEYS, TASK_ASSIGNOR_CLASS, AssignmentConfigs, parse_config_value
from taskassign.errors import ConfigError, ProcessIdFormatError, TaskIdFormatError
from taskassign.formats._scenario_fast import FastReader
from taskassign.formats._scenario_fields import PARTITION_FIELDS, TASK_FIELDS, Field
from taskassign.formats.json_io import JsonObject, check_int, describe, dump_json, fail, load_json_file
from taskassign.ids import ProcessId, TaskId
from taskassign.internals.gc_pause import gc_paused
from taskassign.model import (
    LATEST_OFFSET,
    MAX_MEMBERS,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskInfo,
    TaskTopicPartition,
    new_task_info,
)

__all__ = (
    "SCENARIO_FORMAT",
    "Scenario",
    "parse_configs",
    "parse_scenario",
    "read_scenario",
    "scenario_to_dict",
    "typed_configs",
    "with_config_overrides",
    "write_scenario",
)

SCENARIO_FORMAT = "taskassign/scenario/v1"
INT_MAX = 2**31 - 1
MAX_CLIENT_TAGS = 5
MAX_TAG_KEY_LENGTH = 20
MAX_TAG_VALUE_LENGTH = 30
MAX_THREADS = 100_000
_HOST_PORT = re.compile(r"^(?P<host>.+):(?P<port>[0-9]+)$")


@dataclass(frozen=True, slots=True)
class Scenario:
    """One application at one rebalance, as read from a scenario file."""

    name: str
    state: ApplicationState
    #: The ``configs`` object as written (assignors receive it in ``configure``).
    raw_configs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: An assignment to start from (rack-aware optimisation, standby placement onto given actives).
    current_assignment: Mapping[ProcessId, KafkaStreamsAssignment] | None = None
    #: The group leader's client; Kafka puts the probing deadline on it. Default: first in ProcessId order.
    leader: ProcessId | None = None

    @property
    def leader_process_id(self) -> ProcessId | None:
        if self.leader is not None:
            return self.leader
        return self.state.process_ids[0] if self.state.process_ids else None


def read_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; the default name is the file name without ``.scenario.json``."""
    p = Path(path)
    with gc_paused():  # millions of objects, none of them garbage (internals.gc_pause)
        doc = load_json_file(p)
        stem = p.name.removesuffix(".json").removesuffix(".scenario")
        return parse_scenario(doc, source=str(p), default_name=stem)


def parse_scenario(doc: Any, *, source: str | None = None, default_name: str = "scenario") -> Scenario:
    """Validate a decoded scenario document and build its ApplicationState."""
    root = JsonObject(doc, "$", source)
    root.expect_format(SCENARIO_FORMAT)
    name = root.string("name", default_name, non_empty=True)
    now_ms = root.integer("now_ms", 0, minimum=0)
    raw_configs = root.obj("configs")
    configs = parse_configs(raw_configs)
    fast = FastReader()
    tasks = _parse_tasks(root.array("tasks"), source, fast)
    if (problem := configs.now_ms_problem(now_ms)) is not None:
        fail("$.now_ms", problem, source)
    clients = _parse_clients(root.array("clients"), tasks, configs, source, fast)
    if tasks and not clients:
        fail("$.clients", "an application with tasks has at least one client (the group leader's own); "
                          "got none", source)
    leader = None
    if root.has("leader"):
        leader = _process_id(root.raw("leader"), "$.leader", source)
        if leader not in {c.process_id for c in clients}:
            fail("$.leader", f"{leader} is not one of the scenario's clients", source)
    current = None
    if root.has("current_assignment") and root.raw("current_assignment") is not None:
        current = parse_client_assignments(
            root.obj("current_assignment"), tasks, {c.process_id for c in clients}
        )
    root.finish()
    state = ApplicationState(
        tasks=tasks, clients={c.process_id: c for c in clients}, configs=configs, now_ms=now_ms
    )
    return Scenario(
        name=name, state=state, raw_configs=MappingProxyType(typed_configs(raw_configs.data)),
        current_assignment=current, leader=leader,
    )


def parse_configs(obj: JsonObject) -> AssignmentConfigs:
    """A ``configs`` object of Kafka config names; errors name the JSON path of the bad key."""
    for key in obj.data:
        obj.raw(key)
    try:
        return AssignmentConfigs.from_properties(obj.data, coerce_strings=True)
    except ConfigError as exc:
        message = str(exc).split(": ", 1)[1]
        if exc.key not in CONFIG_KEYS and exc.key != TASK_ASSIGNOR_CLASS:
            message = f"unknown config key {exc.key!r}; known keys: {', '.join(sorted(CONFIG_KEYS))}"
        obj.fail(exc.key, message)


def typed_configs(props: Mapping[str, Any]) -> dict[str, Any]:
    """Configs as their typed values ("1" -> 1, "a,b" -> ["a", "b"]), for the assignor's ``configure``;
    call after ``parse_configs`` accepted them."""
    return {name: parse_config_value(name, value) for name, value in props.items()}


def _task_id(value: Any, path: str, source: str | None) -> TaskId:
    if not isinstance(value, str):
        fail(path, f"expected a task id string like '0_1', got {describe(value)}", source)
    try:
        return TaskId.parse(value)
    except TaskIdFormatError as exc:
        fail(path, str(exc), source)


def _process_id(value: Any, path: str, source: str | None) -> ProcessId:
    if not isinstance(value, str):
        fail(path, f"expected a UUID string, got {describe(value)}", source)
    try:
        return ProcessId(value)
    except ProcessIdFormatError as exc:
        fail(path, str(exc), source)


def _parse_tasks(items: list[Any], source: str | None, fast: FastReader | None = None) -> dict[TaskId, TaskInfo]:
    if fast is not None and (whole := fast.tasks(items)) is not None:
        return whole
    tasks: dict[TaskId, TaskInfo] = {}
    named: bool | None = None
    # A topic partition belongs to one task (Kafka's partition grouper gives each source and changelog
    # partition to exactly one task); two tasks naming it would make the assignment meaningless.
    owner: dict[tuple[str, int], TaskId] = {}
    for i, item in enumerate(items):
        quick = fast.task(item) if fast is not None else None
        if quick is not None and quick.id not in tasks and named == (quick.id.topology_name is not None) \
                and _own_partitions(quick, owner):
            tasks[quick.id] = quick
            continue
        obj = JsonObject(item, f"$.tasks[{i}]", source)
        values: dict[str, Any] = {}
        for f in TASK_FIELDS:
            values[f.arg] = _read_field(obj, f, source)
            if f.kind == "task_id":
                tid = values[f.arg]
                if tid in tasks:
                    obj.fail("id", f"duplicate task id {str(tid)!r}")
                is_named = tid.topology_name is not None
                if named is None:
                    named = is_named
                elif named != is_named:
                    obj.fail("id", "tasks mix named-topology ids ('name__0_1') with plain ids ('0_1'); "
                                   "Kafka cannot order them")
        obj.finish()
        tid = values["task_id"]
        for j, p in enumerate(values["partitions"]):
            other = owner.setdefault((p.topic, p.partition), tid)
            if other != tid:
                fail(f"{obj.sub('partitions')}[{j}]", f"partition {p.topic}-{p.partition} is also a partition of "
                     f"task {other}: a topic partition belongs to one task", source)
        try:
            info = new_task_info(**values)
        except ValueError:
            obj.fail("changelog_end_offset_sum", "the task has no changelog partition, so it has no "
                                                 "changelog end offset; remove it or add a changelog partition")
        tasks[tid] = info
    return tasks


def _own_partitions(task: TaskInfo, owner: dict[tuple[str, int], TaskId]) -> bool:
    """Claim the task's partitions; False when another task holds one (the general reader names it)."""
    tid = task.id
    return all(owner.setdefault((p.topic, p.partition), tid) == tid for p in task.topic_partitions)


def _parse_partitions(task: JsonObject, source: str | None) -> tuple[TaskTopicPartition, ...]:
    result: list[TaskTopicPartition] = []
    seen: set[tuple[str, int]] = set()
    for j, item in enumerate(task.array("partitions", [])):
        obj = JsonObject(item, f"{task.sub('partitions')}[{j}]", source)
        values = {f.arg: _read_field(obj, f, source) for f in PARTITION_FIELDS}
        obj.finish()
        topic, partition = values["topic"], values["partition"]
        if not values["is_source"] and not values["is_changelog"]:
            obj.fail(None, "a task partition must be a source partition, a changelog partition, or both")
        if (topic, partition) in seen:
            obj.fail(None, f"partition {topic}-{partition} is listed twice for this task")
        seen.add((topic, partition))
        result.append(TaskTopicPartition(**values))
    return tuple(result)


def _read_field(obj: JsonObject, f: Field, source: str | None) -> Any:
    """One field of a task or partition object (``_scenario_fields``), checked; errors name its path."""
    kind = f.kind
    if kind == "task_id":
        return _task_id(obj.raw(f.key), obj.sub(f.key), source)
    if kind == "string":
        return obj.string(f.key, f.default, non_empty=True)
    if kind == "int":
        return obj.integer(f.key, f.default, minimum=f.minimum, maximum=f.maximum, nullable=f.nullable,
                           allowed=f.allowed)
    if kind == "bool":
        return obj.boolean(f.key, f.default)
    if kind == "string_set":
        if f.nullable and obj.raw(f.key, None) is None:
            return None
        return SortedFrozenSet(obj.string_list(f.key, f.default))
    if kind == "partitions":
        return _parse_partitions(obj, source)
    raise AssertionError(f"field {f.key!r}: unknown kind {kind!r}")


def _parse_clients(
    items: list[Any], tasks: Mapping[TaskId, TaskInfo], configs: AssignmentConfigs, source: str | None,
    fast: FastReader | None = None,
) -> list[KafkaStreamsState]:
    clients: list[KafkaStreamsState] = []
    seen_pids: set[ProcessId] = set()
    consumer_owner: dict[str, str] = {}
    if len(items) > MAX_MEMBERS:
        fail("$.clients", f"{len(items)} clients, more than the {MAX_MEMBERS} taskassign takes (each has a thread "
                          "at least: docs/security.md, Work)", source)
    members = 0
    for i, item in enumerate(items):
        obj = JsonObject(item, f"$.clients[{i}]", source)
        pid = _process_id(obj.raw("process_id"), obj.sub("process_id"), source)
        if pid in seen_pids:
            obj.fail("process_id", f"duplicate process id {pid}")
        seen_pids.add(pid)
        consumers = _parse_consumers(obj, pid)
        members += len(consumers)
        if members > MAX_MEMBERS:
            fail(obj.path, f"the clients up to this one have {members} threads (consumers) in all, more than the "
                           f"{MAX_MEMBERS} members taskassign takes per application (docs/security.md, Work)", source)
        for k, consumer in enumerate(consumers):
            if consumer in consumer_owner:
                fail(f"{obj.sub('consumers')}[{k}]",
                     f"consumer {consumer!r} also belongs to client at {consumer_owner[consumer]}", source)
            consumer_owner[consumer] = obj.path
        rack = obj.string("rack", None, nullable=True)
        tags = _parse_tags(obj, configs)
        host = obj.string("host", None, nullable=True)
        if host is not None:
            _check_host(obj, host)
        prev_active = _task_list(obj, "previous_active", tasks, fast)
        prev_standby = _task_list(obj, "previous_standby", tasks, fast)
        both = prev_active & prev_standby
        if both:
            t = min(both)
            obj.fail("previous_standby", f"task {t} is also in previous_active; a client owns a task "
                                         "as active or as standby, not both")
        offsets = _parse_offset_sums(obj, tasks, fast)
        for t, off in offsets.items():
            if off == LATEST_OFFSET:
                if t in prev_standby:
                    obj.fail(f"task_offset_sums.{t}", f"offset sum -2 means task {t} runs here as a RUNNING "
                                                      "active, but previous_standby lists it")
                prev_active.add(t)
            elif t not in prev_active:
                prev_standby.add(t)
        consumer_prev = _parse_consumer_previous(obj, consumers, tasks, prev_active | prev_standby)
        obj.finish()
        clients.append(KafkaStreamsState(
            process_id=pid, consumer_client_ids=tuple(consumers),
            previous_active_tasks=SortedFrozenSet(prev_active),
            previous_standby_tasks=SortedFrozenSet(prev_standby),
            task_offset_sums=offsets, host_info=host, client_tags=tags, rack_id=rack,
            consumer_previous_tasks=consumer_prev,
        ))
    return clients


def _parse_consumers(obj: JsonObject, pid: ProcessId) -> list[str]:
    if obj.has("consumers") and obj.has("threads"):
        obj.fail("threads", "give either 'consumers' or 'threads', not both")
    if obj.has("threads"):
        n = obj.integer("threads", minimum=1, maximum=MAX_THREADS)
        return [f"{pid}-StreamThread-{i}" for i in range(1, n + 1)]
    if not obj.has("consumers"):
        obj.fail(None, "missing 'consumers' (the client's consumer member ids) or 'threads' (their count)")
    consumers = obj.string_list("consumers")
    if not consumers:
        obj.fail("consumers", "a client needs at least one consumer (its capacity is their number)")
    for k, c in enumerate(consumers):
        if not c:
            fail(f"{obj.sub('consumers')}[{k}]", "consumer ids must not be empty", obj.source)
    return consumers


def _parse_tags(obj: JsonObject, configs: AssignmentConfigs) -> dict[str, str]:
    def as_str(value: Any, path: str) -> str:
        if not isinstance(value, str):
            fail(path, f"expected a string tag value, got {describe(value)}", obj.source)
        return value

    tags = obj.map_of("tags", as_str)
    if len(tags) > MAX_CLIENT_TAGS:
        obj.fail("tags", f"at most {MAX_CLIENT_TAGS} client tags are allowed (Kafka's limit), got {len(tags)}")
    for key, value in tags.items():
        if not key or len(key) > MAX_TAG_KEY_LENGTH:
            obj.fail(f"tags.{key}", f"tag keys must have 1 to {MAX_TAG_KEY_LENGTH} characters")
        if len(value) > MAX_TAG_VALUE_LENGTH:
            obj.fail(f"tags.{key}", f"tag values must have at most {MAX_TAG_VALUE_LENGTH} characters")
    for key in configs.rack_aware_assignment_tags:
        if key not in tags:
            obj.fail("tags", f"rack.aware.assignment.tags lists {key!r} but this client has no such tag "
                             "(Kafka requires every listed key among each client's client.tag.* configs)")
    return tags


def _check_host(obj: JsonObject, host: str) -> None:
    match = _HOST_PORT.match(host)
    if match is None or int(match["port"]) > 65535:
        obj.fail("host", f"expected 'host:port' (Kafka's application.server), got {host!r}")


def _task_list(obj: JsonObject, key: str, tasks: Mapping[TaskId, TaskInfo], fast: FastReader | None = None
               ) -> set[TaskId]:
    if fast is not None:
        quick = fast.task_list(obj.data.get(key, []), tasks)
        if quick is not None:
            obj.raw(key, None)  # seen
            return quick
    result: set[TaskId] = set()
    for j, text in enumerate(obj.string_list(key, [])):
        path = f"{obj.sub(key)}[{j}]"
        tid = _task_id(text, path, obj.source)
        if tid not in tasks:
            fail(path, f"unknown task {text!r} (not in $.tasks)", obj.source)
        result.add(tid)
    return result


def _parse_offset_sums(obj: JsonObject, tasks: Mapping[TaskId, TaskInfo], fast: FastReader | None = None
                       ) -> dict[TaskId, int]:
    if fast is not None:
        quick = fast.offset_sums(obj.data.get("task_offset_sums", {}), tasks)
        if quick is not None:
            obj.raw("task_offset_sums", None)  # seen
            return quick
    raw = obj.obj("task_offset_sums")
    offsets: dict[TaskId, int] = {}
    for text, value in raw.data.items():
        raw.raw(text)
        path = raw.sub(text)
        tid = _task_id(text, path, obj.source)
        if tid not in tasks:
            fail(path, f"unknown task {text!r} (not in $.tasks)", obj.source)
        if not tasks[tid].has_changelog:
            fail(path, f"task {text} has no changelog partition; clients report offset sums only for "
                       "tasks with logged state stores", obj.source)
        offsets[tid] = check_int(value, path, minimum=0, allowed=(LATEST_OFFSET, UNKNOWN_OFFSET_SUM),
                                 source=obj.source)
    return offsets


def _parse_consumer_previous(
    obj: JsonObject, consumers: list[str], tasks: Mapping[TaskId, TaskInfo], previous: set[TaskId]
) -> dict[str, SortedFrozenSet[TaskId]]:
    raw = obj.obj("consumer_previous")
    known = set(consumers)
    result: dict[str, SortedFrozenSet[TaskId]] = {}
    for consumer in raw.data:
        if consumer not in known:
            raw.fail(consumer, f"{consumer!r} is not one of this client's consumers")
        owned = _task_list(raw, consumer, tasks)
        for t in sorted(owned):
            if t not in previous:
                raw.fail(consumer, f"task {t} is not among the client's previous active or standby tasks")
        result[consumer] = SortedFrozenSet(owned)
    return result


def parse_client_assignments(
    obj: JsonObject, tasks: Mapping[TaskId, TaskInfo], known_clients: set[ProcessId]
) -> dict[ProcessId, KafkaStreamsAssignment]:
    """A ``{process_id: {"active": [...], "standby": [...]}}`` object with known clients and tasks."""
    result: dict[ProcessId, KafkaStreamsAssignment] = {}
    for text in obj.data:
        entry = obj.obj(text)
        pid = _process_id(text, entry.path, obj.source)
        if pid not in known_clients:
            entry.fail(None, f"unknown client {pid} (not in $.clients)")
        active = _task_list(entry, "active", tasks)
        standby = _task_list(entry, "standby", tasks)
        if active & standby:
            entry.fail("standby", f"task {min(active & standby)} is both active and standby on this client")
        deadline = entry.integer("followup_rebalance_deadline_ms", None, minimum=0, nullable=True)
        entry.raw("consumers", None)
        entry.finish()
        assignment = KafkaStreamsAssignment.of_tasks(pid, active, standby)
        if deadline is not None:
            assignment = assignment.with_followup_rebalance(deadline)
        result[pid] = assignment
    return dict(sorted(result.items()))


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    """The scenario as a ``taskassign/scenario/v1`` document (every derived field written out)."""
    state = scenario.state
    doc: dict[str, Any] = {
        "format": SCENARIO_FORMAT,
        "name": scenario.name,
        "now_ms": state.now_ms,
        "configs": {**state.configs.to_properties(), **{k: v for k, v in scenario.raw_configs.items()
                                                          if k == TASK_ASSIGNOR_CLASS}},
        "tasks": [_task_to_dict(info) for info in state.tasks.values()],
        "clients": [_client_to_dict(c) for c in state.clients.values()],
    }
    if scenario.leader is not None:
        doc["leader"] = str(scenario.leader)
    if scenario.current_assignment is not None:
        doc["current_assignment"] = {
            str(pid): {
                "active": [str(t) for t in a.active_tasks()],
                "standby": [str(t) for t in a.standby_tasks()],
            }
            for pid, a in sorted(scenario.current_assignment.items())
        }
    return doc


def _task_to_dict(info: TaskInfo) -> dict[str, Any]:
    task: dict[str, Any] = {"id": str(info.id), "stores": list(info.state_store_names)}
    if info.has_changelog:
        task["changelog_end_offset_sum"] = info.changelog_end_offset_sum
    if info.state_bytes is not None:
        task["state_bytes"] = info.state_bytes
    parts = []
    for p in info.topic_partitions:
        part: dict[str, Any] = {"topic": p.topic, "partition": p.partition, "source": p.is_source,
                                "changelog": p.is_changelog}
        if p.rack_ids is not None:
            part["racks"] = list(p.rack_ids)
        parts.append(part)
    task["partitions"] = parts
    return task


def _client_to_dict(state: KafkaStreamsState) -> dict[str, Any]:
    client: dict[str, Any] = {"process_id": str(state.process_id), "consumers": list(state.consumer_client_ids)}
    if state.rack_id is not None:
        client["rack"] = state.rack_id
    client["tags"] = dict(state.client_tags)
    if state.host_info is not None:
        client["host"] = state.host_info
    client["previous_active"] = [str(t) for t in state.previous_active_tasks]
    client["previous_standby"] = [str(t) for t in state.previous_standby_tasks]
    client["task_offset_sums"] = {str(t): v for t, v in state.task_offset_sums.items()}
    if state.consumer_previous_tasks:
        client["consumer_previous"] = {c: [str(t) for t in ts] for c, ts in state.consumer_previous_tasks.items()}
    return client


def write_scenario(scenario: Scenario, path: str | Path) -> None:
    """Write a scenario file (UTF-8, 2-space indent, trailing newline)."""
    dump_json(scenario_to_dict(scenario), path)


def with_config_overrides(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """A copy of ``scenario`` whose configs have ``overrides`` applied (validated like the file's)."""
    if not overrides:
        return scenario
    raw = {**scenario.raw_configs, **overrides}
    configs = AssignmentConfigs.from_properties(raw)
    state = ApplicationState(
        tasks=scenario.state.tasks, clients=scenario.state.clients, configs=configs, now_ms=scenario.state.now_ms,
        subtopology_walk_order=scenario.state.subtopology_walk_order,
        client_arrival_order=scenario.state.client_arrival_order,
    )
    return Scenario(scenario.name, state, MappingProxyType(raw), scenario.current_assignment, scenario.leader)
