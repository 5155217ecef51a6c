"""Streams groups (``group.protocol=streams``) on the lab's real broker: real Kafka Streams instances through a
cold start, a scale-out, a clean leave and a crash; after each, ``capture`` reads the group and ``rebalance``
replays the broker's assignor from the previous capture, which must reproduce the broker's targets.

Needs a Kafka whose broker speaks the streams protocol (4.2+: on by default) at ``KAFKA_HOME``; skipped with
how to enable it otherwise (tests/capture/conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.kafka_cluster import KafkaBroker, create_topics
from tests.capture.lab_env import require_kafka_home
from tests.capture.streams_apps import TOPOLOGIES, StreamsInstance, StreamsLab

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


def wait_settled(bootstrap: str, members: int, *, timeout: float = 120.0, group: str = APP) -> int:
    """Wait until the streams group has ``members`` members, all at the assignment epoch, each running its
    target; the assignment epoch."""
    from taskassign.capture.streams_client import StreamsClient
    from taskassign.capture.streams_group_capture import describe_streams_group
    from taskassign.errors import CaptureError

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with StreamsClient(bootstrap, timeout=10) as client:
                g = describe_streams_group(client, group)
        except CaptureError:
            time.sleep(0.5)
            continue
        if (len(g.members) == members and g.group_epoch == g.assignment_epoch
                and all(m.member_epoch == g.assignment_epoch and m.assignment == m.target_assignment
                        for m in g.members)):
            return g.assignment_epoch
        time.sleep(0.5)
    raise AssertionError(f"group {group} did not settle with {members} members within {timeout} s")


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


# --- standbys 1 and 2, several threads, several subtopologies ---------------------------------------------------


def set_group_configs(bootstrap: str, group: str, configs: Mapping[str, object]) -> None:
    """A group-level override (IncrementalAlterConfigs on the GROUP resource), as an operator sets it: Kafka's
    own kafka-configs tool (``--entity-type groups``; its class moved from core to tools in 4.3)."""
    home = require_kafka_home()
    log_config = home / "config" / "tools-log4j2.yaml"
    added = ",".join(f"{k}={v}" for k, v in configs.items())
    output = ""
    for main in ("org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand"):
        result = subprocess.run(
            ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1", f"-Dlog4j2.configurationFile={log_config}", "-cp",
             f"{home}/libs/*", main, "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
             "--entity-name", group, "--add-config", added],
            capture_output=True, text=True, timeout=120, check=False)
        if result.returncode == 0:
            return
        output += result.stdout + result.stderr
    raise AssertionError(output)


#: A multi-threaded instance joining or crashing out of a group with standbys: its threads join or expire in
#: successive epochs the capture does not see, the later computations from the tasks members held while reconciling
#: the earlier (pinned as data: tests/capture/data/replays/44-*-threads-standby-*; test_streams_capture.py).
UNSEEN_RECONCILING = "mid-reconciliation through epochs the capture did not see"


class History:
    """Captures of one streams group, each replayed from the one before it through ``rebalance``."""

    def __init__(self, bootstrap: str, group: str, directory: Path) -> None:
        self.bootstrap, self.group, self.directory = bootstrap, group, directory
        self.captures: list[Path] = []
        #: Steps replayed through epochs the capture did not see, from the tasks members held while reconciling.
        self.unseen_reconciling: list[str] = []

    def capture(self, step: str, standbys: int, *, unseen_joins: bool = False) -> dict[str, object]:
        """Capture, check the standbys, replay from the previous capture (it must match). ``unseen_joins``: the
        step is a multi-threaded join or crash, replayed through epochs the capture did not see (counted)."""
        out = self.directory / f"{len(self.captures):02d}-{step}.json"
        code, text = run("capture", "--bootstrap-server", self.bootstrap, "--group", self.group, "-o", str(out))
        assert code == 0, text
        doc = json.loads(out.read_text())
        assert doc["configs"]["num.standby.replicas"] == str(standbys), (doc["configs"], doc["capture"]["notes"])
        standby_tasks = sum(len(parts) for m in doc["members"] for parts in m["standbyTasks"].values())
        assert standby_tasks > 0, doc["members"]
        self.captures.append(out)
        if len(self.captures) > 1:
            code, text = run("rebalance", str(out), "--previous", str(self.captures[-2]))
            assert code == 0, f"{step}: {text}"
            if unseen_joins and UNSEEN_RECONCILING in " ".join(text.split()):
                self.unseen_reconciling.append(step)
        return dict(doc)

    def replay_all(self) -> str:
        _, text = run("rebalance", str(self.directory), "--json")
        return text


def _streams_app(lab: StreamsLab, topology: str, app: str, prefix: str) -> Callable[[str, int], StreamsInstance]:
    def start(name: str, threads: int) -> StreamsInstance:
        return lab.start(topology, app, name, props={"group.protocol": "streams", "num.stream.threads": threads},
                         topic_prefix=prefix)
    return start


def test_two_standbys_from_a_group_override_with_one_to_three_threads(
        kafka_cluster: KafkaBroker, streams_lab: StreamsLab, tmp_path: Path) -> None:
    """streams.num.standby.replicas=2 on the group (kafka-configs), a chain of five subtopologies, instances of
    1, 2 and 3 threads; a join, a clean leave and a crash, each captured and replayed."""
    bootstrap = kafka_cluster.bootstrap
    _streams_broker(bootstrap)
    app, prefix = "live-streams-sb2", "lss2-"
    create_topics(bootstrap, dict.fromkeys(TOPOLOGIES["chain"].topics(prefix), 4))
    set_group_configs(bootstrap, app, {"streams.num.standby.replicas": 2})
    start = _streams_app(streams_lab, "chain", app, prefix)
    history = History(bootstrap, app, tmp_path / "history")
    instances = {name: start(name, threads) for name, threads in (("a", 1), ("b", 2), ("c", 3))}
    wait_settled(bootstrap, 6, group=app)
    doc = history.capture("cold-start", 2)
    assert len(doc["subtopologies"]) == 5  # type: ignore[arg-type]
    assert "DescribeConfigs" in str(doc["capture"]["numStandbyReplicasSource"])  # type: ignore[index]
    instances["d"] = start("d", 2)
    wait_settled(bootstrap, 8, group=app)
    history.capture("join-d", 2, unseen_joins=True)
    instances["b"].stop()
    wait_settled(bootstrap, 6, group=app)
    history.capture("leave-b", 2)
    instances["c"].crash()
    wait_settled(bootstrap, 3, group=app, timeout=150)
    history.capture("crash-c", 2, unseen_joins=True)
    print(f"replayed through unseen epochs from reconciling inputs: {history.unseen_reconciling}")


@pytest.fixture(scope="module")
def one_standby_broker() -> Iterator[KafkaBroker]:
    """A broker of its own whose streams groups get one standby by default (group.streams.num.standby.replicas)."""
    with KafkaBroker(overrides={"group.streams.num.standby.replicas": "1"}) as broker:
        yield broker


def test_one_standby_from_the_brokers_default_with_several_threads(
        one_standby_broker: KafkaBroker, lab_app_classes: Callable[[], Path], tmp_path: Path) -> None:
    """group.streams.num.standby.replicas=1 on the broker, no group override; the multi-store topology (three
    subtopologies), 2 and 3 threads; a join and a crash, each captured and replayed."""
    bootstrap = one_standby_broker.bootstrap
    _streams_broker(bootstrap)
    app, prefix = "live-streams-sb1", "lss1-"
    create_topics(bootstrap, dict.fromkeys(TOPOLOGIES["multi-store"].topics(prefix), 4))
    lab = StreamsLab(bootstrap=bootstrap, home=require_kafka_home(), workdir=tmp_path, classes=lab_app_classes)
    try:
        start = _streams_app(lab, "multi-store", app, prefix)
        history = History(bootstrap, app, tmp_path / "history")
        instances = {name: start(name, threads) for name, threads in (("a", 2), ("b", 3))}
        wait_settled(bootstrap, 5, group=app)
        history.capture("cold-start", 1)
        instances["c"] = start("c", 2)
        wait_settled(bootstrap, 7, group=app)
        history.capture("join-c", 1, unseen_joins=True)
        instances["a"].crash()
        wait_settled(bootstrap, 5, group=app, timeout=150)
        history.capture("crash-a", 1, unseen_joins=True)
        print(f"replayed through unseen epochs from reconciling inputs: {history.unseen_reconciling}")
    finally:
        lab.close()
