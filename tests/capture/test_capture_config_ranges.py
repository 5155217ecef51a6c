"""Issue 32 point 5 on capture's side: a Streams properties file whose ``probing.rebalance.interval.ms`` would put
the probing deadline past Long.MAX_VALUE with the leader's clock is refused (exit 2, naming the file and the key),
not written into a group file taskassign itself would refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.capture.kafka_cluster import KafkaBroker
from tests.capture.test_capture_cli import run, streams_app  # noqa: F401 - the fixture, shared

pytestmark = pytest.mark.kafka

LONG_MAX = 2**63 - 1


def test_a_probing_interval_past_long_max_is_refused_not_written(kafka_cluster: KafkaBroker,
                                                                 streams_app: tuple[str, Path],  # noqa: F811
                                                                 tmp_path: Path) -> None:
    group, topology = streams_app
    config = tmp_path / "streams.properties"
    config.write_text(f"application.id={group}\nprobing.rebalance.interval.ms={LONG_MAX}\n")
    out = tmp_path / "app.group.json"
    code, text = run("capture", "--bootstrap-server", kafka_cluster.bootstrap, "--group", group, "--topology",
                     str(topology), "--streams-config", str(config), "-o", str(out))
    text = " ".join(text.split())
    assert code == 2 and "probing.rebalance.interval.ms" in text and "past Long.MAX_VALUE" in text, text
    assert not out.exists()
