"""``taskassign serve``: the HTTP service the bridge's Java assignors ask at every rebalance.

``Decider`` makes one decision (pure: a request document in, an HTTP status, the answer and the audit record
out); ``make_server`` puts it behind a stdlib ``ThreadingHTTPServer`` with the service's bounds: loopback only
unless allowed, a bearer token (compared in constant time, never logged), a request size limit, a deadline per
decision (an error is answered rather than a late assignment: the Java side has fallen back by then), a limit
on decisions computed at once, and never a crash on bad input (400 with a message).

Endpoints: ``POST /v1/assign`` (classic, KIP-924), ``POST /v1/streams-assign`` (streams groups, KIP-1357),
``POST /v1/plans`` (approve a plan), ``GET /v1/plans/<application>``, ``GET /healthz``, ``GET /metrics``
(Prometheus text format 0.0.4).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from taskassign.assignors.registry import DEFAULT_ASSIGNOR, STREAMS_GROUP_ASSIGNORS, builtin_name, resolve
from taskassign.bridge.audit import AuditLog
from taskassign.bridge.plans import (
    answer_problem,
    approved_streams_plans,
    load_approved,
    parse_plan,
    plan_misfit,
    store_approved,
    streams_members_answer,
    streams_task,
)
from taskassign.bridge.request import ANSWER_FORMAT, answer_clients, parse_classic_request
from taskassign.bridge.token import read_token_file
from taskassign.configs import AssignmentConfigs
from taskassign.errors import ConfigError, StreamsAssignorError, TaskassignError, UserInputError
from taskassign.formats.json_io import JsonObject, load_json_file
from taskassign.leader.assign import assign_scenario, result_to_document
from taskassign.model import AssignmentError
from taskassign.streams_protocol.assignors import run_assignor
from taskassign.streams_protocol.format import assignment_document, parse_streams_group, streams_group_to_dict

__all__ = (
    "DEFAULT_LISTEN",
    "Decider",
    "Decision",
    "Metrics",
    "ServiceConfig",
    "make_server",
    "read_service_config",
)

DEFAULT_LISTEN = "127.0.0.1:8787"
DEFAULT_DEADLINE_MS = 400
DEFAULT_MAX_REQUEST_BYTES = 64 << 20
DEFAULT_STREAMS_ASSIGNOR = "streams_sticky"
TOKEN_ENV = "TASKASSIGN_TOKEN"
#: Latency histogram buckets (seconds).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass(frozen=True, slots=True)
class AppSettings:
    """What the service runs for one application: its assignor and the configs laid over the application's."""

    assignor: str
    configs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    listen: str = DEFAULT_LISTEN
    allow_remote: bool = False
    default: AppSettings = field(default_factory=lambda: AppSettings(DEFAULT_ASSIGNOR))
    applications: Mapping[str, AppSettings] = field(default_factory=dict)
    streams_assignor: str = DEFAULT_STREAMS_ASSIGNOR
    token: str | None = None
    state_dir: Path | None = None
    audit_log: Path | None = None
    deadline_ms: int = DEFAULT_DEADLINE_MS
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    max_concurrent: int = 2

    def settings(self, application_id: str) -> AppSettings:
        return self.applications.get(application_id, self.default)


def _settings(obj: JsonObject, default: str) -> AppSettings:
    assignor = obj.string("assignor", default, non_empty=True)
    try:
        resolve(assignor)  # checked when the config is read; each request resolves the name it runs
    except UserInputError as exc:
        obj.fail("assignor", str(exc))
    configs = obj.obj("configs", {}).data
    try:  # Kafka's ranges (probing.rebalance.interval.ms >= 60000, ...) at start, not at every request
        AssignmentConfigs.from_properties(dict(configs), coerce_strings=True)
    except ConfigError as exc:
        obj.fail("configs", str(exc))
    return AppSettings(assignor, dict(configs))


