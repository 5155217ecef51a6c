"""Fixtures of the live-Kafka lab: one broker per test run, Streams instances per test.

Tests that need them are marked `kafka`. Where Java, a Kafka distribution or kafka-python is missing, every such
test is skipped with a reason that says how to enable it. Nothing starts unless a selected test asks for it: the
broker and the compiled apps are session fixtures, created on first use. The lab's modules (which import
kafka-python) are imported by the fixtures only, so that the other tests of this directory never depend on them.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.capture.lab_env import ENABLE_HINT, lab_unavailable_reason, require_kafka_home

if TYPE_CHECKING:
    from tests.capture.kafka_cluster import KafkaBroker
    from tests.capture.streams_apps import StreamsLab


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every `kafka` test, with how to enable it, when this machine cannot run the lab."""
    kafka_items = [item for item in items if item.get_closest_marker("kafka") is not None]
    if not kafka_items:
        return
    reason = lab_unavailable_reason()
    if reason is not None:
        for item in kafka_items:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[KafkaBroker]:
    """One KRaft broker (rack `rack-a`) on free loopback ports for the whole test run.

    `bootstrap` is its PLAINTEXT listener (full access). `sasl_bootstrap` is a SASL_PLAINTEXT listener (PLAIN
    and SCRAM-SHA-256) with ACLs enforced; `sasl_users` holds its users and passwords: LAB_READER may DESCRIBE
    every topic and group (READ_ONLY_ACLS: all a capture needs), LAB_STRANGER may do nothing.
    """
    reason = lab_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    from tests.capture.kafka_cluster import LAB_READER, LAB_SASL_USERS, KafkaBroker, grant_acls

    with KafkaBroker(sasl_users=LAB_SASL_USERS) as broker:
        grant_acls(broker.bootstrap, LAB_READER)
        yield broker


@pytest.fixture(scope="session")
def lab_app_classes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """The lab's Java apps, compiled on first use only (a run without Streams instances never pays for javac)."""
    from tests.capture.streams_apps import compile_lab_apps

    def compile_once() -> Path:
        if shutil.which("javac") is None:
            pytest.skip(f"live-Kafka test skipped: `javac` is not on PATH (the lab's apps are compiled). {ENABLE_HINT}")
        return compile_lab_apps(require_kafka_home(), tmp_path_factory.mktemp("lab-classes"))

    return functools.cache(compile_once)


@pytest.fixture
def streams_lab(
    kafka_cluster: KafkaBroker, lab_app_classes: Callable[[], Path], tmp_path: Path
) -> Iterator[StreamsLab]:
    """Streams instances for one test; their state and logs live in the test's tmp_path, kept for debugging."""
    from tests.capture.streams_apps import StreamsLab

    lab = StreamsLab(
        bootstrap=kafka_cluster.bootstrap, home=require_kafka_home(), workdir=tmp_path, classes=lab_app_classes
    )
    try:
        yield lab
    finally:
        lab.close()
