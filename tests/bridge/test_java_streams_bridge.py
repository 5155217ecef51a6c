"""The broker-side streams assignor (Kafka 4.4, KIP-1357) driven with a GroupSpec and TopologyDescriber built from a
streams-group file (tests/bridge/java/StreamsHarness.java): with a live `taskassign serve` it returns the service's
answer; with the service stopped or answering a broken assignment it returns the broker's sticky assignment and
gives one fallback line; nothing escapes it.

Needs a JDK and a Kafka 4.4 broker's libs/ (KAFKA_HOME or KAFKA_LIBS); skipped with the reason otherwise."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from taskassign.formats.json_io import load_json_file
from taskassign.streams_protocol.assignors import run_assignor
from taskassign.streams_protocol.format import assignment_document, parse_streams_group
from tests.bridge import java_harness
from tests.bridge.conftest import EXAMPLES
from tests.helpers import running_service

LIBS, WHY = java_harness.broker_libs()
pytestmark = pytest.mark.skipif(LIBS is None, reason=WHY)
GROUP = EXAMPLES / "streams-groups" / "two-racks-one-standby.streams-group.json"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert LIBS is not None
    return java_harness.build(LIBS, tmp_path_factory.mktemp("java-streams-bridge"), protocol="streams")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("serve-state")
    config = state / "serve.json"
    config.write_text(json.dumps({"streams_assignor": "streams_balanced", "deadline_ms": 5000}))
    with running_service("--config", str(config), "--state-dir", str(state)) as url:
        yield url


class _Broken(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        doc = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        members = [m["memberId"] for m in doc["members"]]
        everything = {s["id"]: list(range(s["partitions"])) for s in doc["subtopologies"]}
        # every task active on the first two members at once: doubled actives, which the broker would let through
        answer = {m: {"activeTasks": everything, "standbyTasks": {}} for m in members[:2]}
        body = json.dumps({"members": answer}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_with_the_service_it_returns_the_services_answer(work: Path, service: str) -> None:
    assert LIBS is not None
    doc = load_json_file(GROUP)
    out = java_harness.run(work, LIBS, doc, service, 10_000, main="StreamsHarness")
    assert out["fallbacks"] == []
    expected = assignment_document("balanced", run_assignor(parse_streams_group(doc), "balanced"))["members"]
    assert out["result"] == {m: {"activeTasks": a["activeTasks"], "standbyTasks": a["standbyTasks"]}
                             for m, a in expected.items()}


def test_with_the_service_stopped_it_returns_the_brokers_sticky_assignment(work: Path) -> None:
    assert LIBS is not None
    out = java_harness.run(work, LIBS, load_json_file(GROUP), f"http://127.0.0.1:{_free_port()}", 1000,
                           main="StreamsHarness")
    assert out["result"] == out["sticky"]
    assert len(out["fallbacks"]) == 1 and "cannot connect" in out["fallbacks"][0]


def test_with_a_broken_answer_it_returns_the_brokers_sticky_assignment(work: Path) -> None:
    assert LIBS is not None
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        out = java_harness.run(work, LIBS, load_json_file(GROUP), f"http://127.0.0.1:{server.server_address[1]}",
                               5000, main="StreamsHarness")
    finally:
        server.shutdown()
        server.server_close()
    assert out["result"] == out["sticky"]
    assert len(out["fallbacks"]) == 1 and "active on" in out["fallbacks"][0]


def test_one_jar_for_both_protocols_keeps_the_classic_side_on_java_11(tmp_path: Path) -> None:
    import zipfile

    assert LIBS is not None
    jar = tmp_path / "both.jar"
    subprocess.run([sys.executable, "-m", "taskassign", "bridge", "build", "--kafka-libs", str(LIBS), "-o", str(jar),
                    "--protocol", "both"], check=True, capture_output=True)
    with zipfile.ZipFile(jar) as archive:
        def major(name: str) -> int:
            return int.from_bytes(archive.read(f"dev/taskassign/bridge/{name}.class")[6:8], "big")

        # Java 11 (55) for what a 3.8+ application loads, Java 17 (61) for the 4.4 broker's plug-in
        assert [major(n) for n in ("Json", "BridgeClient", "TaskassignTaskAssignor")] == [55, 55, 55]
        assert major("TaskassignStreamsAssignor") == 61