def read_service_config(path: Path | None, *, listen: str | None = None, assignor: str | None = None,
                        allow_remote: bool = False, token_file: Path | None = None, state_dir: Path | None = None,
                        audit_log: Path | None = None, deadline_ms: int | None = None) -> ServiceConfig:
    """The service's settings: the config file's (JSON, docs/bridge.md), then the command line's over them.
    The token comes from ``token_file`` (the file's or the flag's) or the environment variable it names
    (``token_env``, default TASKASSIGN_TOKEN); never from the command line itself."""
    doc: dict[str, Any] = {}
    source = str(path) if path is not None else None
    if path is not None:
        loaded = load_json_file(path)
        if not isinstance(loaded, dict):
            raise UserInputError(f"{path}: expected a JSON object")
        doc = loaded
    root = JsonObject(doc, "$", source)
    cfg_listen = root.string("listen", DEFAULT_LISTEN, non_empty=True)
    cfg_remote = root.boolean("allow_remote", False)
    default = _settings(root, DEFAULT_ASSIGNOR)
    if assignor is not None:
        resolve(assignor)
        default = AppSettings(assignor, default.configs)
    apps_obj = root.obj("applications", {})
    apps = {}
    for app_id in apps_obj.data:
        entry = apps_obj.obj(app_id)
        apps[app_id] = _settings(entry, default.assignor)
        entry.finish()
    streams = root.string("streams_assignor", DEFAULT_STREAMS_ASSIGNOR)
    if builtin_name(streams) not in STREAMS_GROUP_ASSIGNORS:
        root.fail("streams_assignor", f"expected a streams-protocol assignor (streams_sticky, streams_balanced), "
                                      f"got {streams!r}")
    cfg_token_file = root.string("token_file", None, nullable=True)
    token_env = root.string("token_env", TOKEN_ENV, non_empty=True)
    cfg_state = root.string("state_dir", None, nullable=True)
    cfg_audit = root.string("audit_log", None, nullable=True)
    cfg_deadline = root.integer("deadline_ms", DEFAULT_DEADLINE_MS, minimum=1, maximum=600_000)
    max_bytes = root.integer("max_request_bytes", DEFAULT_MAX_REQUEST_BYTES, minimum=1024)
    max_concurrent = root.integer("max_concurrent", 2, minimum=1, maximum=64)
    root.finish()
    base = path.parent if path is not None else Path.cwd()
    token_path = token_file or (base / cfg_token_file if cfg_token_file else None)
    token: str | None = None
    if token_path is not None:
        token = read_token_file(token_path)
    elif os.environ.get(token_env):
        token = os.environ[token_env].strip()
    state = state_dir or (base / cfg_state if cfg_state else None)
    audit = audit_log or (base / cfg_audit if cfg_audit else (state / "audit.jsonl" if state else None))
    config = ServiceConfig(
        listen=listen or cfg_listen, allow_remote=allow_remote or cfg_remote, default=default, applications=apps,
        streams_assignor=streams, token=token, state_dir=state, audit_log=audit,
        deadline_ms=deadline_ms if deadline_ms is not None else cfg_deadline, max_request_bytes=max_bytes,
        max_concurrent=max_concurrent,
    )
    check_listen(config.listen, config.allow_remote)
    return config


def split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise UserInputError(f"--listen: expected HOST:PORT, got {listen!r}")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(listen: str, allow_remote: bool) -> None:
    """A non-loopback address needs ``allow_remote``: whoever reaches the service answers for applications."""
    host, _ = split_listen(listen)
    if not is_loopback(host) and not allow_remote:
        raise UserInputError(f"--listen {listen}: not a loopback address; the service decides every rebalance of "
                             "the applications that ask it, so it listens beyond this machine only with "
                             "--allow-remote (or \"allow_remote\": true in --config), ideally with a token")


