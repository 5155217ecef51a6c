"""Consumer groups as the broker reports them, with every member's subscription and assignment as RAW bytes.

kafka-python's `KafkaAdminClient.describe_consumer_groups` (2.x) decodes both with the version-0 consumer
protocol schema: the user data survives, but whatever a newer protocol version adds after it (owned partitions,
generation, rack) is dropped, and kafka-python 3.x decodes the user data as text. A capture must see what
the Streams leader saw, byte for byte, so this module sends FindCoordinator and DescribeGroups itself through
kafka-python's `KafkaClient` (public `send` and `poll`), whose response keeps the `Bytes` fields as they came.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from kafka.client_async import KafkaClient
from kafka.errors import for_code
from kafka.protocol.admin import DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.find_coordinator import FindCoordinatorRequest

from tests.capture.kafka_cluster import RETRIABLE
from tests.capture.processes import wait_for

REQUEST_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class GroupMember:
    """One member of a classic group; `metadata` is its raw consumer-protocol Subscription, `assignment` its raw
    consumer-protocol Assignment (both empty while the group is rebalancing)."""

    member_id: str
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    """A DescribeGroups answer for one group: state (`Stable`, `PreparingRebalance`, ...) and its members."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[GroupMember, ...]


class GroupInspector:
    """A read-only connection to a cluster for group look-ups; it never joins a group or commits anything."""

    def __init__(self, bootstrap: str) -> None:
        self.client = KafkaClient(
            bootstrap_servers=bootstrap, client_id="taskassign-lab-groups", request_timeout_ms=10000
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> GroupInspector:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def find_coordinator(self, group_id: str) -> int:
        """The node id of the group's coordinator (FindCoordinator), once the client's metadata knows that node.

        Retriable answers are retried: the first FindCoordinator on a new cluster gets COORDINATOR_NOT_AVAILABLE
        while the broker creates `__consumer_offsets`.
        """
        version = self.client.api_version(FindCoordinatorRequest, max_version=2)
        request_type = FindCoordinatorRequest[version]
        request = request_type(group_id) if version == 0 else request_type(group_id, 0)

        def coordinator() -> tuple[int] | None:
            response = self._request(self._any_node(), request)
            if for_code(response.error_code).retriable:
                return None
            _raise_for(response.error_code, f"FindCoordinator({group_id!r})")
            return (int(response.coordinator_id),)

        (node_id,) = wait_for(coordinator, timeout=REQUEST_TIMEOUT_S, what=f"the coordinator of {group_id!r}")

        wait_for(lambda: node_id in self._broker_ids(), timeout=REQUEST_TIMEOUT_S, what=f"metadata for node {node_id}")
        return node_id

    def _broker_ids(self) -> list[int]:
        """The brokers in the client's metadata, fetched first if it has none yet.

        A fresh client knows only its bootstrap pseudo-node (node id `bootstrap-0`, a string), which is no broker.
        """

        def known() -> list[int] | None:
            ids = sorted(broker.nodeId for broker in self.client.cluster.brokers() if isinstance(broker.nodeId, int))
            if not ids:
                self.client.cluster.request_update()
                self.client.poll(timeout_ms=100)
            return ids or None

        return wait_for(known, timeout=REQUEST_TIMEOUT_S, what="cluster metadata")

    def describe(self, group_id: str) -> GroupDescription:
        """DescribeGroups on the group's coordinator, member subscriptions and assignments left as raw bytes.

        Retriable answers are retried (the coordinator is looked up again each time): a coordinator that has
        just been elected answers COORDINATOR_LOAD_IN_PROGRESS until it has read its `__consumer_offsets`.
        """
        version = self.client.api_version(DescribeGroupsRequest, max_version=3)
        request_type = DescribeGroupsRequest[version]
        request = (
            request_type(groups=[group_id])
            if version < 3
            else request_type(groups=[group_id], include_authorized_operations=False)
        )

        def described() -> GroupDescription | None:
            (group,) = self._request(self.find_coordinator(group_id), request).groups
            error_code, name, state, protocol_type, protocol, members = group[:6]
            if for_code(error_code).retriable:
                return None
            _raise_for(error_code, f"DescribeGroups({group_id!r})")
            return GroupDescription(
                group_id=name,
                state=state,
                protocol_type=protocol_type,
                protocol=protocol,
                members=tuple(
                    GroupMember(member_id, client_id, host, bytes(metadata or b""), bytes(assignment or b""))
                    for member_id, client_id, host, metadata, assignment in members
                ),
            )

        return wait_for(described, timeout=REQUEST_TIMEOUT_S, what=f"a DescribeGroups answer for {group_id!r}")

    def list_groups(self) -> dict[str, str]:
        """Every group on every broker (ListGroups), as {group id: protocol type}."""
        version = self.client.api_version(ListGroupsRequest, max_version=2)
        groups: dict[str, str] = {}
        for node_id in self._broker_ids():
            response = self._request(node_id, ListGroupsRequest[version]())
            _raise_for(response.error_code, "ListGroups")
            groups.update((group_id, protocol_type) for group_id, protocol_type in response.groups)
        return groups

    def _any_node(self) -> Any:
        """Some broker to ask (node ids can be 0, hence the tuple: `wait_for` waits for a truthy answer)."""

        def node() -> tuple[Any] | None:
            node_id = self.client.least_loaded_node()
            return None if node_id is None else (node_id,)

        return wait_for(node, timeout=REQUEST_TIMEOUT_S, what="a broker to send requests to")[0]

    def _request(self, node_id: Any, request: Any) -> Any:
        """Send one request and block (up to REQUEST_TIMEOUT_S) for its response."""
        if not self.client.await_ready(node_id, timeout_ms=int(REQUEST_TIMEOUT_S * 1000)):
            raise ConnectionError(f"broker node {node_id} is not reachable")
        future = self.client.send(node_id, request)
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        while not future.is_done and time.monotonic() < deadline:
            self.client.poll(timeout_ms=200, future=future)
        if not future.is_done:
            raise TimeoutError(f"no response to {type(request).__name__} from node {node_id}")
        if future.failed():
            raise future.exception
        return future.value


def _raise_for(error_code: int, what: str) -> None:
    if error_code:
        error_type = for_code(error_code)
        raise error_type(f"{what} failed: {error_type.__name__} (error code {error_code})")


def describe_group(bootstrap: str, group_id: str) -> GroupDescription:
    """One DescribeGroups on its own connection."""
    with GroupInspector(bootstrap) as inspector:
        return inspector.describe(group_id)


def wait_group_stable(
    bootstrap: str,
    group_id: str,
    members: int,
    *,
    timeout: float = 60.0,
    details: Callable[[], str] | None = None,
) -> GroupDescription:
    """Wait until the group is `Stable` with exactly `members` members, each with a non-empty assignment.

    For Kafka Streams a member is a StreamThread's consumer: instances x num.stream.threads.
    """
    with GroupInspector(bootstrap) as inspector:

        def stable() -> GroupDescription | None:
            group = inspector.describe(group_id)
            complete = group.state == "Stable" and len(group.members) == members
            return group if complete and all(member.assignment for member in group.members) else None

        return wait_for(
            stable,
            timeout=timeout,
            interval=0.2,
            what=f"group {group_id!r} to be Stable with {members} members",
            retry_on=RETRIABLE,
            details=lambda: f"last seen: {_summary(inspector, group_id)}" + (f"\n{details()}" if details else ""),
        )


def _summary(inspector: GroupInspector, group_id: str) -> str:
    try:
        group = inspector.describe(group_id)
    except Exception as error:
        return f"DescribeGroups failed: {error!r}"
    return f"state {group.state}, members {[member.client_id for member in group.members]}"


@dataclass(frozen=True)
class ConsumerSubscription:
    """A consumer-protocol Subscription (ConsumerProtocolSubscription v0-3). The user data (for Streams, a
    SubscriptionInfo) is left as bytes for the project's own decoder."""

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: tuple[tuple[str, tuple[int, ...]], ...] = ()  # v1+
    generation_id: int = -1  # v2+
    rack_id: str | None = None  # v3+


def parse_subscription(raw: bytes) -> ConsumerSubscription:
    """Decode raw Subscription bytes (big-endian, as Kafka writes them); fields of later versions are ignored."""
    reader = _Reader(raw)
    version = reader.int16()
    topics = tuple(reader.string() for _ in range(reader.int32()))
    user_data = reader.nullable_bytes()
    owned = reader.topic_partitions() if version >= 1 else ()
    generation = reader.int32() if version >= 2 else -1
    rack = reader.nullable_string() if version >= 3 else None
    return ConsumerSubscription(version, topics, user_data, owned, generation, rack)


@dataclass(frozen=True)
class ConsumerAssignment:
    """A consumer-protocol Assignment (v0-3): the partitions and the user data (for Streams, an AssignmentInfo)."""

    version: int
    partitions: tuple[tuple[str, tuple[int, ...]], ...]
    user_data: bytes | None


def parse_assignment(raw: bytes) -> ConsumerAssignment:
    """Read version, partitions and user data from raw Assignment bytes."""
    reader = _Reader(raw)
    version = reader.int16()
    partitions = reader.topic_partitions()
    return ConsumerAssignment(version, partitions, reader.nullable_bytes())


class _Reader:
    """Kafka's classic (non-flexible) wire types, read front to back; a short buffer raises ValueError."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.offset = 0

    def _take(self, size: int) -> bytes:
        if size < 0 or self.offset + size > len(self.raw):
            raise ValueError(f"truncated: {size} bytes wanted at offset {self.offset} of {len(self.raw)}")
        chunk = self.raw[self.offset : self.offset + size]
        self.offset += size
        return chunk

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def string(self) -> str:
        return self._take(self.int16()).decode()

    def nullable_string(self) -> str | None:
        length = self.int16()
        return None if length < 0 else self._take(length).decode()

    def topic_partitions(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """An array of (topic, array of int32 partitions)."""
        return tuple((self.string(), tuple(self.int32() for _ in range(self.int32()))) for _ in range(self.int32()))

    def nullable_bytes(self) -> bytes | None:
        length = self.int32()
        return None if length < 0 else self._take(length)


def _user_data_version(user_data: bytes | None, what: str) -> int:
    if not user_data or len(user_data) < 4:
        raise ValueError(f"the {what} carries no Streams user data")
    return int(struct.unpack_from(">i", user_data, 0)[0])


def subscription_info_version(raw_subscription: bytes) -> int:
    """The Kafka Streams SubscriptionInfo version: the first int32 of the subscription's user data."""
    return _user_data_version(parse_subscription(raw_subscription).user_data, "subscription")


def assignment_info_version(raw_assignment: bytes) -> int:
    """The Kafka Streams AssignmentInfo version: the first int32 of the assignment's user data."""
    return _user_data_version(parse_assignment(raw_assignment).user_data, "assignment")
