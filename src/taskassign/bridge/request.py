"""The bridge's wire documents: the request the Java assignors post, turned into a scenario (classic protocol)
or a streams group (streams protocol), and the answer sent back.

A classic request carries KIP-924's ApplicationState as the group leader sees it: lags (``lagFor``), not the
offset sums a scenario keeps. The scenario is built so that the engine sees the same lags: a task's changelog
end offset sum is the largest lag any client reports on it, and a client holding state for the task reports
``end - lag`` as its offset sum (-2, a running active, and -3, unknown, stay as they are). Kafka computes the
lag of a client without the task's state as the full end offset sum, which is then the largest lag, so every
client's lag on every task is the same on both sides. To keep requests small, the Java side sends each task's
largest lag once (``max_lag``) and per client only the lags that differ from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskassign.configs import CONFIG_KEYS, TASK_ASSIGNOR_CLASS
from taskassign.formats.json_io import JsonObject, describe, fail
from taskassign.formats.scenario import SCENARIO_FORMAT, Scenario, parse_scenario
from taskassign.ids import ProcessId
from taskassign.model import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, KafkaStreamsAssignment

__all__ = (
    "ANSWER_FORMAT",
    "REQUEST_FORMAT",
    "ClassicRequest",
    "answer_clients",
    "parse_classic_request",
    "request_from_scenario",
    "request_to_scenario_document",
)

REQUEST_FORMAT = "taskassign/bridge-request/v1"
ANSWER_FORMAT = "taskassign/bridge-answer/v1"
#: The bridge's own keys: the application sets them, the engine does not read them.
BRIDGE_KEYS = ("taskassign.url", "taskassign.token", "taskassign.token.file", "taskassign.timeout.ms")


class ClassicRequest:
    """A parsed classic request: the application id, the scenario document built from it and the scenario."""

    __slots__ = ("application_id", "scenario", "scenario_document")

    def __init__(self, application_id: str, scenario_document: dict[str, Any], scenario: Scenario) -> None:
        self.application_id = application_id
        self.scenario_document = scenario_document
        self.scenario = scenario


def parse_classic_request(doc: Any, overrides: Mapping[str, Any] | None = None) -> ClassicRequest:
    """Validate a classic request and build its scenario (``overrides``: the service's configs for the
    application, applied over the application's own); errors raise ScenarioError naming the JSON path."""
    scenario_doc = request_to_scenario_document(doc, overrides)
    app_id = scenario_doc["name"]
    return ClassicRequest(app_id, scenario_doc, parse_scenario(scenario_doc, source="request", default_name=app_id))


def request_to_scenario_document(doc: Any, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``taskassign/scenario/v1`` document of a classic request (see the module's note on lags)."""
    root = JsonObject(doc, "$", "request")
    root.expect_format(REQUEST_FORMAT)
    protocol = root.string("protocol", "classic")
    if protocol != "classic":
        root.fail("protocol", f"expected 'classic' here, got {protocol!r}")
    app_id = root.string("application_id", "application") or "application"
    now_ms = root.integer("now_ms", 0, minimum=0)
    configs = _configs(root.obj("assignment_configs"), root.obj("configs"), overrides or {})
    tasks = root.array("tasks")
    clients = root.array("clients")
    root.raw("lags_available", None)
    root.finish()
    lags: list[dict[str, int]] = []
    for i, item in enumerate(clients):
        if not isinstance(item, dict):
            fail(f"$.clients[{i}]", f"expected an object, got {describe(item)}", "request")
        raw = item.get("lags", {})
        if not isinstance(raw, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw.values()):
            fail(f"$.clients[{i}].lags", "expected an object of task id -> integer lag", "request")
        lags.append(raw)
    out_tasks, changelog, max_lags = _tasks(tasks)
    # a task's end offset sum: its largest lag (sent as max_lag, or the largest a client lists), at least 0
    ends = {t: max(max_lags.get(t, 0), 0) for t in changelog}
    for i, lag in enumerate(lags):
        for t, value in lag.items():
            if t not in ends:
                fail(f"$.clients[{i}].lags.{t}", f"task {t!r} has no changelog partition in $.tasks", "request")
            if value > ends[t]:
                ends[t] = value
    for task in out_tasks:
        if task["id"] in ends:
            task["changelog_end_offset_sum"] = ends[task["id"]]
    consumers_unique = _consumers_unique(clients)
    out_clients = [_client(item, lags[i], ends, max_lags, i, consumers_unique) for i, item in enumerate(clients)]
    return {"format": SCENARIO_FORMAT, "name": app_id, "now_ms": now_ms, "configs": configs, "tasks": out_tasks,
            "clients": out_clients}


def _configs(assignment: JsonObject, app: JsonObject, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka's AssignmentConfigs, then the application's own engine keys (``taskassign.state_aware.*`` ...),
    then the service's per-application settings."""
    result: dict[str, Any] = {}
    for key in assignment.data:
        value = assignment.raw(key)
        if key not in CONFIG_KEYS:
            assignment.fail(key, f"unknown assignment config {key!r}")
        if value is not None:
            result[key] = ",".join(value) if isinstance(value, list) else value
    for key in app.data:
        value = app.raw(key)
        if key in CONFIG_KEYS and key.startswith("taskassign.") and key not in result:
            result[key] = value
    for key, value in overrides.items():
        if key != TASK_ASSIGNOR_CLASS:
            result[key] = value
    return result


def _tasks(items: list[Any]) -> tuple[list[dict[str, Any]], set[str], dict[str, int]]:
    out: list[dict[str, Any]] = []
    changelog: set[str] = set()
    max_lags: dict[str, int] = {}
    for i, item in enumerate(items):
        obj = JsonObject(item, f"$.tasks[{i}]", "request")
        tid = obj.string("id", non_empty=True)
        obj.boolean("stateful", False)
        stores = obj.string_list("stores", [])
        most = obj.integer("max_lag", None, nullable=True)
        if most is not None:
            max_lags[tid] = most
        partitions = []
        for j, p in enumerate(obj.array("partitions", [])):
            part = JsonObject(p, f"$.tasks[{i}].partitions[{j}]", "request")
            entry: dict[str, Any] = {"topic": part.string("topic", non_empty=True),
                                     "partition": part.integer("partition", minimum=0),
                                     "source": part.boolean("source", False),
                                     "changelog": part.boolean("changelog", False)}
            racks = part.raw("racks", None)
            if racks is not None:
                entry["racks"] = part.string_list("racks")
            part.finish()
            changelog.update([tid] if entry["changelog"] else [])
            partitions.append(entry)
        obj.finish()
        out.append({"id": tid, "stores": stores, "partitions": partitions})
    return out, changelog, max_lags


def _consumers_unique(clients: list[Any]) -> bool:
    seen: set[str] = set()
    for item in clients:
        consumers = item.get("consumers") if isinstance(item, dict) else None
        if not isinstance(consumers, list) or not consumers:
            return False
        for c in consumers:
            if not isinstance(c, str) or not c or c in seen:
                return False
            seen.add(c)
    return True


def _client(item: dict[str, Any], listed: dict[str, int], ends: Mapping[str, int], max_lags: Mapping[str, int],
            i: int, use_consumers: bool) -> dict[str, Any]:
    obj = JsonObject(item, f"$.clients[{i}]", "request")
    pid = obj.string("process_id", non_empty=True)
    threads = obj.integer("threads", 1, minimum=1)
    consumers = obj.string_list("consumers", [])
    previous_active = obj.string_list("previous_active", [])
    previous_standby = obj.string_list("previous_standby", [])
    obj.raw("lags", None)
    rack = obj.string("rack", None, nullable=True)
    tags = obj.raw("tags", {})
    host = obj.string("host", None, nullable=True)
    obj.finish()
    if use_consumers and len(consumers) != threads:
        use_consumers = False
    held = set(previous_active) | set(previous_standby)
    # the lags the client lists, and the task's largest lag for a task it holds without listing it
    lags = {t: max_lags[t] for t in held if t in max_lags and t not in listed}
    lags.update(listed)
    offsets: dict[str, int] = {}
    for task, lag in lags.items():
        if lag in (LATEST_OFFSET, UNKNOWN_OFFSET_SUM):
            offsets[task] = lag
        elif lag < 0:
            fail(f"$.clients[{i}].lags.{task}", f"a lag is -2, -3 or at least 0, got {lag}", "request")
        elif task in held or lag < ends[task]:
            offsets[task] = ends[task] - lag
    client: dict[str, Any] = {"process_id": pid}
    if use_consumers:
        client["consumers"] = consumers
    else:
        client["threads"] = threads
    if rack is not None:
        client["rack"] = rack
    client["tags"] = tags
    if host is not None:
        client["host"] = host
    client["previous_active"] = previous_active
    client["previous_standby"] = previous_standby
    client["task_offset_sums"] = offsets
    return client


def answer_clients(clients: Mapping[ProcessId, KafkaStreamsAssignment]) -> dict[str, dict[str, Any]]:
    """The answer's ``clients`` object: per process its active and standby tasks and follow-up deadline (the
    leader's: a probing rebalance an assignor asks for is a deadline here, as Kafka's leader makes it)."""
    result: dict[str, dict[str, Any]] = {}
    for _, a in sorted(clients.items()):
        result[str(a.process_id)] = {
            "active": [str(t) for t in a.active_tasks()],
            "standby": [str(t) for t in a.standby_tasks()],
            "followup_rebalance_deadline_ms": a.followup_rebalance_deadline,
        }
    return result


def request_from_scenario(scenario: Scenario, application_id: str | None = None) -> dict[str, Any]:
    """The request the Java assignor would post for ``scenario``'s ApplicationState (KIP-924's view: lags, not
    offset sums; per task its largest lag, per client the lags that differ from it): what the tests and
    benchmarks/bench_bridge.py send, and a way to try a service by hand."""
    state = scenario.state
    props = state.configs.to_properties()
    assignment_configs = {key: props.get(key, CONFIG_KEYS[key].default) for key in _KIP924_CONFIGS}
    tags = assignment_configs["rack.aware.assignment.tags"]
    assignment_configs["rack.aware.assignment.tags"] = (
        [t for t in tags.split(",") if t] if isinstance(tags, str) else list(tags or []))
    all_lags = {pid: client.stateful_tasks_to_lag_sums() for pid, client in state.clients.items()}
    max_lag: dict[Any, int] = {}
    for lags_of in all_lags.values():
        for t, lag in lags_of.items():
            max_lag[t] = max(max_lag.get(t, lag), lag)
    tasks = []
    for info in state.tasks.values():
        task: dict[str, Any] = {
            "id": str(info.id), "stateful": info.is_stateful, "stores": list(info.state_store_names),
            "partitions": [{"topic": p.topic, "partition": p.partition, "source": p.is_source,
                            "changelog": p.is_changelog, "racks": list(p.rack_ids) if p.rack_ids is not None else None}
                           for p in info.topic_partitions],
        }
        if info.id in max_lag:
            task["max_lag"] = max_lag[info.id]
        tasks.append(task)
    clients = []
    for pid, client in state.clients.items():
        lags = {str(t): lag for t, lag in all_lags[pid].items() if lag != max_lag[t]}
        clients.append({
            "process_id": str(client.process_id), "threads": client.num_processing_threads,
            "consumers": list(client.consumer_client_ids),
            "previous_active": [str(t) for t in client.previous_active_tasks],
            "previous_standby": [str(t) for t in client.previous_standby_tasks],
            "lags": lags, "rack": client.rack_id, "tags": dict(client.client_tags), "host": client.host_info,
        })
    app_configs = {k: v for k, v in props.items() if k.startswith("taskassign.")}
    return {"format": REQUEST_FORMAT, "protocol": "classic", "application_id": application_id or scenario.name,
            "now_ms": state.now_ms, "assignment_configs": assignment_configs, "configs": app_configs,
            "tasks": tasks, "lags_available": True, "clients": clients}


_KIP924_CONFIGS = ("acceptable.recovery.lag", "max.warmup.replicas", "num.standby.replicas",
                   "probing.rebalance.interval.ms", "rack.aware.assignment.tags", "rack.aware.assignment.traffic_cost",
                   "rack.aware.assignment.non_overlap_cost", "rack.aware.assignment.strategy")