class Metrics:
    """The counters and latency histogram ``/metrics`` shows (Prometheus text format)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.decisions: dict[tuple[str, str], int] = {}
        self.fallbacks: dict[str, int] = {}
        self.buckets = [0] * (len(BUCKETS) + 1)
        self.latency_sum = 0.0
        self.latency_count = 0
        self.started = time.time()

    def decision(self, protocol: str, source: str, seconds: float) -> None:
        with self._lock:
            key = (protocol, source)
            self.decisions[key] = self.decisions.get(key, 0) + 1
            index = next((i for i, b in enumerate(BUCKETS) if seconds <= b), len(BUCKETS))
            self.buckets[index] += 1
            self.latency_sum += seconds
            self.latency_count += 1

    def fallback(self, reason: str) -> None:
        with self._lock:
            self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1

    def total(self) -> int:
        with self._lock:
            return sum(self.decisions.values())

    def render(self) -> str:
        with self._lock:
            lines = [
                "# HELP taskassign_bridge_decisions_total Decisions answered, by protocol and by where the answer "
                "came from (computed, plan, error).",
                "# TYPE taskassign_bridge_decisions_total counter",
            ]
            lines += [f'taskassign_bridge_decisions_total{{protocol="{p}",source="{s}"}} {n}'
                      for (p, s), n in sorted(self.decisions.items())]
            lines += [
                "# HELP taskassign_bridge_fallbacks_total Decisions that did not go as asked: error (the Java side "
                "falls back to Kafka's assignor), deadline, busy, assignor (the assignor's own fallback), "
                "plan_misfit (an approved plan no longer fits).",
                "# TYPE taskassign_bridge_fallbacks_total counter",
            ]
            lines += [f'taskassign_bridge_fallbacks_total{{reason="{r}"}} {n}'
                      for r, n in sorted(self.fallbacks.items())]
            lines += [
                "# HELP taskassign_bridge_decision_seconds Time from request read to answer ready.",
                "# TYPE taskassign_bridge_decision_seconds histogram",
            ]
            cumulative = 0
            for bound, count in zip((*BUCKETS, float("inf")), self.buckets, strict=True):
                cumulative += count
                label = "+Inf" if bound == float("inf") else repr(bound)
                lines.append(f'taskassign_bridge_decision_seconds_bucket{{le="{label}"}} {cumulative}')
            lines.append(f"taskassign_bridge_decision_seconds_sum {self.latency_sum:.6f}")
            lines.append(f"taskassign_bridge_decision_seconds_count {self.latency_count}")
            lines += ["# HELP taskassign_bridge_uptime_seconds Seconds since the service started.",
                      "# TYPE taskassign_bridge_uptime_seconds gauge",
                      f"taskassign_bridge_uptime_seconds {time.time() - self.started:.3f}"]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Decision:
    """An HTTP status, the JSON answered, and the audit record (None: nothing to keep)."""

    status: int
    answer: dict[str, Any]
    record: dict[str, Any] | None


def _error(status: int, message: str, record: dict[str, Any] | None = None) -> Decision:
    return Decision(status, {"format": ANSWER_FORMAT, "error": message}, record)


class Decider:
    """One decision per request; thread-safe (no shared mutable state but the audit log and metrics)."""

    def __init__(self, config: ServiceConfig, metrics: Metrics | None = None) -> None:
        self.config = config
        self.metrics = metrics or Metrics()
        self.audit = AuditLog(config.audit_log)

    def classic(self, doc: Any) -> Decision:
        """A classic (KIP-924) request: the approved plan when it fits, else the application's assignor."""
        started = time.perf_counter()
        decision_id = uuid.uuid4().hex
        record: dict[str, Any] = {"decision_id": decision_id, "time_ms": int(time.time() * 1000),
                                  "protocol": "classic"}
        app_id = doc.get("application_id") if isinstance(doc, dict) else None
        settings = self.config.settings(app_id if isinstance(app_id, str) else "")
        record.update(application_id=app_id, assignor=settings.assignor)
        try:
            request = parse_classic_request(doc, settings.configs)
        except TaskassignError as exc:
            return self._finish(_error(400, f"bad request: {exc}", record), started, "error")
        scenario = request.scenario
        record["scenario"] = request.scenario_document  # what the scenario was parsed from
        answer: dict[str, Any] = {"format": ANSWER_FORMAT, "decision_id": decision_id,
                                  "application_id": request.application_id, "assignor": settings.assignor}
        try:
            plan = load_approved(self.config.state_dir, request.application_id)
        except TaskassignError as exc:
            plan, record["plan_problem"] = None, f"the approved plan is unreadable: {exc}"
        if plan is not None:
            misfit = plan_misfit(plan, [str(t) for t in scenario.state.tasks], list(scenario.state.clients))
            if misfit is None:
                record.update(source="plan", plan_id=plan["plan_id"], assignor=plan["assignor"])
                answer.update(source="plan", plan_id=plan["plan_id"], assignor=plan["assignor"],
                              clients={p: {**c, "followup_rebalance_deadline_ms": None}
                                       for p, c in plan["clients"].items()})
                record["answer"] = answer
                return self._finish(Decision(200, answer, record), started, "plan")
            record["plan_misfit"] = f"approved plan {plan['plan_id']} no longer fits: {misfit}; computed afresh"
            self.metrics.fallback("plan_misfit")
        try:
            result = assign_scenario(scenario, settings.assignor)
        except Exception as exc:  # a plug-in assignor's bug must not take the service down
            return self._finish(_error(500, f"{settings.assignor} failed: {type(exc).__name__}: {exc}", record),
                                started, "error")
        record["assignment"] = result_to_document(result)
        if result.fallback_reason is not None:
            record["fallback_reason"] = result.fallback_reason
            self.metrics.fallback("assignor")
        if result.error is not AssignmentError.NONE:
            return self._finish(_error(422, f"{settings.assignor}'s assignment is invalid: {result.error.name}",
                                       record), started, "error")
        clients = answer_clients(result.group.clients)
        problem = answer_problem(clients, [str(t) for t in scenario.state.tasks],
                                 [str(p) for p in scenario.state.clients])
        if problem is not None:
            return self._finish(_error(422, f"{settings.assignor}'s assignment is invalid: {problem}", record),
                                started, "error")
        answer.update(source="computed", clients=clients)
        record["source"] = "computed"
        record["answer"] = answer
        return self._finish(Decision(200, answer, record), started, "computed")

    def streams(self, doc: Any) -> Decision:
        """A streams-group request from the broker plug-in: the service's streams assignor on the group."""
        started = time.perf_counter()
        decision_id = uuid.uuid4().hex
        assignor = self.config.streams_assignor
        record: dict[str, Any] = {"decision_id": decision_id, "time_ms": int(time.time() * 1000),
                                  "protocol": "streams", "assignor": assignor}
        try:
            group = parse_streams_group(doc, source="request")
        except TaskassignError as exc:
            return self._finish(_error(400, f"bad request: {exc}", record), started, "error")
        record["application_id"] = group.name
        record["streams_group"] = streams_group_to_dict(group)
        tasks = [streams_task(s.id, p) for s in group.subtopologies for p in range(s.partitions)]
        members = [m.member_id for m in group.members]
        try:
            plans = approved_streams_plans(self.config.state_dir)
        except TaskassignError as exc:
            plans, record["plan_problem"] = [], f"an approved plan is unreadable: {exc}"
        for plan in plans:
            if plan_misfit(plan, tasks, members) is None:
                answer = {"format": ANSWER_FORMAT, "decision_id": decision_id, "assignor": plan["assignor"],
                          "source": "plan", "plan_id": plan["plan_id"], "members": streams_members_answer(plan)}
                record.update(source="plan", plan_id=plan["plan_id"], assignor=plan["assignor"],
                              application_id=plan["application_id"], answer=answer)
                return self._finish(Decision(200, answer, record), started, "plan")
        if plans:
            record["plan_misfit"] = f"none of the {len(plans)} approved streams plans fits this group; computed afresh"
        kafka_name = resolve(assignor).kafka_name
        assert kafka_name is not None
        try:
            outcome = run_assignor(group, kafka_name)
        except StreamsAssignorError as exc:
            record["assignment"] = assignment_document(kafka_name, exc)
            return self._finish(_error(422, f"{assignor}: {exc.message}", record), started, "error")
        except Exception as exc:
            return self._finish(_error(500, f"{assignor} failed: {type(exc).__name__}: {exc}", record),
                                started, "error")
        document = assignment_document(kafka_name, outcome)
        record["assignment"] = document
        answer = {"format": ANSWER_FORMAT, "decision_id": decision_id, "assignor": assignor, "source": "computed",
                  "members": document["members"]}
        record["source"] = "computed"
        record["answer"] = answer
        return self._finish(Decision(200, answer, record), started, "computed")

    def approve(self, doc: Any) -> Decision:
        if self.config.state_dir is None:
            return _error(409, "the service has no state directory (--state-dir) to keep approved plans in")
        try:
            plan = parse_plan(doc, source="request")
        except TaskassignError as exc:
            return _error(400, f"bad plan: {exc}")
        try:
            store_approved(self.config.state_dir, plan)  # never over a file taskassign did not write
        except UserInputError as exc:
            return _error(409, f"cannot keep the plan: {exc}")
        self.audit.append({"decision_id": uuid.uuid4().hex, "time_ms": int(time.time() * 1000),
                           "protocol": "plan", "application_id": plan["application_id"], "source": "approved",
                           "plan_id": plan["plan_id"], "assignor": plan["assignor"]})
        return Decision(200, {"approved": plan["plan_id"], "application_id": plan["application_id"]}, None)

    def _finish(self, decision: Decision, started: float, source: str) -> Decision:
        took = time.perf_counter() - started
        record = decision.record
        if record is not None:
            record["took_ms"] = round(took * 1000, 3)
            if decision.status != 200:
                record.update(source="error", error=decision.answer.get("error"), status=decision.status)
            self.audit.append(record)
        if source == "error":
            self.metrics.fallback("error")
        self.metrics.decision(record.get("protocol", "?") if record else "?", source, took)
        return decision


class BridgeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, config: ServiceConfig, decider: Decider) -> None:
        host, port = split_listen(config.listen)
        self.config = config
        self.decider = decider
        self.pool = ThreadPoolExecutor(max_workers=config.max_concurrent, thread_name_prefix="taskassign-decide")
        self.slots = threading.BoundedSemaphore(config.max_concurrent)
        if ":" in host:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__((host, port), _Handler)

    def server_close(self) -> None:
        super().server_close()
        self.pool.shutdown(wait=False, cancel_futures=True)


class _Handler(BaseHTTPRequestHandler):
    server: BridgeServer
    protocol_version = "HTTP/1.1"
    server_version = "taskassign-serve"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the audit log keeps the decisions, and request lines never carry the token anyway."""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, doc: Mapping[str, Any]) -> None:
        self._send(status, json.dumps(doc, separators=(",", ":")).encode())

    def _authorised(self) -> bool:
        token = self.server.config.token
        if token is None:
            return True
        given = self.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
        self._json(401, {"error": "missing or wrong bearer token"})
        return False

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._json(200, {"status": "ok", "decisions": self.server.decider.metrics.total()})
        elif self.path == "/metrics":
            self._send(200, self.server.decider.metrics.render().encode(), "text/plain; version=0.0.4")
        elif self.path.startswith("/v1/plans/"):
            if not self._authorised():
                return
            app_id = self.path.removeprefix("/v1/plans/")
            try:
                plan = load_approved(self.server.config.state_dir, app_id)
            except TaskassignError as exc:
                self._json(500, {"error": str(exc)})
                return
            self._json(200 if plan else 404, plan or {"error": f"no approved plan for {app_id!r}"})
        else:
            self._json(404, {"error": f"no such endpoint: GET {self.path}"})

    def do_POST(self) -> None:
        routes = {"/v1/assign": self.server.decider.classic, "/v1/streams-assign": self.server.decider.streams,
                  "/v1/plans": self.server.decider.approve}
        handler = routes.get(self.path)
        if handler is None:
            self._json(404, {"error": f"no such endpoint: POST {self.path}"})
            return
        if not self._authorised():
            return
        length_text = self.headers.get("Content-Length")
        if length_text is None or not length_text.isdigit():
            self._json(411, {"error": "a Content-Length is required"})
            return
        length = int(length_text)
        if length > self.server.config.max_request_bytes:
            self.close_connection = True
            self._json(413, {"error": f"request of {length} bytes is larger than the service's limit "
                                      f"({self.server.config.max_request_bytes}, max_request_bytes)"})
            return
        try:
            doc = json.loads(self.rfile.read(length))
        except (ValueError, UnicodeDecodeError) as exc:
            self._json(400, {"error": f"bad request: not JSON ({exc})"})
            return
        deadline = self.server.config.deadline_ms / 1000
        if not self.server.slots.acquire(timeout=deadline / 2):
            self.server.decider.metrics.fallback("busy")
            self._json(503, {"error": f"busy: {self.server.config.max_concurrent} decisions under way"})
            return
        future = self.server.pool.submit(handler, doc)
        future.add_done_callback(lambda _: self.server.slots.release())
        try:
            decision = future.result(timeout=deadline)
        except FutureTimeout:
            self.server.decider.metrics.fallback("deadline")
            self._json(503, {"error": f"no decision within the service's deadline ({self.server.config.deadline_ms} "
                                      "ms, deadline_ms); the bridge falls back to Kafka's assignor"})
            return
        except Exception as exc:  # Decider catches everything it expects; this is the last line
            self._json(500, {"error": f"{type(exc).__name__}: {exc}"})
            return
        self._json(decision.status, decision.answer)


def make_server(config: ServiceConfig) -> BridgeServer:
    """The service, bound and ready for ``serve_forever`` (port 0 picks a free port: ``server_address``)."""
    return BridgeServer(config, Decider(config))
