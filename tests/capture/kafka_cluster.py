"""One real KRaft broker for live-Kafka tests, and the few client calls the tests need around it.

The broker comes from a plain Kafka distribution at `KAFKA_HOME` (4.x; nothing but its `libs/` and
`config/server.properties` is used) and runs on free loopback ports with a temporary data directory: the
distribution itself is read-only in CI and another broker (a developer's, a parallel run's) may hold the default
ports. Its start is the distribution's own two steps: `kafka-storage format` (kafka.tools.StorageTool) on a copy of
`config/server.properties` with the lab's settings, then `kafka-server-start` (kafka.Kafka) on that file, both run
with `java -cp libs/*` directly (no script in the distribution, so that the JVM options stay the lab's).

Its overrides make consumer-group rebalances fast: no initial rebalance delay, and session timeouts down to one
second allowed, so that a crashed Streams instance is noticed within seconds instead of the default 45.

With `sasl_users`, the broker also has a SASL_PLAINTEXT listener (mechanisms PLAIN and SCRAM-SHA-256, the same users
and passwords for each; `SCRAM_SHA_512_OVERRIDES` add SCRAM-SHA-512, whose credentials are there too) and enforces
ACLs: Kafka's StandardAuthorizer with no ACL meaning no access, and `User:ANONYMOUS` as super user, so that the
PLAINTEXT and CONTROLLER listeners (the broker itself, the Streams instances, the lab's helpers) keep full access.
SCRAM credentials are written into the cluster metadata when the storage is formatted (`kafka-storage format
--add-scram`): kafka-python has no AlterUserScramCredentials, and the format step runs anyway, so this costs no
start time. `grant_acls` gives a user what it needs.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import KafkaError, TopicAlreadyExistsError
from kafka.structs import TopicPartition

from tests.capture.lab_env import require_kafka_home
from tests.capture.processes import ManagedProcess, wait_for

# Broker settings for tests: single node, and group rebalances as fast as the broker allows.
FAST_BROKER_OVERRIDES: Mapping[str, str] = {
    # A new group's first rebalance starts at once instead of waiting 3 s for more members.
    "group.initial.rebalance.delay.ms": "0",
    # The same for streams groups (KIP-1071; a broker before 4.2 ignores the name, with a warning).
    "group.streams.initial.rebalance.delay.ms": "0",
    # Lets Streams run with session.timeout.ms=2000: a SIGKILLed member is noticed in ~2 s, not 45 s.
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
}

BROKER_READY_LINE = "Kafka Server started"

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256")
SASL_LISTENER = "SASL_PLAINTEXT"
#: ``overrides`` that enable SCRAM-SHA-512 on the SASL listener too (the lab's broker leaves it off: a test of a
#: mechanism the listener does not enable uses it).
SCRAM_SHA_512_OVERRIDES: Mapping[str, str] = {
    f"listener.name.{SASL_LISTENER.lower()}.sasl.enabled.mechanisms": ",".join((*SASL_MECHANISMS, "SCRAM-SHA-512")),
    f"listener.name.{SASL_LISTENER.lower()}.scram-sha-512.sasl.jaas.config": (
        "org.apache.kafka.common.security.scram.ScramLoginModule required;"),
}
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# The lab's SASL users (fixed, test-only passwords): the reader has READ_ONLY_ACLS, the stranger no ACL at all.
LAB_READER = "alice"
LAB_STRANGER = "bob"
LAB_SASL_USERS: Mapping[str, str] = {LAB_READER: "alice-secret", LAB_STRANGER: "bob-secret"}
# What a capture needs, and all it gets: DESCRIBE on every topic and every group. That covers FindCoordinator,
# DescribeGroups, ListGroups, Metadata, ListOffsets and OffsetFetch (KafkaApis checks DESCRIBE on GROUP or TOPIC
# for each; ListGroups without DESCRIBE on the cluster lists the groups the user may describe).
READ_ONLY_ACLS: tuple[tuple[ACLOperation, ResourceType, str], ...] = (
    (ACLOperation.DESCRIBE, ResourceType.TOPIC, "*"),
    (ACLOperation.DESCRIBE, ResourceType.GROUP, "*"),
)

# What a client call may raise while the cluster is still settling (connecting, electing, loading).
RETRIABLE: tuple[type[BaseException], ...] = (KafkaError, OSError)


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports that were free a moment ago (all held open together, so no repeats)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def random_cluster_id() -> str:
    """A KRaft cluster id (a Kafka Uuid in URL-safe base64), as `kafka-storage random-uuid` prints one."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):  # Kafka's Uuid.randomUuid() rejects these too (they read as options)
            return text


