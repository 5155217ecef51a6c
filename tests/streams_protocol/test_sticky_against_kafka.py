"""The streams sticky assignor against Kafka's own ``StickyTaskAssignor`` (the driver of
benchmarks/bench_streams_java.py, compiled against ``$KAFKA_HOME/libs``) on random groups: mixed process
sizes, previous actives and standbys, reported offsets, 0-3 standbys. Marked ``kafka``; skipped with the reason
without a JDK or a Kafka with the streams assignor (4.2 or later) at ``KAFKA_HOME``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from benchmarks.bench_streams_java import JavaSide, Kafka, canonical, detect

from taskassign.streams_protocol import run_assignor
from taskassign.streams_protocol.format import write_streams_group
from tests.capture.lab_env import kafka_home
from tests.streams_protocol.test_sticky_speedup import random_group

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def kafka() -> Kafka:
    home = kafka_home()
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (`javac` and `java` on PATH)")
    if home is None:
        pytest.skip("needs KAFKA_HOME: a Kafka with KIP-1071's StickyTaskAssignor (4.2 or later)")
    found = detect(home)
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(scope="module")
def java(kafka: Kafka, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaSide]:
    side = JavaSide(kafka, tmp_path_factory.mktemp("java"))
    yield side
    side.close()


@pytest.mark.parametrize("seed", range(40))
def test_the_same_answer_as_kafka(seed: int, kafka: Kafka, java: JavaSide, tmp_path: Path) -> None:
    group = replace(random_group(seed), assignor="sticky")
    path = tmp_path / "group.streams-group.json"
    write_streams_group(group, path)
    _, expected = java.run(path, 0, 1, tmp_path / "kafka.json")
    assert canonical(run_assignor(group, kafka_line=kafka.line)) == expected
