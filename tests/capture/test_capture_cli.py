"""``taskassign capture`` as a user runs it against the lab's broker: one application into a GROUP.json that
``rebalance`` confirms, a fleet into a snapshot the fleet engine runs, and every way it can go wrong ending in
exit code 2 with a message (never a traceback): no cluster, an unknown group, a group that is not Kafka
Streams, a topology text that does not parse, a principal without the ACLs.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.kafka_cluster import LAB_READER, LAB_SASL_USERS, LAB_STRANGER, KafkaBroker, create_topics, produce
from tests.capture.streams_apps import StreamsLab

pytestmark = pytest.mark.kafka

RUNNER = CliRunner()


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def streams_app(kafka_cluster: KafkaBroker, lab_app_classes: object, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tuple[str, Path]]:
    """One small running application (two instances of the word-count shape) and its describe() text."""
    from tests.capture.lab_env import require_kafka_home

    work = tmp_path_factory.mktemp("cli-app")
    lab = StreamsLab(bootstrap=kafka_cluster.bootstrap, home=require_kafka_home(), workdir=work,
                     classes=lab_app_classes)  # type: ignore[arg-type]
    create_topics(kafka_cluster.bootstrap, {"cli-ms-input": 3, "cli-ms-word-agg": 1, "cli-ms-length-counts": 1})
    try:
        first = lab.start("multi-store", "cli-app", "a", props={"num.standby.replicas": 1}, topic_prefix="cli-")
        lab.start("multi-store", "cli-app", "b", props={"num.standby.replicas": 1}, topic_prefix="cli-")
        lab.wait_stable("cli-app", timeout=120)
        topology = work / "cli-app.txt"
        topology.write_text(first.topology_description())
        yield "cli-app", topology
    finally:
        lab.close()


def test_capture_then_rebalance_confirms_kafkas_assignment(kafka_cluster: KafkaBroker, streams_app: tuple[str, Path],
                                                          tmp_path: Path) -> None:
    group, topology = streams_app
    config = tmp_path / "streams.properties"
    config.write_text(f"application.id={group}\nnum.standby.replicas=1\ndefault.key.serde=whatever\n")
    out = tmp_path / "app.group.json"
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", group, "--topology",
                     str(topology), "--streams-config", str(config), "-o", str(out))
    assert code == 0, text
    assert "4 members in 2 clients" in text.replace("\n", " ") or "members in 2 clients" in text, text
    doc = json.loads(out.read_text())
    assert doc["capture"]["group"] == group and doc["configs"]["num.standby.replicas"] == 1
    assert all(m["assignment"]["hex"] and m["subscription"]["decoded"]["message"] == "subscription"
               for m in doc["members"])
    code, text = run("rebalance", str(out))
    assert code == 0, text
    assert "members match byte for byte" in text, text
    code, text = run("rebalance", str(out), "--json")
    assert code == 0 and json.loads(text)["recorded_outcome"]["all_match"] is True


def test_a_changed_prediction_is_reported_member_by_member(kafka_cluster: KafkaBroker,
                                                           streams_app: tuple[str, Path], tmp_path: Path) -> None:
    """Rebalancing a captured group with another assignor than Kafka's differs: exit 1 and the differences."""
    group, topology = streams_app
    out = tmp_path / "app.group.json"
    assert run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", group, "--topology",
               str(topology), "-o", str(out))[0] == 0
    doc = json.loads(out.read_text())
    doc["configs"]["num.standby.replicas"] = 0  # Kafka ran with one standby; predict with none
    edited = tmp_path / "edited.group.json"
    edited.write_text(json.dumps(doc))
    code, text = run("rebalance", str(edited))
    assert code == 1, text
    assert "standby tasks: only Kafka's" in text, text


def test_an_existing_file_that_is_not_a_group_file_is_not_overwritten(kafka_cluster: KafkaBroker,
                                                                      streams_app: tuple[str, Path],
                                                                      tmp_path: Path) -> None:
    precious = tmp_path / "notes.json"
    precious.write_text('{"mine": true}')
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", streams_app[0], "-o",
                     str(precious))
    assert code == 2 and "not overwritten" in text, text
    assert precious.read_text() == '{"mine": true}'


def test_an_unreachable_cluster_fails_within_the_timeout(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens once the socket is closed
    started = time.monotonic()
    code, text = run("capture", "--bootstrap-server", f"127.0.0.1:{port}", "--group", "x", "--timeout", "2",
                     "-o", str(tmp_path / "x.json"))
    assert code == 2, text
    assert "cannot reach a Kafka broker" in text and "Traceback" not in text, text
    assert time.monotonic() - started < 15
    assert not (tmp_path / "x.json").exists()


def test_an_unknown_group_is_an_input_error(kafka_cluster: KafkaBroker, tmp_path: Path) -> None:
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", "no-such-application",
                     "-o", str(tmp_path / "x.json"))
    assert code == 2 and "has no members" in text, text


def test_a_plain_consumer_group_is_not_a_streams_application(kafka_cluster: KafkaBroker, tmp_path: Path) -> None:
    from kafka import KafkaConsumer

    create_topics(kafka_cluster.bootstrap, {"cli-plain": 1})
    produce(kafka_cluster.bootstrap, "cli-plain", [("k", "v")])
    consumer = KafkaConsumer("cli-plain", bootstrap_servers=kafka_cluster.bootstrap, group_id="cli-plain-group",
                             auto_offset_reset="earliest")
    try:
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(timeout_ms=200)
        code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", "cli-plain-group",
                         "-o", str(tmp_path / "x.json"))
    finally:
        consumer.close()
    assert code == 2 and "not a Kafka Streams application" in text, text