@dataclass
class KafkaBroker:
    """A single KRaft broker (broker and controller in one JVM) on free loopback ports.

    `start()` blocks until the broker answers a metadata request; `stop()` sends SIGTERM, SIGKILL after
    `stop_timeout`, and deletes the temporary directory (data and log), unless `keep_dir` is set for debugging
    (TASKASSIGN_KAFKA_KEEP_DIR=1).
    """

    home: Path = field(default_factory=require_kafka_home)
    rack: str | None = "rack-a"
    overrides: Mapping[str, str] = field(default_factory=dict)
    # The broker JVM's options (kafka-server-start's KAFKA_HEAP_OPTS). C1 only: the broker reaches "started" in
    # ~3 s instead of ~5 s on two cores, and a test's load needs no optimising compiler.
    jvm_opts: str = "-Xmx512m -Xms128m -XX:TieredStopAtLevel=1"
    start_timeout: float = 60.0
    stop_timeout: float = 20.0
    keep_dir: bool = field(default_factory=lambda: os.environ.get("TASKASSIGN_KAFKA_KEEP_DIR") == "1")
    # User -> password on a SASL_PLAINTEXT listener with ACLs enforced (see the module docstring); empty: none.
    sasl_users: Mapping[str, str] = field(default_factory=dict)
    port: int = 0
    controller_port: int = 0
    sasl_port: int = 0
    workdir: Path | None = None
    process: ManagedProcess | None = None

    @property
    def bootstrap(self) -> str:
        if not self.port:
            raise RuntimeError("the broker has not been started")
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_bootstrap(self) -> str:
        """The SASL_PLAINTEXT listener's address (PLAIN and SCRAM-SHA-256, ACLs enforced)."""
        if not self.sasl_users:
            raise RuntimeError("this broker has no SASL listener (no sasl_users)")
        if not self.sasl_port:
            raise RuntimeError("the broker has not been started")
        return f"127.0.0.1:{self.sasl_port}"

    @property
    def log_path(self) -> Path:
        if self.workdir is None:
            raise RuntimeError("the broker has not been started")
        return self.workdir / "broker.log"

    def start(self) -> KafkaBroker:
        """Start the broker and wait until it serves metadata; a port taken in between gets one retry."""
        for attempt in (1, 2):
            self._launch()
            try:
                self._await_ready()
                return self
            except Exception:
                in_use = "Address already in use" in self._output()
                self.stop()
                if attempt == 2 or not in_use:
                    raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """Stop the broker (idempotent) and remove its temporary directory."""
        atexit.unregister(self.stop)
        if self.process is not None:
            self.process.stop(self.stop_timeout)
        if self.workdir is not None and not self.keep_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _launch(self) -> None:
        ports = free_ports(3 if self.sasl_users else 2)
        self.port, self.controller_port = ports[:2]
        self.sasl_port = ports[2] if self.sasl_users else 0
        self.workdir = Path(tempfile.mkdtemp(prefix="taskassign-kafka-"))
        # A run that ends without stop() still stops the broker cleanly and removes its directory (this hook runs
        # before the processes module's SIGKILL net, atexit being last in, first out).
        atexit.register(self.stop)
        config = self._write_config()
        self._format_storage(random_cluster_id(), config)
        self.process = ManagedProcess(
            "kafka-broker",
            [*self._java(self.jvm_opts.split()), "kafka.Kafka", str(config)],
            self.log_path,
        )

    def _java(self, jvm_opts: list[str]) -> list[str]:
        """`java` with the distribution's classpath and log4j2 configuration, as kafka-run-class would run it."""
        config = self.home / "config"
        names = ("log4j2.yaml", "log4j2.properties")
        log4j = next((config / name for name in names if (config / name).is_file()), None)
        return [
            os.environ.get("JAVA", "java"),
            *jvm_opts,
            *([f"-Dlog4j2.configurationFile={log4j}"] if log4j is not None else []),
            f"-Dkafka.logs.dir={self.workdir}",
            "-cp",
            str(self.home / "libs" / "*"),
        ]

    def _write_config(self) -> Path:
        """The distribution's config/server.properties with the lab's settings in place of its own (every key the
        lab sets is dropped from the copy, as is the dynamic quorum's bootstrap: the lab's quorum is static)."""
        assert self.workdir is not None
        settings = self._settings()
        dropped = {*settings, "controller.quorum.bootstrap.servers"}
        kept = [
            line
            for line in (self.home / "config" / "server.properties").read_text().splitlines()
            if line.partition("=")[0].strip() not in dropped
        ]
        config = self.workdir / "server.properties"
        config.write_text("\n".join([*kept, "", "# the live-Kafka lab's settings", *(
            f"{key}={_escape(value)}" for key, value in settings.items()
        )]) + "\n")
        return config

    def _format_storage(self, cluster_id: str, config: Path) -> None:
        """`kafka-storage format` of the data directory, with the SCRAM credentials of `sasl_users`."""
        scram = [
            arg
            for user, password in sorted(self.sasl_users.items())
            for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512")
            for arg in ("--add-scram", f"{mechanism}=[name={user},password={password}]")
        ]
        formatted = subprocess.run(
            [*self._java(["-XX:TieredStopAtLevel=1"]), "kafka.tools.StorageTool", "format", "-t", cluster_id,
             "-c", str(config), *scram],
            capture_output=True,
            text=True,
            timeout=self.start_timeout,
        )  # fmt: skip
        if formatted.returncode != 0:
            output = (formatted.stdout + formatted.stderr)[-3000:]
            raise AssertionError(f"kafka-storage format failed ({formatted.returncode}):\n{output}")

    def _settings(self) -> dict[str, str]:
        assert self.workdir is not None
        return {
            "process.roles": "broker,controller",
            "node.id": "1",
            "log.dirs": str(self.workdir / "data"),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            **FAST_BROKER_OVERRIDES,
            **({"broker.rack": self.rack} if self.rack else {}),
            **(self._sasl_settings() if self.sasl_users else {}),
            **self.overrides,
        }

    def _sasl_settings(self) -> dict[str, str]:
        """The SASL listener next to PLAINTEXT, and ACLs enforced for everyone but ANONYMOUS (PLAINTEXT)."""
        prefix = f"listener.name.{SASL_LISTENER.lower()}"
        plain_users = " ".join(f'user_{user}="{password}"' for user, password in sorted(self.sasl_users.items()))
        return {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port},"
            f"{SASL_LISTENER}://127.0.0.1:{self.sasl_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port},{SASL_LISTENER}://127.0.0.1:{self.sasl_port}",
            "listener.security.protocol.map": (
                f"CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,{SASL_LISTENER}:{SASL_LISTENER}"
            ),
            f"{prefix}.sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            f"{prefix}.plain.sasl.jaas.config": (
                f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};"
            ),
            f"{prefix}.scram-sha-256.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "authorizer.class.name": AUTHORIZER,
            "super.users": "User:ANONYMOUS",
            "allow.everyone.if.no.acl.found": "false",
        }

    def _await_ready(self) -> None:
        process = self.process
        assert process is not None

        def started() -> bool:
            if not process.alive():
                raise AssertionError(f"the Kafka broker exited with code {process.returncode()}\n{process.tail()}")
            return BROKER_READY_LINE in self._output()

        wait_for(started, timeout=self.start_timeout, what=f"'{BROKER_READY_LINE}'", details=process.tail)

        def serving() -> list[int]:
            started()  # still alive?
            return broker_ids(self.bootstrap)

        wait_for(
            serving,
            timeout=self.start_timeout,
            what=f"a metadata response from {self.bootstrap}",
            details=process.tail,
            retry_on=RETRIABLE,
        )

    def _output(self) -> str:
        return self.process.output() if self.process is not None else ""


