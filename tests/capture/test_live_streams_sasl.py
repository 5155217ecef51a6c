"""A streams group captured over a lab broker's SASL_PLAINTEXT listener (ACLs enforced) with PLAIN,
SCRAM-SHA-256 and SCRAM-SHA-512 writes the same streams-group file as over PLAINTEXT; a wrong password is one clear
line naming the mechanism and the broker's message, exit 2, without the password (issue 28, point 1).

Needs a Kafka whose broker speaks the streams protocol at ``KAFKA_HOME`` (tests/capture/conftest.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.kafka_cluster import KafkaBroker, create_topics
from tests.capture.lab_env import require_kafka_home
from tests.capture.streams_apps import StreamsLab
from tests.capture.test_live_streams_capture import _streams_broker, wait_settled

pytestmark = pytest.mark.kafka

RUNNER = CliRunner()
APP = "live-streams-sasl"
PREFIX = "lss-"
PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def client_properties(path: Path, mechanism: str, user: str, password: str) -> Path:
    module = PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE
    path.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\n"
                    f'sasl.jaas.config={module} required username="{user}" password="{password}";\n')
    return path


def comparable(path: Path, bootstrap: str) -> dict[str, Any]:
    """The file without what must differ between two captures: the listener's address and the capture time."""
    doc: dict[str, Any] = json.loads(path.read_text().replace(bootstrap, "BOOTSTRAP"))
    doc["capture"].pop("capturedAtMs")
    return doc


@pytest.fixture(scope="module")
def cluster() -> Iterator[KafkaBroker]:
    """A broker of its own: the lab's, with SCRAM-SHA-512 enabled on its SASL listener too (the shared lab broker
    leaves it off for a test of a mechanism the listener does not enable)."""
    from kafka.admin import ACLOperation, ResourceType

    from tests.capture.kafka_cluster import LAB_READER, LAB_SASL_USERS, SCRAM_SHA_512_OVERRIDES, grant_acls

    with KafkaBroker(sasl_users=LAB_SASL_USERS, overrides=SCRAM_SHA_512_OVERRIDES) as broker:
        _streams_broker(broker.bootstrap)
        grant_acls(broker.bootstrap, LAB_READER)
        # The group's configs (DescribeConfigs on the GROUP resource) need DESCRIBE_CONFIGS on it: this group only.
        grant_acls(broker.bootstrap, LAB_READER, [(ACLOperation.DESCRIBE_CONFIGS, ResourceType.GROUP, APP)])
        yield broker


@pytest.fixture(scope="module")
def group(cluster: KafkaBroker, lab_app_classes: Callable[[], Path],
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    create_topics(cluster.bootstrap, {f"{PREFIX}ms-input": 4, f"{PREFIX}ms-word-agg": 1,
                                      f"{PREFIX}ms-length-counts": 1})
    lab = StreamsLab(bootstrap=cluster.bootstrap, home=require_kafka_home(),
                     workdir=tmp_path_factory.mktemp("streams-sasl"), classes=lab_app_classes)
    try:
        lab.start("multi-store", APP, "a", props={"group.protocol": "streams", "num.stream.threads": 2},
                  topic_prefix=PREFIX)
        wait_settled(cluster.bootstrap, 2, group=APP)
        yield APP
    finally:
        lab.close()


def test_sasl_captures_equal_the_plaintext_capture(cluster: KafkaBroker, group: str, tmp_path: Path) -> None:
    from tests.capture.kafka_cluster import LAB_READER, LAB_SASL_USERS

    plain_out = tmp_path / "plaintext.json"
    code, text = run("capture", "--bootstrap-server", cluster.bootstrap, "--group", group, "-o",
                     str(plain_out))
    assert code == 0, text
    expected = comparable(plain_out, cluster.bootstrap)
    assert expected["members"] and expected["capture"]["groupConfigs"], expected["capture"].keys()
    for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        config = client_properties(tmp_path / f"{mechanism}.properties", mechanism, LAB_READER,
                                   LAB_SASL_USERS[LAB_READER])
        out = tmp_path / f"{mechanism}.json"
        code, text = run("capture", "--bootstrap-server", cluster.sasl_bootstrap, "--group", group,
                         "--command-config", str(config), "-o", str(out))
        assert code == 0, f"{mechanism}: {text}"
        assert comparable(out, cluster.sasl_bootstrap) == expected, mechanism
    # --all-groups over SASL takes the streams group too (the streams side logs in as the classic side does).
    fleet = tmp_path / "fleet"
    code, text = run("capture", "--bootstrap-server", cluster.sasl_bootstrap, "--all-groups",
                     "--command-config", str(tmp_path / "SCRAM-SHA-512.properties"), "-o", str(fleet))
    assert code == 0, text
    captured = fleet / "streams-groups" / f"{group}.streams-group.json"
    assert comparable(captured, cluster.sasl_bootstrap) == expected


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_password_is_one_clear_line(cluster: KafkaBroker, mechanism: str, tmp_path: Path) -> None:
    from tests.capture.kafka_cluster import LAB_READER

    wrong = "not-alices-password-5e6f"
    config = client_properties(tmp_path / "client.properties", mechanism, LAB_READER, wrong)
    out = tmp_path / "out.json"
    code, text = run("capture", "--bootstrap-server", cluster.sasl_bootstrap, "--group", APP,
                     "--protocol", "streams", "--command-config", str(config), "-o", str(out))
    assert code == 2, text
    assert f"SASL {mechanism} authentication as user '{LAB_READER}' failed" in text, text
    assert "Authentication failed" in text and "SASL_AUTHENTICATION_FAILED" in text, text
    assert wrong not in text and "Traceback" not in text and not out.exists()