def test_a_topology_text_that_does_not_parse_names_its_line(kafka_cluster: KafkaBroker, tmp_path: Path) -> None:
    bad = tmp_path / "topology.txt"
    bad.write_text("Topologies:\n   Sub-topology: 0\n    Sauce: x (topics: [a])\n")
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", "x", "--topology",
                     str(bad), "-o", str(tmp_path / "x.json"))
    assert code == 2 and f"{bad}:3:" in text, text


def test_a_principal_without_acls_is_told_what_is_missing(kafka_cluster: KafkaBroker, streams_app: tuple[str, Path],
                                                          tmp_path: Path) -> None:
    def config(user: str) -> Path:
        path = tmp_path / f"{user}.properties"
        path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
                        "org.apache.kafka.common.security.plain.PlainLoginModule required "
                        f'username="{user}" password="{LAB_SASL_USERS[user]}";\n')
        return path

    wrong = tmp_path / "wrong.properties"
    wrong.write_text(config(LAB_READER).read_text().replace(LAB_SASL_USERS[LAB_READER], "not-the-password"))
    code, text = run("capture", "--bootstrap-server", kafka_cluster.sasl_bootstrap, "--group", streams_app[0],
                     "--command-config", str(wrong), "--timeout", "5", "-o", str(tmp_path / "x.json"))
    assert code == 2 and "Authentication failed" in text and "not-the-password" not in text, text
    code, text = run("capture", "--bootstrap-server", kafka_cluster.sasl_bootstrap, "--group", streams_app[0],
                     "--command-config", str(config(LAB_STRANGER)), "-o", str(tmp_path / "x.json"))
    assert code == 2 and "not authorised" in text and "DESCRIBE on the group" in text, text
    code, text = run("capture", "--bootstrap-server", kafka_cluster.sasl_bootstrap, "--group", streams_app[0],
                     "--topology", str(streams_app[1]), "--command-config", str(config(LAB_READER)),
                     "-o", str(tmp_path / "ok.json"))
    assert code == 0, text


def test_all_groups_into_a_fleet_snapshot(kafka_cluster: KafkaBroker, streams_app: tuple[str, Path],
                                          streams_lab: StreamsLab, tmp_path: Path) -> None:
    """Every Streams group with a topology file is written; the others are reported with their reason; the
    fleet engine assigns the written application as rebalance does."""
    from tests.capture.test_snapshot import run_fleet

    group, topology = streams_app
    create_topics(kafka_cluster.bootstrap, {"cli2-sl-input": 2, "cli2-sl-output": 1})
    streams_lab.start("stateless", "cli-no-text", "a", topic_prefix="cli2-")
    streams_lab.wait_stable("cli-no-text", timeout=120)
    topologies = tmp_path / "topologies"
    topologies.mkdir()
    (topologies / f"{group}.txt").write_text(topology.read_text())
    out = tmp_path / "fleet"
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--all-groups", "--topology-dir",
                     str(topologies), "-o", str(out))
    assert code == 0, text
    assert group in text and "cli-no-text" in text and "no topology given" in text, text
    result = run_fleet(out, "high_availability")
    assert [(r["app_id"], r["status"]) for r in result.results] == [(group, "ASSIGNED")]
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--all-groups", "--topology-dir",
                     str(topologies), "--infer-topologies", "-o", str(out))
    assert code == 0, text
    assert sorted(r["app_id"] for r in run_fleet(out, "high_availability").results) == ["cli-app", "cli-no-text"]


def test_a_truncated_topology_text_is_noticed(kafka_cluster: KafkaBroker, streams_app: tuple[str, Path],
                                              tmp_path: Path) -> None:
    """A copy of describe() cut at the first blank line lacks sub-topologies: the capture refuses it, naming the
    topics it does not read; another application's topology likewise, naming the topics no member reads."""
    group, topology = streams_app
    cut = tmp_path / "cut.txt"
    cut.write_text(topology.read_text().split("\n\n")[0] + "\n")
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", group, "--topology",
                     str(cut), "-o", str(tmp_path / "cut.group.json"))
    text = " ".join(text.split())
    assert code == 2 and "the topology does not match group 'cli-app'" in text, text
    assert "which it does not read" in text and not (tmp_path / "cut.group.json").exists()
    other = tmp_path / "other.txt"
    other.write_text(topology.read_text().replace("cli-ms-input", "another-app-input"))
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", group, "--topology",
                     str(other), "-o", str(tmp_path / "other.group.json"))
    text = " ".join(text.split())
    assert code == 2 and "it reads another-app-input, which no member subscribes to" in text, text


def test_a_capture_leaves_the_callers_logging_as_it_found_it(kafka_cluster: KafkaBroker) -> None:
    import logging

    from taskassign.capture.cluster import ClusterReader

    before = [(name, logging.getLogger(name).level, logging.getLogger(name).propagate) for name in ("kafka",
                                                                                                   "kafka.conn")]
    with ClusterReader(kafka_cluster.bootstrap, timeout=10) as reader:
        reader.brokers()
    assert [(n, logging.getLogger(n).level, logging.getLogger(n).propagate) for n, _, _ in before] == before
