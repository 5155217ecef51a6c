"""Streams groups (``group.protocol=streams``) on the lab's real broker: real Kafka Streams instances through a
cold start, a scale-out, a clean leave and a crash; after each, ``capture`` reads the group and ``rebalance``
replays the broker's assignor from the previous capture, which must reproduce the broker's targets.

Needs a Kafka whose broker speaks the streams protocol (4.2+: on by default) at ``KAFKA_HOME``; skipped with
how to enable it otherwise (tests/capture/conftest.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.kafka_cluster import KafkaBroker, create_topics
from tests.capture.streams_apps import StreamsLab

pytestmark = pytest.mark.kafka

RUNNER = CliRunner()
APP = "live-streams"
PREFIX = "lsp-"
STREAMS_PROPS = {"group.protocol": "streams", "num.stream.threads": 2}


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, " ".join(result.output.split())


def _streams_broker(bootstrap: str) -> None:
    from taskassign.capture.broker_line import streams_protocol_versions
    from taskassign.capture.streams_client import StreamsClient

    with StreamsClient(bootstrap, timeout=10) as client:
        if streams_protocol_versions(client.api_versions.ranges) is None:
            pytest.skip(f"the lab's broker (Kafka {client.release_line}) does not speak the streams protocol")


def wait_settled(bootstrap: str, members: int, *, timeout: float = 120.0) -> int:
    """Wait until the streams group has ``members`` members, all at the assignment epoch, each running its
    target; the assignment epoch."""
    from taskassign.capture.streams_client import StreamsClient
    from taskassign.capture.streams_group_capture import describe_streams_group
    from taskassign.errors import CaptureError

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with StreamsClient(bootstrap, timeout=10) as client:
                g = describe_streams_group(client, APP)
        except CaptureError:
            time.sleep(0.5)
            continue
        if (len(g.members) == members and g.group_epoch == g.assignment_epoch
                and all(m.member_epoch == g.assignment_epoch and m.assignment == m.target_assignment
                        for m in g.members)):
            return g.assignment_epoch
        time.sleep(0.5)
    raise AssertionError(f"group {APP} did not settle with {members} members within {timeout} s")


@pytest.fixture
def lab(kafka_cluster: KafkaBroker, streams_lab: StreamsLab) -> Iterator[StreamsLab]:
    _streams_broker(kafka_cluster.bootstrap)
    create_topics(kafka_cluster.bootstrap, {f"{PREFIX}ms-input": 6, f"{PREFIX}ms-word-agg": 1,
                                            f"{PREFIX}ms-length-counts": 1})
    yield streams_lab


def test_capture_and_replay_through_scale_out_leave_and_crash(kafka_cluster: KafkaBroker, lab: StreamsLab,
                                                              tmp_path: Path) -> None:
    bootstrap = kafka_cluster.bootstrap
    history = tmp_path / "history"
    captures: list[Path] = []

    def capture(step: str) -> Path:
        out = history / f"{len(captures):02d}-{step}.json"
        code, text = run("capture", "--bootstrap-server", bootstrap, "--group", APP, "-o", str(out))
        assert code == 0, text
        doc = json.loads(out.read_text())
        assert doc["capture"]["brokerReleaseLine"] is not None and doc["members"]
        assert all(m["processId"] for m in doc["members"])
        captures.append(out)
        return out

    def replay_last() -> None:
        code, text = run("rebalance", str(captures[-1]), "--previous", str(captures[-2]))
        assert code == 0, text

    for name in ("a", "b"):
        lab.start("multi-store", APP, name, props=STREAMS_PROPS, topic_prefix=PREFIX)
    wait_settled(bootstrap, 4)
    capture("cold-start")
    c = lab.start("multi-store", APP, "c", props=STREAMS_PROPS, topic_prefix=PREFIX)
    wait_settled(bootstrap, 6)
    capture("scale-out")
    replay_last()
    c.stop()
    wait_settled(bootstrap, 4, timeout=120)
    capture("leave")
    replay_last()
    d = lab.start("multi-store", APP, "d", props=STREAMS_PROPS, topic_prefix=PREFIX)
    wait_settled(bootstrap, 6)
    capture("join-d")
    replay_last()
    d.crash()
    wait_settled(bootstrap, 4, timeout=150)  # the broker's streams session timeout (45 s by default)
    capture("crash")
    replay_last()
    _, text = run("rebalance", str(history))  # the cold start may miss its unseen joins; the rest replay
    assert "epoch(s) reproduced" in text, text


def test_a_missing_streams_group_on_a_real_broker(kafka_cluster: KafkaBroker, tmp_path: Path) -> None:
    _streams_broker(kafka_cluster.bootstrap)
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", "no-such-streams-app",
                     "--protocol", "streams", "-o", str(tmp_path / "x.json"))
    assert code == 2 and "does not exist" in text, text