def _escape(value: str) -> str:
    """A value as a java.util.Properties file reads it back (backslashes doubled, no line breaks)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n")


@contextlib.contextmanager
def admin_client(bootstrap: str) -> Iterator[KafkaAdminClient]:
    """A KafkaAdminClient that is always closed (an unclosed one leaks sockets, which pytest turns into errors)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="taskassign-lab", request_timeout_ms=15000)
    try:
        yield admin
    finally:
        admin.close()


def grant_acls(
    bootstrap: str,
    user: str,
    acls: Iterable[tuple[ACLOperation, ResourceType, str]] = READ_ONLY_ACLS,
    *,
    timeout: float = 30.0,
) -> None:
    """Allow `user` the given (operation, resource type, literal resource name) ACLs, through the PLAINTEXT
    listener (whose ANONYMOUS principal is a super user), and wait until the broker's authorizer has them."""
    principal = f"User:{user}"
    wanted = [
        ACL(principal, "*", operation, ACLPermissionType.ALLOW, ResourcePattern(resource, name))
        for operation, resource, name in acls
    ]
    with admin_client(bootstrap) as admin:
        result = admin.create_acls(wanted)
        if result["failed"]:
            raise AssertionError(f"create_acls failed: {result['failed']}")

    def granted() -> bool:
        query = ACLFilter(
            principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
        )  # fmt: skip
        with admin_client(bootstrap) as admin:
            found, error = admin.describe_acls(query)
        return error.errno == 0 and len(found) >= len(wanted)

    wait_for(granted, timeout=timeout, what=f"the ACLs of {principal}", retry_on=RETRIABLE)


