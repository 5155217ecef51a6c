"""The Java KIP-924 assignor driven with a synthetic ApplicationState (tests/bridge/java/BridgeHarness.java), against
Kafka's own jars: with a live `taskassign serve` it applies exactly what `taskassign assign` computes on the
equivalent scenario; with the service stopped, slowed past the deadline, or answering a broken assignment or an
error, it applies Kafka's StickyTaskAssignor's assignment and gives one fallback line.

Needs a JDK and Kafka 3.8+ jars (KAFKA_HOME or KAFKA_LIBS); skipped with the reason otherwise."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from taskassign.bridge.request import answer_clients, request_from_scenario
from taskassign.leader.assign import assign_scenario
from tests.bridge import java_harness
from tests.bridge.conftest import EXAMPLES, kip924_view
from tests.helpers import running_service

LIBS, WHY = java_harness.kafka_libs()
pytestmark = pytest.mark.skipif(LIBS is None, reason=WHY)
SCENARIOS = [EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json",
             EXAMPLES / "scenarios" / "new-client-joins.scenario.json"]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert LIBS is not None
    return java_harness.build(LIBS, tmp_path_factory.mktemp("java-bridge"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("serve-state")
    with running_service("-a", "state_aware", "--state-dir", str(state), "--deadline-ms", "5000") as url:
        yield url


class _Stub(BaseHTTPRequestHandler):
    behaviour = "slow"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.behaviour == "slow":
            time.sleep(1.5)
        clients = {c["process_id"]: {"active": [], "standby": []} for c in request["clients"]}
        first = next(iter(clients))
        if self.behaviour == "doubled":  # every task active on the first client, one of them on the second too
            clients[first]["active"] = [t["id"] for t in request["tasks"]]
            clients[list(clients)[1]]["active"] = [request["tasks"][0]["id"]]
        elif self.behaviour == "missing":  # one task left out
            clients[first]["active"] = [t["id"] for t in request["tasks"]][1:]
        elif self.behaviour == "unknown-process":
            clients["00000000-0000-0000-0000-00000000dead"] = {"active": [t["id"] for t in request["tasks"]]}
        body = json.dumps({"clients": clients} if self.behaviour != "error" else {"error": "boom"}).encode()
        self.send_response(500 if self.behaviour == "error" else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the bridge may have hung up (its deadline)
            self.wfile.write(body)


def _stub(behaviour: str) -> ThreadingHTTPServer:
    handler = type("Stub", (_Stub,), {"behaviour": behaviour})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tasks(assignment: dict[str, Any]) -> dict[str, tuple[list[str], list[str]]]:
    return {pid: (c["active"], c["standby"]) for pid, c in assignment.items()}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_with_the_service_it_applies_what_taskassign_assign_computes(work: Path, service: str, path: Path) -> None:
    assert LIBS is not None
    scenario = kip924_view(path)
    out = java_harness.run(work, LIBS, request_from_scenario(scenario, "orders"), service, 10_000)
    assert out["fallbacks"] == []
    expected = answer_clients(assign_scenario(scenario, "state_aware").group.clients)
    assert _tasks(out["result"]) == _tasks(expected)


def test_with_the_service_stopped_it_applies_kafkas_sticky_assignment(work: Path) -> None:
    assert LIBS is not None
    request = request_from_scenario(kip924_view(SCENARIOS[0]), "orders")
    out = java_harness.run(work, LIBS, request, f"http://127.0.0.1:{_free_port()}", 2000)
    assert out["result"] == out["sticky"]
    assert len(out["fallbacks"]) == 1 and "cannot connect" in out["fallbacks"][0]


def test_with_a_service_slower_than_the_deadline_it_falls_back_in_time(work: Path) -> None:
    assert LIBS is not None
    server = _stub("slow")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        out = java_harness.run(work, LIBS, request_from_scenario(kip924_view(SCENARIOS[0]), "orders"), url, 300)
    finally:
        server.shutdown()
        server.server_close()
    assert out["result"] == out["sticky"]
    # no answer within the deadline; on a busy machine a cold JVM may spend it serialising already (said so)
    assert len(out["fallbacks"]) == 1 and "300 ms" in out["fallbacks"][0]
    assert "no answer" in out["fallbacks"][0] or "spent before the request was sent" in out["fallbacks"][0]
    assert out["elapsed_ms"] < 2500  # 300 ms of waiting, the rest a cold JVM's first call and Kafka's sticky


@pytest.mark.parametrize(("behaviour", "reason"), [
    ("doubled", "active on"), ("missing", "has no active owner"), ("unknown-process", "unknown process"),
    ("error", "HTTP 500: boom"),
])
def test_with_a_broken_answer_it_applies_kafkas_sticky_assignment(work: Path, behaviour: str, reason: str) -> None:
    assert LIBS is not None
    server = _stub(behaviour)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        out = java_harness.run(work, LIBS, request_from_scenario(kip924_view(SCENARIOS[0]), "orders"), url, 5000)
    finally:
        server.shutdown()
        server.server_close()
    assert out["result"] == out["sticky"]
    assert len(out["fallbacks"]) == 1 and reason in out["fallbacks"][0], out["fallbacks"]
