"""A read-only connection to a Kafka cluster: what a capture asks, and nothing else.

Capture talks the classic group protocol's *read* requests only, through kafka-python's ``KafkaClient``
(public ``send`` / ``poll``): FindCoordinator, DescribeGroups (every member's subscription and assignment
as the raw bytes the broker stores), ListGroups, Metadata (partitions, replicas, broker racks),
ListOffsets (latest: the changelogs' end offsets) and OffsetFetch (a group's committed offsets). It
never joins a group, commits, creates or alters anything, so it can run beside a live application.

Every call runs against one deadline (``--timeout``): an unreachable cluster, a coordinator that never
loads, a broker that stops answering all end in ``ClusterUnreachableError`` within it. Kafka's error
codes become errors that say what to do (authorisation failures name the ACL that is missing).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

from taskassign.errors import CaptureAuthorizationError, CaptureError, ClusterUnreachableError

__all__ = (
    "BrokerInfo",
    "ClusterReader",
    "DescribedGroup",
    "DescribedMember",
    "GroupListing",
    "PartitionMetadata",
    "TopicMetadata",
)

T = TypeVar("T")

CLIENT_ID = "taskassign-capture"
#: How often a retriable answer (coordinator loading, leader moving) is asked again.
RETRY_BACKOFF_S = 0.2
#: Kafka's ListOffsets timestamp for "the latest offset" (the log end offset).
LATEST_TIMESTAMP = -1

# Kafka error codes capture answers specially (org.apache.kafka.common.protocol.Errors).
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
LEADER_NOT_AVAILABLE = 5
GROUP_ID_NOT_FOUND = 69
RETRIABLE = frozenset({NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
                       COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})
_ACL_HINTS = {
    GROUP_AUTHORIZATION_FAILED: "DESCRIBE on the group",
    TOPIC_AUTHORIZATION_FAILED: "DESCRIBE on the topic",
    CLUSTER_AUTHORIZATION_FAILED: "DESCRIBE on the cluster",
}


@dataclass(frozen=True, slots=True)
class DescribedMember:
    """One member as DescribeGroups reports it; ``metadata`` and ``assignment`` are the raw consumer-protocol
    Subscription and Assignment bytes (empty while the group rebalances)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class DescribedGroup:
    """A classic group: ``state`` (Stable, PreparingRebalance, CompletingRebalance, Empty, Dead),
    ``protocol_type`` (``consumer`` for Kafka Streams) and ``protocol`` (``stream``)."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[DescribedMember, ...]


@dataclass(frozen=True, slots=True)
class GroupListing:
    group_id: str
    protocol_type: str


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """A partition with its replicas' broker ids; ``racks`` are those brokers' racks (None where a broker
    has no ``broker.rack``)."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    racks: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    name: str
    partitions: tuple[PartitionMetadata, ...]