def broker_ids(bootstrap: str) -> list[int]:
    """Node ids in the cluster's metadata (a Metadata request)."""
    with admin_client(bootstrap) as admin:
        return sorted(broker["node_id"] for broker in admin.describe_cluster()["brokers"])


def create_topics(
    bootstrap: str,
    partitions: Mapping[str, int],
    *,
    configs: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> None:
    """Create topics with the given partition counts and wait until every partition has a leader.

    A topic that exists already is accepted when its partition count matches and is an error otherwise: a
    test that silently ran on another partition count would check the wrong task set.
    """
    new = [NewTopic(name, count, 1, topic_configs=dict(configs or {})) for name, count in sorted(partitions.items())]
    with admin_client(bootstrap) as admin:
        for topic in new:
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([topic], timeout_ms=int(timeout * 1000))
    wait_for(
        lambda: _partition_counts_if_led(bootstrap, list(partitions)),
        timeout=timeout,
        what=f"leaders for every partition of {sorted(partitions)}",
        retry_on=RETRIABLE,
    )
    actual = _partition_counts_if_led(bootstrap, list(partitions)) or {}
    wrong = {name: (count, actual.get(name)) for name, count in partitions.items() if actual.get(name) != count}
    if wrong:
        raise AssertionError(f"topics exist with other partition counts (wanted, found): {wrong}")


def _partition_counts_if_led(bootstrap: str, topics: list[str]) -> dict[str, int] | None:
    """Partition counts of `topics`, or None while any topic is unknown or any partition has no leader yet."""
    with admin_client(bootstrap) as admin:
        described = admin.describe_topics(topics)
    counts = {}
    for topic in described:
        if topic["error_code"] != 0 or not topic["partitions"]:
            return None
        if any(partition["leader"] < 0 for partition in topic["partitions"]):
            return None
        counts[topic["topic"]] = len(topic["partitions"])
    return counts if set(counts) == set(topics) else None


def delete_topics(bootstrap: str, topics: Iterable[str], timeout: float = 30.0) -> None:
    """Delete topics (missing ones are fine) and wait until the metadata no longer lists them."""
    names = sorted(set(topics))
    with admin_client(bootstrap) as admin:
        existing = [name for name in names if name in set(admin.list_topics())]
        if existing:
            admin.delete_topics(existing, timeout_ms=int(timeout * 1000))

    def gone() -> bool:
        with admin_client(bootstrap) as admin:
            return not set(names) & set(admin.list_topics())

    wait_for(gone, timeout=timeout, what=f"deletion of {names}", retry_on=RETRIABLE)


Record = tuple[str | bytes | None, str | bytes | None]


def produce(bootstrap: str, topic: str, records: Iterable[Record], *, partition: int | None = None) -> int:
    """Send (key, value) records to `topic` (keys hashed to partitions as Kafka's default partitioner does) and
    wait until all are acknowledged; returns how many were sent."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="taskassign-lab-producer", acks="all")
    try:
        futures = [
            producer.send(topic, key=_encode(key), value=_encode(value), partition=partition) for key, value in records
        ]
        producer.flush(timeout=30)
        for future in futures:
            future.get(timeout=30)
        return len(futures)
    finally:
        producer.close(timeout=10)


def _encode(text: str | bytes | None) -> bytes | None:
    return text.encode() if isinstance(text, str) else text


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """The end offset of every partition of `topic` (a ListOffsets request), keyed by partition."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="taskassign-lab-offsets", enable_auto_commit=False)
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        offsets = consumer.end_offsets([TopicPartition(topic, p) for p in sorted(partitions)])
        return {tp.partition: offset for tp, offset in offsets.items()}
    finally:
        consumer.close()
