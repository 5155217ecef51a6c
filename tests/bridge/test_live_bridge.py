"""Live: real Kafka Streams instances with the bridge on a real broker (marked ``kafka``).

Needs ``KAFKA_HOME`` (a Kafka 3.8+ distribution, or a build's libs/ and config/; the broker runs from libs/) and a
JDK; skipped with the reason otherwise.
One KRaft broker on free loopback ports; the application (tests/bridge/java/BridgeStreamsApp.java: input -> count,
6 partitions, one standby, one thread per instance) runs with the properties `taskassign bridge properties` prints.

1. With `taskassign serve -a state_aware`: cold start (2 instances), scale-out (3), a crash (SIGKILL), a rolling
   restart. After each, once every instance is RUNNING, every instance runs exactly the tasks of the service's last
   answer (matched by application.server), and that decision replays byte for byte (`bridge replay`, `assign`).
2. With the service stopped, slower than the deadline, or answering a broken assignment: every instance keeps
   RUNNING on Kafka's own assignment (every task active exactly once), and their logs say why they fell back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from taskassign.bridge.audit import read_audit
from tests.helpers import start_service, stop_service

pytestmark = pytest.mark.kafka
HOME = Path(os.environ["KAFKA_HOME"]) if os.environ.get("KAFKA_HOME") else None
APP_SOURCE = Path(__file__).parent / "java" / "BridgeStreamsApp.java"
PARTITIONS = 6


def _skip_reason() -> str | None:
    if HOME is None:
        return "set KAFKA_HOME to a Kafka 3.8+ distribution (or a build with libs/) to run the live bridge tests"
    libs = HOME / "libs"
    if not any(libs.glob("kafka-streams-[0-9]*.jar")) or not any(libs.glob("kafka_2.1[23]-*.jar")):
        return f"KAFKA_HOME={HOME}: libs/ lacks kafka-streams-*.jar or the broker's kafka_2.13-*.jar"
    if shutil.which("javac") is None or shutil.which("java") is None:
        return "no JDK (javac, java) on PATH"
    return None


def _java(main: str, *args: str, logs: Path) -> list[str]:
    """A Kafka tool or the broker, run from libs/ as bin/kafka-run-class.sh would (a built tree may have no bin/);
    its log files go to ``logs`` (without kafka.logs.dir Kafka writes them into the working directory)."""
    return ["java", "-XX:TieredStopAtLevel=1", f"-Dkafka.logs.dir={logs}",
            f"-Dlog4j2.configurationFile={HOME}/config/log4j2.yaml",
            f"-Dlog4j.configuration=file:{HOME}/config/log4j.properties", "-cp", f"{HOME}/libs/*", main, *args]


if (_why := _skip_reason()) is not None:
    pytest.skip(_why, allow_module_level=True)
assert HOME is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, check: Callable[[], Any], timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@contextlib.contextmanager
def _broker(work: Path, classpath_extra: str = "", overrides: dict[str, str] | None = None) -> Iterator[str]:
    """One KRaft broker (combined mode) on free loopback ports; yields its bootstrap address."""
    port, controller = _free_port(), _free_port()
    config = work / "server.properties"
    settings = {
        "process.roles": "broker,controller", "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", "log.dirs": str(work / "data"),
        "group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
        "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
        "num.partitions": "1", **(overrides or {}),
    }
    config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    def with_extra(command: list[str]) -> list[str]:
        if classpath_extra:
            command[command.index("-cp") + 1] += os.pathsep + classpath_extra
        return command

    # the storage tool validates the broker's configs too, instantiating group.streams.assignors: the jar goes on
    # its classpath as well
    subprocess.run(with_extra(_java("kafka.tools.StorageTool", "format", "-t", str(uuid.uuid4()), "-c", str(config),
                                     logs=work)),
                   capture_output=True, text=True, check=True, timeout=300)
    log = (work / "broker.log").open("w")
    command = with_extra(_java("kafka.Kafka", str(config), logs=work))
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    bootstrap = f"127.0.0.1:{port}"
    try:
        _wait("the broker", lambda: "Kafka Server started" in (work / "broker.log").read_text(), 180)
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in ("bridge-input", "bridge-output")])
        finally:
            admin.close()
        yield bootstrap
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        log.close()


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with _broker(tmp_path_factory.mktemp("broker")) as bootstrap:
        yield bootstrap


@pytest.fixture(scope="module")
def app_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("app")
    jar = work / "taskassign-bridge.jar"
    subprocess.run([sys.executable, "-m", "taskassign", "bridge", "build", "--kafka-libs", str(HOME / "libs"), "-o",
                    str(jar), "--protocol", "classic"], capture_output=True, text=True, check=True)
    classes = work / "classes"
    classes.mkdir()
    subprocess.run(["javac", "-nowarn", "-cp", f"{HOME}/libs/*", "-d", str(classes), str(APP_SOURCE)],
                   capture_output=True, text=True, check=True)
    return os.pathsep.join([f"{HOME}/libs/*", str(jar), str(classes)])


class Instance:
    def __init__(self, name: str, work: Path, bootstrap: str, app_id: str, classpath: str, properties: str) -> None:
        self.name = name
        self.port = _free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.report = work / f"{name}.report.json"
        self.log_path = work / f"{name}.log"
        extra = work / f"{name}.properties"
        extra.write_text(properties)
        state = work / f"{name}-state"
        state.mkdir(exist_ok=True)
        # WARN and above on stderr (Kafka 4's log4j2 config, or 3.x's log4j 1 one): the bridge's fallback line
        log4j = [f"-Dlog4j.configuration=file:{HOME}/config/tools-log4j.properties",
                 f"-Dlog4j2.configurationFile={HOME}/config/tools-log4j2.yaml"]
        self._log = self.log_path.open("a")
        self.process = subprocess.Popen(["java", *log4j, "-cp", classpath, "BridgeStreamsApp", bootstrap, app_id,
                                         str(state), self.host, str(self.report), str(extra)],
                                        stdout=self._log, stderr=subprocess.STDOUT)

    def status(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.report.read_text())  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=60)
        self._log.close()
        self.report.unlink(missing_ok=True)


@pytest.fixture
def instances() -> Iterator[list[Instance]]:
    running: list[Instance] = []
    yield running
    for instance in running:
        with contextlib.suppress(Exception):
            instance.stop(signal.SIGKILL)


def _properties(url: str, timeout_ms: int = 2000) -> str:
    done = subprocess.run([sys.executable, "-m", "taskassign", "bridge", "properties", "--url", url, "--timeout-ms",
                           str(timeout_ms)], capture_output=True, text=True, check=True)
    return done.stdout


def _all_running(group: list[Instance]) -> list[dict[str, Any]] | None:
    statuses = [i.status() for i in group]
    if all(s is not None and s["state"] == "RUNNING" for s in statuses):
        return statuses  # type: ignore[return-value]
    return None


def _covered(statuses: list[dict[str, Any]]) -> bool:
    actives = [t for s in statuses for t in s["active"]]
    return len(actives) == PARTITIONS and len(set(actives)) == PARTITIONS


def _matches_last_decision(audit: Path, group: list[Instance]) -> bool:
    statuses = _all_running(group)
    if statuses is None or not audit.exists():
        return False
    decisions = [r for r in read_audit(audit) if r.get("protocol") == "classic" and r.get("source") == "computed"]
    if not decisions:
        return False
    last = decisions[-1]
    hosts = {c["process_id"]: c.get("host") for c in last["scenario"]["clients"]}
    answered = {hosts[pid]: (c["active"], c["standby"]) for pid, c in last["answer"]["clients"].items()}
    running = {s["host"]: (s["active"], s["standby"]) for s in statuses}
    return answered == running


def test_state_aware_through_cold_start_scale_out_crash_and_rolling_restart(broker: str, app_classpath: str,
                                                                            tmp_path: Path, instances: list) -> None:
    state = tmp_path / "serve"
    serve, url = start_service("-a", "state_aware", "--state-dir", str(state), "--deadline-ms", "1500")
    audit = state / "audit.jsonl"
    props = _properties(url)
    app_id = f"bridge-live-{uuid.uuid4().hex[:8]}"

    def start(name: str) -> Instance:
        instance = Instance(name, tmp_path, broker, app_id, app_classpath, props)
        instances.append(instance)
        return instance

    try:
        group = [start("a"), start("b")]                                   # cold start
        _wait("cold start to apply the service's answer", lambda: _matches_last_decision(audit, group))
        group.append(start("c"))                                           # scale-out
        _wait("scale-out", lambda: _matches_last_decision(audit, group))
        crashed = group.pop(1)                                             # crash
        crashed.stop(signal.SIGKILL)
        _wait("the crash's rebalance", lambda: _matches_last_decision(audit, group))
        for k, instance in enumerate(list(group)):                         # rolling restart
            instance.stop()
            group[k] = start(f"{instance.name}{k}")
            _wait(f"the restart of {instance.name}", lambda: _matches_last_decision(audit, group))
        assert not any("falling back" in i.log() for i in group)
        # the last decision replays byte for byte
        replay = tmp_path / "replay"
        subprocess.run([sys.executable, "-m", "taskassign", "bridge", "replay", str(audit), "--out-dir", str(replay)],
                       check=True, capture_output=True)
        scenario = next(replay.glob("*.scenario.json"))
        subprocess.run([sys.executable, "-m", "taskassign", "assign", str(scenario), "-a", "state_aware", "-o",
                        str(replay / "again.json")], check=True, capture_output=True)
        recorded = next(replay.glob("*.assignment.json"))
        assert (replay / "again.json").read_bytes() == recorded.read_bytes()
    finally:
        stop_service(serve)


class _Stub(BaseHTTPRequestHandler):
    mode = "slow"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.mode == "slow":
            time.sleep(5)
        clients = {c["process_id"]: {"active": [], "standby": []} for c in request["clients"]}
        first = next(iter(clients))
        clients[first]["active"] = [t["id"] for t in request["tasks"]][1:]  # one task left out
        body = json.dumps({"clients": clients}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


@pytest.mark.parametrize("mode", ["stopped", "slow", "broken"])
def test_the_application_keeps_running_on_kafkas_assignment(broker: str, app_classpath: str, tmp_path: Path,
                                                              instances: list, mode: str) -> None:
    server = None
    if mode == "stopped":
        url = f"http://127.0.0.1:{_free_port()}"
    else:
        server = ThreadingHTTPServer(("127.0.0.1", 0), type("Stub", (_Stub,), {"mode": mode}))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}"
    props = _properties(url, timeout_ms=500)
    app_id = f"bridge-fallback-{mode}-{uuid.uuid4().hex[:8]}"
    try:
        group = [Instance(n, tmp_path, broker, app_id, app_classpath, props) for n in ("a", "b")]
        instances.extend(group)
        statuses = _wait("Kafka's own assignment", lambda: _all_running(group))
        group.append(Instance("c", tmp_path, broker, app_id, app_classpath, props))  # one more rebalance
        instances.append(group[-1])
        statuses = _wait("Kafka's own assignment after scale-out",
                         lambda: (s := _all_running(group)) is not None and _covered(s) and s)
        assert _covered(statuses)
        reason = {"stopped": "cannot connect", "slow": "500 ms", "broken": "has no active owner"}[mode]
        logs = "".join(i.log() for i in group)
        assert "falling back to Kafka's StickyTaskAssignor" in logs and reason in logs
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


def _streams_skip_reason() -> str | None:
    libs = HOME / "libs"  # type: ignore[operator]
    if not any(libs.glob("kafka-group-coordinator-api-[0-9]*.jar")):
        return "the streams-protocol plug-in needs a Kafka 4.4 broker (kafka-group-coordinator-api jar in libs/)"
    return None


def test_a_streams_group_on_a_4_4_broker_uses_the_plug_in_and_falls_back(tmp_path: Path, instances: list) -> None:
    """KIP-1357: the broker runs the bridge's plug-in for the group that chose it (streams.assignor.name=taskassign):
    with `serve` (streams_balanced) the members run the service's answer; once the service is stopped, the next
    assignment is the broker's sticky one (logged on the broker) and the application keeps running."""
    if (why := _streams_skip_reason()) is not None:
        pytest.skip(why)
    jar = tmp_path / "taskassign-bridge.jar"
    subprocess.run([sys.executable, "-m", "taskassign", "bridge", "build", "--kafka-libs", str(HOME / "libs"), "-o",
                    str(jar), "--protocol", "both"], capture_output=True, text=True, check=True)
    classes = tmp_path / "classes"
    classes.mkdir()
    subprocess.run(["javac", "-nowarn", "-cp", f"{HOME}/libs/*", "-d", str(classes), str(APP_SOURCE),
                    str(APP_SOURCE.parent / "GroupConfig.java")], capture_output=True, text=True, check=True)
    classpath = os.pathsep.join([f"{HOME}/libs/*", str(classes)])
    state = tmp_path / "serve"
    (tmp_path / "serve.json").write_text(json.dumps({"streams_assignor": "streams_balanced", "deadline_ms": 1000}))
    serve, url = start_service("--config", str(tmp_path / "serve.json"), "--state-dir", str(state))
    broker_props = subprocess.run([sys.executable, "-m", "taskassign", "bridge", "properties", "--url", url,
                                   "--protocol", "streams", "--timeout-ms", "1000"], capture_output=True, text=True,
                                  check=True).stdout
    overrides = dict(line.split("=", 1) for line in broker_props.splitlines() if line and not line.startswith("#"))
    app_id = f"bridge-streams-{uuid.uuid4().hex[:8]}"
    broker_dir = tmp_path / "broker"
    broker_dir.mkdir()
    try:
        with _broker(broker_dir, str(jar), overrides) as bootstrap:
            # the group chooses the plug-in (kafka-configs --entity-type groups, through the Admin API)
            subprocess.run(["java", "-cp", classpath, "GroupConfig", bootstrap, app_id, "streams.assignor.name",
                            "taskassign"], capture_output=True, text=True, check=True, timeout=120)
            props = "group.protocol=streams\n"
            group = [Instance(n, tmp_path, bootstrap, app_id, classpath, props) for n in ("a", "b")]
            instances.extend(group)
            audit = state / "audit.jsonl"

            def served() -> bool:
                statuses = _all_running(group)
                if statuses is None or not audit.exists() or not _covered(statuses):
                    return False
                return any(r.get("protocol") == "streams" and r.get("source") == "computed" for r in read_audit(audit))

            _wait("the plug-in's first assignment from the service", served, 180)
            stop_service(serve)
            group.append(Instance("c", tmp_path, bootstrap, app_id, classpath, props))
            instances.append(group[-1])
            _wait("the broker's sticky assignment with the service stopped",
                  lambda: (s := _all_running(group)) is not None and _covered(s), 180)
            assert "falling back to the broker's sticky assignor" in (broker_dir / "broker.log").read_text()
            assert all(i.status()["state"] == "RUNNING" for i in group)  # type: ignore[index]
    finally:
        stop_service(serve)