class _Deadline:
    """The time left of one capture; every wait and request takes its share from it."""

    def __init__(self, seconds: float, what: str) -> None:
        self._end = time.monotonic() + seconds
        self.seconds = seconds
        self.what = what

    def left(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def expired(self) -> bool:
        return self.left() <= 0.0


class _QuietLogging:
    """While a reader is open: kafka-python's own log lines are silenced (capture reports failures itself,
    once, as errors) except the connection errors, which are kept for the message. ``restore`` puts the
    loggers back as they were, so an embedding program's or a test's logging is left as it found it."""

    def __init__(self) -> None:
        self.connection_errors = _ConnectionErrors()
        self._kafka, self._conn = logging.getLogger("kafka"), logging.getLogger("kafka.conn")
        self._saved = (self._kafka.level, self._conn.level, self._conn.propagate)
        self._kafka.setLevel(logging.CRITICAL)
        self._conn.setLevel(logging.ERROR)
        self._conn.propagate = False
        self._conn.addHandler(self.connection_errors)
        self._restored = False

    def restore(self) -> None:
        if self._restored:
            return
        self._restored = True
        self._conn.removeHandler(self.connection_errors)
        self._kafka.setLevel(self._saved[0])
        self._conn.setLevel(self._saved[1])
        self._conn.propagate = self._saved[2]


class _ConnectionErrors(logging.Handler):
    """What kafka-python's connections logged as errors: the only place a broker's reason for closing the
    connection (a failed SASL authentication, most often) reaches the caller."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        for arg in record.args if isinstance(record.args, tuple) else ():
            if isinstance(arg, BaseException) and ("uthentication" in str(arg) or "SASL" in type(arg).__name__
                                                   or "Authentication" in type(arg).__name__):
                self.last = f"{type(arg).__name__}: {arg}"


class ClusterReader:
    """Read-only requests against one cluster, all within ``timeout`` seconds from construction.

    ``settings`` are kafka-python ``KafkaClient`` options (security: see ``capture.security``).
    """

    def __init__(self, bootstrap: str, *, timeout: float = 30.0, settings: Mapping[str, Any] | None = None) -> None:
        from kafka.client_async import KafkaClient
        from kafka.errors import KafkaError

        self._logging = _QuietLogging()
        self._connection_errors = self._logging.connection_errors
        self.bootstrap = bootstrap
        self._deadline = _Deadline(timeout, bootstrap)
        request_ms = max(1000, int(min(timeout, 30.0) * 1000))
        options = {"client_id": CLIENT_ID, "request_timeout_ms": request_ms,
                   "api_version_auto_timeout_ms": max(1000, int(timeout * 1000)), **(settings or {})}
        # kafka-python writes the detected version into config['api_version'] itself, so whether the user fixed it
        # must be remembered here: only then was the broker never asked for its ApiVersions
        self._fixed_api_version = options.get("api_version") is not None
        try:
            self._client = KafkaClient(bootstrap_servers=bootstrap, **options)
        except KafkaError as exc:
            self._logging.restore()
            raise ClusterUnreachableError(
                f"cannot reach a Kafka broker at {bootstrap} within {timeout:g} s ({_describe(exc)}); check "
                "--bootstrap-server, that the cluster is up, and the security settings of --command-config"
            ) from None
        except (ValueError, OSError) as exc:
            self._logging.restore()
            raise ClusterUnreachableError(f"cannot connect to {bootstrap}: {exc}") from None
        try:
            self._connect()
        except BaseException:
            self.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------------------

    def close(self) -> None:
        self._client.close()
        self._logging.restore()

    def __enter__(self) -> ClusterReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- requests ----------------------------------------------------------------------------------------

    def api_versions(self) -> dict[int, tuple[int, int]] | None:
        """The API versions the broker advertised in its ApiVersions answer (None when kafka-python was given a fixed
        ``api_version`` and never asked)."""
        if self._fixed_api_version:
            return None
        versions = self._client.get_api_versions()
        return None if not versions else {int(k): (int(v[0]), int(v[1])) for k, v in versions.items()}

    def brokers(self) -> tuple[BrokerInfo, ...]:
        """The cluster's brokers with their racks (from a Metadata request)."""
        return self._metadata(())[0]

    def list_groups(self) -> tuple[GroupListing, ...]:
        """Every classic group of every broker (ListGroups), sorted by group id."""
        from kafka.protocol.admin import ListGroupsRequest

        version = self._version(ListGroupsRequest, 2)
        found: dict[str, str] = {}
        for broker in self.brokers():
            response = self._request(broker.node_id, ListGroupsRequest[version](), "ListGroups")
            _check(response.error_code, "ListGroups")
            found.update((group_id, protocol_type) for group_id, protocol_type in response.groups)
        return tuple(GroupListing(g, found[g]) for g in sorted(found))

    def describe_group(self, group_id: str) -> DescribedGroup:
        """DescribeGroups on the group's coordinator; subscriptions and assignments stay raw bytes."""
        from kafka.protocol.admin import DescribeGroupsRequest

        request_types = _describe_groups_request_types(DescribeGroupsRequest)
        version = self._version(request_types, DESCRIBE_GROUPS_MAX_VERSION)
        request_type = request_types[version]
        request = (request_type(groups=[group_id]) if version < 3
                   else request_type(groups=[group_id], include_authorized_operations=False))

        def attempt() -> DescribedGroup | None:
            response = self._request(self._coordinator(group_id), request, f"DescribeGroups({group_id!r})")
            (group,) = response.groups
            error_code, name, state, protocol_type, protocol, members = group[:6]
            if error_code in RETRIABLE:
                return None
            _check(error_code, f"DescribeGroups({group_id!r})", resource=f"group {group_id!r}")
            return DescribedGroup(name, state, protocol_type, protocol, tuple(_member(m, version) for m in members))

        return self._retry(attempt, f"the coordinator of group {group_id!r} to describe it")

    def topics(self, names: Iterable[str]) -> tuple[dict[str, TopicMetadata], set[str]]:
        """Metadata of ``names``: the topics that exist, and the names the cluster does not know."""
        wanted = sorted(set(names))
        if not wanted:
            return {}, set()
        brokers, topics, missing = self._metadata(wanted)
        racks = {b.node_id: b.rack for b in brokers}
        found = {
            name: TopicMetadata(name, tuple(
                PartitionMetadata(p, leader, tuple(replicas), tuple(racks.get(r) for r in replicas))
                for p, leader, replicas in parts
            ))
            for name, parts in topics.items()
        }
        return found, missing

    def all_topic_names(self) -> tuple[str, ...]:
        """Every topic the principal may describe (a Metadata request for all topics), sorted."""
        _, topics, _ = self._metadata(None)
        return tuple(sorted(topics))

    def end_offsets(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Log end offsets (ListOffsets, latest, read-uncommitted: what the Streams leader's admin client
        asks), one request per partition leader."""
        from kafka.protocol.list_offsets import ListOffsetsRequest

        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        version = self._version(ListOffsetsRequest, 5)
        result: dict[tuple[str, int], int] = {}
        for _ in range(5):
            _, topics, _missing = self._metadata(sorted({t for t, _ in wanted}))
            leaders = {(t, p): leader for t, parts in topics.items() for p, leader, _ in parts}
            by_leader: dict[int, list[tuple[str, int]]] = {}
            for tp in wanted:
                if tp not in result and tp in leaders:
                    by_leader.setdefault(leaders[tp], []).append(tp)
            retry = False
            for leader, tps in sorted(by_leader.items()):
                response = self._request(leader, _list_offsets_request(ListOffsetsRequest, version, tps),
                                         "ListOffsets")
                for topic, parts in response.topics:
                    for part in parts:
                        partition, error_code = part[0], part[1]
                        offset = (part[2][0] if part[2] else -1) if version == 0 else part[3]
                        if error_code in RETRIABLE:
                            retry = True
                            continue
                        _check(error_code, f"ListOffsets({topic}-{partition})", resource=f"topic {topic!r}")
                        result[(topic, partition)] = int(offset)
            if not retry:
                break
            time.sleep(RETRY_BACKOFF_S)
        return result

    def committed_offsets(self, group_id: str, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The group's committed offsets (OffsetFetch); partitions without a commit are left out."""
        from kafka.protocol.commit import OffsetFetchRequest

        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        version = self._version(OffsetFetchRequest, 5)
        by_topic: dict[str, list[int]] = {}
        for topic, partition in wanted:
            by_topic.setdefault(topic, []).append(partition)

        def attempt() -> dict[tuple[str, int], int] | None:
            request = OffsetFetchRequest[version](group_id, sorted(by_topic.items()))
            response = self._request(self._coordinator(group_id), request, f"OffsetFetch({group_id!r})")
            top_error = getattr(response, "error_code", 0)
            if top_error in RETRIABLE:
                return None
            _check(top_error, f"OffsetFetch({group_id!r})", resource=f"group {group_id!r}")
            found: dict[tuple[str, int], int] = {}
            for topic, parts in response.topics:
                for part in parts:
                    partition, offset, error_code = part[0], part[1], part[-1]
                    if error_code in RETRIABLE:
                        return None
                    _check(error_code, f"OffsetFetch({topic}-{partition})", resource=f"topic {topic!r}")
                    if offset >= 0:
                        found[(topic, partition)] = int(offset)
            return found

        return self._retry(attempt, f"the committed offsets of group {group_id!r}")

    # -- plumbing ----------------------------------------------------------------------------------------

    def _connect(self) -> None:
        """One connection made and authenticated before any request (a refused login shows here, with the
        broker's reason, instead of as an unknown protocol version later)."""
        node = self._any_node()
        self._request_ready(node, "connecting")

    def _version(self, request_types: Any, max_version: int) -> int:
        """The highest version of a request both sides speak."""
        from kafka.errors import KafkaError

        try:
            version: int = self._client.api_version(request_types, max_version=max_version)
        except KafkaError as exc:
            name = request_types[0].__name__.split("_")[0]
            raise CaptureError(f"the broker at {self.bootstrap} does not answer {name} in any version this client "
                               f"speaks ({_describe(exc)})") from None
        return version

    def _metadata(
        self, topics: Sequence[str] | None
    ) -> tuple[tuple[BrokerInfo, ...], dict[str, list[tuple[int, int, list[int]]]], set[str]]:
        """One Metadata request: brokers, and for ``topics`` (empty: no topic, None: every topic) their
        partitions as (partition, leader, replicas); unknown topics are returned apart, leaderless ones
        retried."""
        from kafka.protocol.metadata import MetadataRequest

        version = self._version(MetadataRequest, 8)

        def attempt() -> tuple[tuple[BrokerInfo, ...], dict[str, list[tuple[int, int, list[int]]]], set[str]] | None:
            request = _metadata_request(MetadataRequest, version, None if topics is None else list(topics))
            response = self._request(self._any_node(), request, "Metadata")
            brokers = tuple(sorted((BrokerInfo(b[0], b[1], b[2], b[3] if len(b) > 3 else None)
                                    for b in response.brokers), key=lambda b: b.node_id))
            found: dict[str, list[tuple[int, int, list[int]]]] = {}
            missing: set[str] = set()
            for entry in response.topics:
                error_code, name, parts = entry[0], entry[1], entry[2] if version == 0 else entry[3]
                if error_code == UNKNOWN_TOPIC_OR_PARTITION:
                    missing.add(name)
                    continue
                if error_code in RETRIABLE:
                    return None
                _check(error_code, f"Metadata({name})", resource=f"topic {name!r}")
                rows = []
                for part in parts:
                    part_error, partition, leader, replicas = part[0], part[1], part[2], part[4 if version >= 7 else 3]
                    if part_error in RETRIABLE and part_error != LEADER_NOT_AVAILABLE:
                        return None
                    rows.append((int(partition), int(leader), [int(r) for r in replicas]))
                found[name] = sorted(rows)
            return brokers, found, missing

        return self._retry(attempt, "cluster metadata")

    def _coordinator(self, group_id: str) -> int:
        from kafka.protocol.find_coordinator import FindCoordinatorRequest

        version = self._version(FindCoordinatorRequest, 2)
        request_type = FindCoordinatorRequest[version]
        request = request_type(group_id) if version == 0 else request_type(group_id, 0)

        def attempt() -> tuple[int] | None:
            response = self._request(self._any_node(), request, f"FindCoordinator({group_id!r})")
            if response.error_code in RETRIABLE:
                return None
            _check(response.error_code, f"FindCoordinator({group_id!r})", resource=f"group {group_id!r}")
            return (int(response.coordinator_id),)

        (node,) = self._retry(attempt, f"the coordinator of group {group_id!r}")
        return node

    def _any_node(self) -> Any:
        def attempt() -> tuple[Any] | None:
            node = self._client.least_loaded_node()
            if node is None:
                self._client.poll(timeout_ms=100)
                return None
            return (node,)

        return self._retry(attempt, "a broker to ask")[0]

    def _retry(self, attempt: Callable[[], T | None], what: str) -> T:
        while True:
            value = attempt()
            if value is not None:
                return value
            if self._deadline.expired():
                raise ClusterUnreachableError(f"gave up waiting for {what} at {self.bootstrap} after "
                                              f"{self._deadline.seconds:g} s (--timeout)")
            time.sleep(min(RETRY_BACKOFF_S, self._deadline.left()))

    def _request_ready(self, node_id: Any, what: str) -> None:
        """Wait (within the deadline) until ``node_id`` is connected and authenticated."""
        from kafka.errors import KafkaError

        left_ms = int(self._deadline.left() * 1000)
        reason = ""
        try:
            ready = left_ms > 0 and self._client.await_ready(node_id, timeout_ms=left_ms)
        except KafkaError as failure:
            ready, reason = False, _describe(failure)
        if not ready:
            said = self._connection_errors.last
            why = f": {said}; check the credentials in --command-config" if said else f" ({reason})" if reason else ""
            raise ClusterUnreachableError(f"broker {node_id} of {self.bootstrap} did not accept a connection for "
                                          f"{what} within {self._deadline.seconds:g} s (--timeout){why}")

    def _request(self, node_id: Any, request: Any, what: str) -> Any:
        """Send one request and wait for its answer within the deadline."""
        from kafka.errors import KafkaError

        self._request_ready(node_id, what)
        future = self._client.send(node_id, request)
        while not future.is_done and not self._deadline.expired():
            self._client.poll(timeout_ms=min(200, max(1, int(self._deadline.left() * 1000))), future=future)
        if not future.is_done:
            raise ClusterUnreachableError(f"no answer to {what} from broker {node_id} within "
                                          f"{self._deadline.seconds:g} s (--timeout)")
        if future.failed():
            exc = future.exception
            if isinstance(exc, KafkaError):
                raise ClusterUnreachableError(f"{what} failed at broker {node_id}: {_describe(exc)}") from None
            raise ClusterUnreachableError(f"{what} failed at broker {node_id}: {exc}") from None
        return future.value


#: DescribeGroups v4 (KIP-345) adds each member's ``group_instance_id``: a static member is told apart only from
#: v4 on. v5 is v4 in the flexible encoding, which kafka-python does not speak; v4 is what this client asks for
#: whenever the broker has it (every broker since Kafka 2.4).
DESCRIBE_GROUPS_MAX_VERSION = 4


def _describe_groups_request_types(base: Sequence[Any]) -> list[Any]:
    """kafka-python's DescribeGroups v0-v3 and a v4 (its request is v3's; its response adds the instance id)."""
    from kafka.protocol.api import Request, Response
    from kafka.protocol.types import Array, BitField, Boolean, Bytes, Int16, Int32, Schema, String

    class DescribeGroupsResponseV4(Response):  # type: ignore[misc]
        API_KEY = 15
        API_VERSION = 4
        SCHEMA = Schema(
            ("throttle_time_ms", Int32),
            ("groups", Array(
                ("error_code", Int16), ("group", String("utf-8")), ("state", String("utf-8")),
                ("protocol_type", String("utf-8")), ("protocol", String("utf-8")),
                ("members", Array(
                    ("member_id", String("utf-8")), ("group_instance_id", String("utf-8")),
                    ("client_id", String("utf-8")), ("client_host", String("utf-8")),
                    ("member_metadata", Bytes), ("member_assignment", Bytes))),
                ("authorized_operations", BitField))))

    class DescribeGroupsRequestV4(Request):  # type: ignore[misc]
        API_KEY = 15
        API_VERSION = 4
        RESPONSE_TYPE = DescribeGroupsResponseV4
        SCHEMA = Schema(("groups", Array(String("utf-8"))), ("include_authorized_operations", Boolean))

    return [*base[:4], DescribeGroupsRequestV4]


def _member(entry: Sequence[Any], version: int) -> DescribedMember:
    if version >= 4:
        member_id, instance_id, client_id, host, metadata, assignment = entry[:6]
    else:
        member_id, client_id, host, metadata, assignment = entry[:5]
        instance_id = None
    return DescribedMember(member_id, instance_id, client_id, host, bytes(metadata or b""), bytes(assignment or b""))


def _metadata_request(request_types: Any, version: int, topics: list[str] | None) -> Any:
    request_type = request_types[version]
    if topics is None and version == 0:
        topics = []  # version 0 spells "every topic" as an empty list
    if version >= 8:
        return request_type(topics=topics, allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                            include_topic_authorized_operations=False)
    if version >= 4:
        return request_type(topics=topics, allow_auto_topic_creation=False)
    return request_type(topics=topics)


def _list_offsets_request(request_types: Any, version: int, partitions: list[tuple[str, int]]) -> Any:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    request_type = request_types[version]
    topics: list[tuple[str, list[tuple[int, ...]]]]
    if version >= 4:
        topics = [(t, [(p, -1, LATEST_TIMESTAMP) for p in ps]) for t, ps in sorted(by_topic.items())]
    elif version >= 1:
        topics = [(t, [(p, LATEST_TIMESTAMP) for p in ps]) for t, ps in sorted(by_topic.items())]
    else:
        topics = [(t, [(p, LATEST_TIMESTAMP, 1) for p in ps]) for t, ps in sorted(by_topic.items())]
    if version >= 2:
        return request_type(-1, 0, topics)
    return request_type(-1, topics)


def _check(error_code: int, what: str, *, resource: str = "") -> None:
    """Raise the capture error for a Kafka error code (0: nothing)."""
    if not error_code:
        return
    from kafka.errors import for_code

    name = for_code(error_code).__name__.removesuffix("Error")
    if error_code in _ACL_HINTS:
        raise CaptureAuthorizationError(
            f"{what}: not authorised ({name}, error code {error_code}); the capture's principal needs "
            f"{_ACL_HINTS[error_code]}{f' ({resource})' if resource else ''} (docs/capture.md lists every ACL)")
    raise CaptureError(f"{what} failed: {name} (Kafka error code {error_code})")


def _describe(exc: BaseException) -> str:
    text = str(exc)
    name = type(exc).__name__
    return name if not text or text == name else f"{name}: {text}"
