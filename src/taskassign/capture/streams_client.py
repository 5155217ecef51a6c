"""A small read-only Kafka client for streams groups (KIP-1071): raw frames over a socket, with the exact
codec of ``capture.kafka_codec``, because kafka-python 2.x does not know StreamsGroupDescribe (api key 89).

It sends only reads: ApiVersions, FindCoordinator, StreamsGroupDescribe, ListGroups, DescribeConfigs (the
GROUP resource) and Metadata. It never joins a group, commits or alters anything. Every call runs against
one deadline (``--timeout``). PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners are spoken; SASL with PLAIN
and SCRAM-SHA-256/512 (the credentials of ``sasl.jaas.config``, as the classic capture): every connection
authenticates first, SaslHandshake v1 then SaslAuthenticate v2 (KIP-152), the SCRAM exchange by kafka-python's
``ScramClient`` (RFC 5802). GSSAPI and OAUTHBEARER are refused with a message (the classic capture speaks them).

Connections are made through ``open_socket`` (one per broker address; the coordinator's when it is another
broker). Versions are negotiated from the broker's ApiVersions answer: each request in the one version this
codec speaks (StreamsGroupDescribe: the highest of v0/v1 the broker offers).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from taskassign.capture import kafka_codec as codec
from taskassign.capture.broker_line import broker_line, streams_protocol_versions
from taskassign.capture.streams_sasl import SaslLogin, sasl_login
from taskassign.errors import CaptureAuthorizationError, CaptureError, ClientConfigError, ClusterUnreachableError

__all__ = ("CLIENT_ID", "StreamsClient", "open_socket")

CLIENT_ID = "taskassign-capture"
SOFTWARE_NAME, SOFTWARE_VERSION = "taskassign", "1.0"
MAX_FRAME = 64 * 1024 * 1024
RETRY_BACKOFF_S = 0.2
#: The one version of each request this client speaks, and the oldest a broker must offer.
VERSIONS = {
    codec.FIND_COORDINATOR: (4, 6),
    codec.LIST_GROUPS: (5, 5),
    codec.DESCRIBE_CONFIGS: (4, 4),
    codec.METADATA: (12, 12),
    codec.STREAMS_GROUP_DESCRIBE: (0, 1),
}
NAMES = {codec.FIND_COORDINATOR: "FindCoordinator", codec.LIST_GROUPS: "ListGroups",
         codec.DESCRIBE_CONFIGS: "DescribeConfigs", codec.METADATA: "Metadata",
         codec.STREAMS_GROUP_DESCRIBE: "StreamsGroupDescribe", codec.API_VERSIONS: "ApiVersions",
         codec.SASL_HANDSHAKE: "SaslHandshake", codec.SASL_AUTHENTICATE: "SaslAuthenticate"}

# Kafka error codes (org.apache.kafka.common.protocol.Errors) this client answers specially.
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR = 14, 15, 16
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
UNSUPPORTED_VERSION, INVALID_REQUEST, GROUP_ID_NOT_FOUND = 35, 42, 69
RETRIABLE = frozenset({COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})
ERROR_NAMES = {
    14: "COORDINATOR_LOAD_IN_PROGRESS", 15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR",
    24: "INVALID_GROUP_ID", 29: "TOPIC_AUTHORIZATION_FAILED", 30: "GROUP_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED", 35: "UNSUPPORTED_VERSION", 42: "INVALID_REQUEST", 69: "GROUP_ID_NOT_FOUND",
}
_ACL_HINTS = {GROUP_AUTHORIZATION_FAILED: "DESCRIBE on the group", TOPIC_AUTHORIZATION_FAILED: "DESCRIBE on the topic",
              CLUSTER_AUTHORIZATION_FAILED: "DESCRIBE_CONFIGS on the group"}


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"error code {code}")


def check_error(code: int, what: str, *, resource: str = "", message: str | None = None,
                acl: str | None = None) -> None:
    """Raise the capture error for a Kafka error code (0: nothing); ``acl`` names the operation an
    authorisation failure needs when it is not the code's usual one."""
    if not code:
        return
    said = f": {message}" if message else ""
    if code in _ACL_HINTS:
        raise CaptureAuthorizationError(
            f"{what}: not authorised ({error_name(code)}, error code {code}){said}; the capture's principal needs "
            f"{acl or _ACL_HINTS[code]}{f' ({resource})' if resource else ''} (docs/capture.md lists every ACL)")
    raise CaptureError(f"{what} failed: {error_name(code)} (Kafka error code {code}){said}")


def open_socket(host: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to one broker (tests replace this to serve recorded frames)."""
    return socket.create_connection((host, port), timeout=timeout)


def _split(address: str) -> tuple[str, int]:
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise CaptureError(f"--bootstrap-server {address!r}: expected HOST:PORT")
    return host.strip("[]") or "localhost", int(port)


class _Connection:
    def __init__(self, host: str, port: int, sock: socket.socket) -> None:
        self.host, self.port, self.sock = host, port, sock

    def send(self, frame: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)

    def receive(self) -> bytes:
        (size,) = struct.unpack(">i", self._exactly(4))
        if size < 4 or size > MAX_FRAME:
            raise ClusterUnreachableError(f"broker {self.host}:{self.port} sent a frame of {size} bytes: not Kafka's "
                                          "protocol (is it a Kafka listener, with the security.protocol configured?)")
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(left)
            if not chunk:
                raise ClusterUnreachableError(f"broker {self.host}:{self.port} closed the connection (a "
                                              "security protocol other than the one configured, or a refused login?)")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


class StreamsClient:
    """Read-only requests against one cluster, all within ``timeout`` seconds from construction.

    ``settings``: the kafka-python settings of ``--command-config`` (``capture.security``); only
    ``security_protocol`` (with ``ssl_context`` for SSL and SASL_SSL), the SASL login (``sasl_mechanism``,
    ``sasl_plain_username``, ``sasl_plain_password``: ``capture.streams_sasl``) and ``client_id`` are used.
    """

    def __init__(self, bootstrap: str, *, timeout: float = 30.0, settings: Mapping[str, Any] | None = None) -> None:
        settings = dict(settings or {})
        self.bootstrap = bootstrap
        self.timeout = timeout
        self._end = time.monotonic() + timeout
        protocol = str(settings.get("security_protocol", "PLAINTEXT")).upper()
        if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
            raise ClientConfigError("--command-config", (("security.protocol", f"{protocol}: capturing a streams group "
                                    "speaks PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners only"),))
        tls = protocol in ("SSL", "SASL_SSL")
        self._ssl: ssl.SSLContext | None = settings.get("ssl_context") if tls else None
        if tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        self._sasl: SaslLogin | None = sasl_login(settings) if protocol.startswith("SASL_") else None
        self.client_id = str(settings.get("client_id") or CLIENT_ID)
        self._correlation = 0
        self._connections: dict[tuple[str, int], _Connection] = {}
        self._bootstrap = _split(bootstrap)
        try:
            self.api_versions = self._fetch_api_versions()
        except BaseException:
            self.close()
            raise
        #: What the ApiVersions answer says of the broker's line, and the one line its assignor is replayed as.
        self.broker_line = broker_line(self.api_versions.ranges)
        self.release_line = self.broker_line.nearest

    # -- lifecycle ---------------------------------------------------------------------------------------

    def close(self) -> None:
        for conn in self._connections.values():
            with contextlib.suppress(OSError):
                conn.sock.close()
        self._connections.clear()

    def __enter__(self) -> StreamsClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- what the broker speaks --------------------------------------------------------------------------

    def version(self, api_key: int) -> int:
        """The version of ``api_key`` to send: the highest both sides speak; CaptureError if none."""
        low, high = VERSIONS[api_key]
        offered = self.api_versions.ranges.get(api_key)
        name = NAMES[api_key]
        if offered is None:
            raise CaptureError(f"the broker at {self.bootstrap} does not answer {name} (api key {api_key} is not in "
                               "its ApiVersions answer)")
        chosen = min(high, offered[1])
        if chosen < max(low, offered[0]):
            raise CaptureError(f"the broker at {self.bootstrap} answers {name} v{offered[0]}-v{offered[1]}; "
                               f"taskassign speaks v{low}-v{high} (a broker older than Kafka 4.1?)")
        return chosen

    def streams_describe_version(self) -> int:
        """StreamsGroupDescribe's version, or the clear error of a broker without the streams protocol."""
        versions = streams_protocol_versions(self.api_versions.ranges)
        if versions is None:
            line = f" ({self.broker_line.description} by its ApiVersions)" if self.release_line else ""
            raise CaptureError(
                f"the broker at {self.bootstrap}{line} does not speak the streams rebalance protocol (KIP-1071): "
                "StreamsGroupDescribe (api key 89) is not in its ApiVersions answer. Streams groups need Kafka 4.1+ "
                "(4.2+ by default); on 4.1 enable it with group.coordinator.rebalance.protocols=classic,consumer,"
                "streams (and unstable.api.versions.enable=true)")
        return self.version(codec.STREAMS_GROUP_DESCRIBE)

    # -- requests ----------------------------------------------------------------------------------------

    def request(self, api_key: int, body: bytes, *, address: tuple[str, int] | None = None,
                version: int | None = None) -> tuple[int, bytes]:
        """Send one request (header v2) and return (version, response body after header v1)."""
        chosen = self.version(api_key) if version is None else version
        return chosen, self._exchange(address or self._bootstrap, api_key, chosen, body, flexible_response=True)

    def coordinator(self, group_id: str) -> tuple[str, int]:
        """The address of the group's coordinator (FindCoordinator, retried while it loads)."""
        while True:
            version, body = self.request(codec.FIND_COORDINATOR, codec.encode_find_coordinator(group_id))
            answered = codec.decode_find_coordinator(body, version)
            if len(answered) != 1:
                raise CaptureError(f"FindCoordinator({group_id!r}) answered {len(answered)} coordinators, not 1")
            found = answered[0]
            if found.error_code not in RETRIABLE:
                check_error(found.error_code, f"FindCoordinator({group_id!r})", resource=f"group {group_id!r}",
                            message=found.error_message)
                return found.host, found.port
            self._backoff(f"the coordinator of group {group_id!r}")

    def list_groups(self, types: tuple[str, ...] = ()) -> list[codec.ListedGroup]:
        version, body = self.request(codec.LIST_GROUPS, codec.encode_list_groups(types))
        error, groups = codec.decode_list_groups(body, version)
        check_error(error, "ListGroups", resource="the cluster")
        return sorted(groups, key=lambda g: g.group_id)

    def describe_streams_group(self, group_id: str, address: tuple[str, int]) -> codec.StreamsDescribedGroup:
        version = self.streams_describe_version()
        while True:
            _, body = self.request(codec.STREAMS_GROUP_DESCRIBE,
                                   codec.encode_streams_group_describe(group_id, version), address=address,
                                   version=version)
            groups = codec.decode_streams_group_describe(body, version)
            if len(groups) != 1:
                raise CaptureError(f"StreamsGroupDescribe({group_id!r}) answered {len(groups)} groups, not 1")
            if groups[0].error_code not in RETRIABLE:
                return groups[0]
            self._backoff(f"the coordinator of group {group_id!r} to describe it")

    def group_configs(self, group_id: str) -> codec.GroupConfigs:
        version, body = self.request(codec.DESCRIBE_CONFIGS, codec.encode_describe_configs(group_id))
        return codec.decode_describe_configs(body, version)

    def metadata(self, topics: list[str]) -> tuple[dict[int, str | None], list[codec.MetadataTopic]]:
        version, body = self.request(codec.METADATA, codec.encode_metadata(topics))
        return codec.decode_metadata(body, version)

    # -- plumbing ----------------------------------------------------------------------------------------

    def _left(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def _backoff(self, what: str) -> None:
        if self._left() <= 0:
            raise ClusterUnreachableError(f"gave up waiting for {what} at {self.bootstrap} after {self.timeout:g} s "
                                          "(--timeout)")
        time.sleep(min(RETRY_BACKOFF_S, self._left()))

    def _fetch_api_versions(self) -> codec.ApiVersions:
        body = self._exchange(self._bootstrap, codec.API_VERSIONS, 3,
                              codec.encode_api_versions(SOFTWARE_NAME, SOFTWARE_VERSION), flexible_response=False)
        answer = codec.decode_api_versions(body, 3)
        if answer.error_code == UNSUPPORTED_VERSION:
            raise CaptureError(f"the broker at {self.bootstrap} does not speak ApiVersions v3 (Kafka older than 2.4): "
                               "it has no streams rebalance protocol (KIP-1071 needs Kafka 4.1+)")
        check_error(answer.error_code, "ApiVersions")
        return answer

    def _connection(self, address: tuple[str, int]) -> _Connection:
        conn = self._connections.get(address)
        if conn is not None:
            return conn
        host, port = address
        if self._left() <= 0:
            raise ClusterUnreachableError(f"no time left to connect to {host}:{port} (--timeout {self.timeout:g} s)")
        try:
            sock = open_socket(host, port, self._left())
            if self._ssl is not None:
                sock = self._ssl.wrap_socket(sock, server_hostname=host)
        except (OSError, ssl.SSLError) as exc:
            raise ClusterUnreachableError(
                f"cannot reach a Kafka broker at {host}:{port} within {self.timeout:g} s ({exc}); check "
                "--bootstrap-server, that the cluster is up, and the security settings of --command-config") from None
        conn = _Connection(host, port, sock)
        if self._sasl is not None:
            try:
                self._authenticate(conn, self._sasl)
            except BaseException:
                with contextlib.suppress(OSError):
                    sock.close()
                raise
        self._connections[address] = conn
        return conn

    def _authenticate(self, conn: _Connection, login: SaslLogin) -> None:
        """As Kafka's Java client: ApiVersions (answered before authentication), SaslHandshake v1, then the
        mechanism's tokens in SaslAuthenticate v2, before any other request."""
        body = self._roundtrip(conn, codec.API_VERSIONS, 3, codec.encode_api_versions(SOFTWARE_NAME, SOFTWARE_VERSION),
                               flexible_response=False)
        offered = codec.decode_api_versions(body, 3).ranges
        for api_key, version in ((codec.SASL_HANDSHAKE, 1), (codec.SASL_AUTHENTICATE, 2)):
            low, high = offered.get(api_key, (0, -1))
            if not low <= version <= high:
                raise CaptureError(f"the broker at {conn.host}:{conn.port} does not answer {NAMES[api_key]} "
                                   f"v{version} (Kafka older than 2.5): it has no streams rebalance protocol "
                                   "(KIP-1071 needs Kafka 4.1+)")
        body = self._roundtrip(conn, codec.SASL_HANDSHAKE, 1, codec.encode_sasl_handshake(login.mechanism),
                               flexible_request=False, flexible_response=False)
        error, enabled = codec.decode_sasl_handshake(body, 1)
        login.check_handshake(error, enabled, f"{conn.host}:{conn.port}")
        exchange = login.exchange(f"{conn.host}:{conn.port}")
        token = next(exchange)
        while True:
            body = self._roundtrip(conn, codec.SASL_AUTHENTICATE, 2, codec.encode_sasl_authenticate(token))
            answer = codec.decode_sasl_authenticate(body, 2)
            login.check_answer(answer, f"{conn.host}:{conn.port}")
            try:
                token = exchange.send(answer.auth_bytes)
            except StopIteration:
                return

    def _roundtrip(self, conn: _Connection, api_key: int, version: int, body: bytes, *, flexible_request: bool = True,
                   flexible_response: bool = True) -> bytes:
        """One request and its answer on ``conn``: request header v2 (v1 if not ``flexible_request``), response
        header v1 (v0 if not ``flexible_response``: ApiVersions' answer, SaslHandshake's)."""
        self._correlation += 1
        correlation = self._correlation
        what = f"{NAMES.get(api_key, api_key)} v{version}"
        header = codec.request_header if flexible_request else codec.request_header_v1
        try:
            conn.sock.settimeout(max(0.001, self._left()))
            conn.send(header(api_key, version, correlation, self.client_id) + body)
            frame = conn.receive()
        except TimeoutError:
            raise ClusterUnreachableError(f"no answer to {what} from {conn.host}:{conn.port} within "
                                          f"{self.timeout:g} s (--timeout)") from None
        except OSError as exc:
            raise ClusterUnreachableError(f"{what} failed at {conn.host}:{conn.port}: {exc}") from None
        (answered,) = struct.unpack(">i", frame[:4])
        if answered != correlation:
            raise ClusterUnreachableError(f"{what}: {conn.host}:{conn.port} answered correlation id {answered}, "
                                          f"expected {correlation}")
        if not flexible_response:
            return frame[4:]
        reader = codec.Reader(frame, f"{NAMES.get(api_key, api_key)}Response header", version)
        reader.pos = 4
        reader.tagged_fields("ResponseHeader")
        return frame[reader.pos:]

    def _exchange(self, address: tuple[str, int], api_key: int, version: int, body: bytes, *,
                  flexible_response: bool) -> bytes:
        conn = self._connection(address)
        try:
            return self._roundtrip(conn, api_key, version, body, flexible_response=flexible_response)
        except ClusterUnreachableError:
            self._connections.pop(address, None)
            with contextlib.suppress(OSError):
                conn.sock.close()
            raise
