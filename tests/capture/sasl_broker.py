"""A loopback stand-in for a SASL_PLAINTEXT listener: ApiVersions, SaslHandshake v1 and SaslAuthenticate v2 with
PLAIN and SCRAM-SHA-256/512 (RFC 5802, server side written from the RFC), so the streams client's SASL login runs
anywhere. FindCoordinator names ``coordinator_port`` (another such listener) when set; it answers nothing else
(it closes the connection): a test sees the requests it got in ``requests``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from taskassign.capture import kafka_codec as codec

SALT, ITERATIONS = b"taskassign-salt", 4096
APIS = {codec.API_VERSIONS: (0, 4), codec.SASL_HANDSHAKE: (0, 1), codec.SASL_AUTHENTICATE: (0, 2),
        codec.FIND_COORDINATOR: (0, 6), codec.LIST_GROUPS: (0, 5), codec.DESCRIBE_CONFIGS: (0, 4),
        codec.METADATA: (0, 12), codec.STREAMS_GROUP_HEARTBEAT: (0, 0), codec.STREAMS_GROUP_DESCRIBE: (0, 1)}
HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}


@dataclass
class SaslBroker:
    port: int
    users: dict[str, str]
    mechanisms: tuple[str, ...]
    requests: list[int] = field(default_factory=list)
    tokens: list[bytes] = field(default_factory=list)
    coordinator_port: int = 0


def _api_versions() -> bytes:
    w = codec.Writer().int16(0)
    w.compact_array(sorted(APIS.items()), lambda w, kv: w.int16(kv[0]).int16(kv[1][0]).int16(kv[1][1]).tagged_fields())
    return w.int32(0).tagged_fields().bytes()


def _authenticated(error: int, message: str | None, token: bytes) -> bytes:
    return codec.Writer().int16(error).compact_string(message).compact_bytes(token).bytes() + struct.pack(
        ">q", 0) + b"\x00"


class _Scram:
    def __init__(self, mechanism: str, users: dict[str, str]) -> None:
        self.hash, self.users = HASHES[mechanism], users
        self.name = mechanism.lower().replace("scram-", "").replace("-", "")
        self.first_bare = self.server_first = b""
        self.user = ""

    def first(self, token: bytes) -> tuple[int, str | None, bytes]:
        self.first_bare = token.split(b",", 2)[2]
        params = dict(p.split(b"=", 1) for p in self.first_bare.split(b","))
        self.user = params[b"n"].decode()
        self.server_first = (b"r=" + params[b"r"] + b"srv," + b"s=" + base64.b64encode(SALT)
                             + b",i=" + str(ITERATIONS).encode())
        return 0, None, self.server_first

    def final(self, token: bytes) -> tuple[int, str | None, bytes]:
        without_proof, _, proof = token.rpartition(b",p=")
        password = self.users.get(self.user, "\0never")
        salted = hashlib.pbkdf2_hmac(self.name, password.encode(), SALT, ITERATIONS)
        client_key = hmac.new(salted, b"Client Key", self.hash).digest()
        auth = self.first_bare + b"," + self.server_first + b"," + without_proof
        signature = hmac.new(self.hash(client_key).digest(), auth, self.hash).digest()
        if bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature, strict=True)) != client_key:
            return 58, "Authentication failed during authentication due to invalid credentials with SASL mechanism " \
                       f"SCRAM-SHA-{self.name[3:]}", b""
        server = hmac.new(hmac.new(salted, b"Server Key", self.hash).digest(), auth, self.hash).digest()
        return 0, None, b"v=" + base64.b64encode(server)


def _exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _serve_one(conn: socket.socket, broker: SaslBroker) -> None:
    mechanism = ""
    scram: _Scram | None = None
    while True:
        head = _exactly(conn, 4)
        if len(head) < 4:
            return
        (size,) = struct.unpack(">i", head)
        frame = _exactly(conn, size)
        api_key, _version, correlation, id_len = struct.unpack(">hhih", frame[:10])
        broker.requests.append(api_key)
        rest = frame[10 + id_len:]
        if api_key == codec.API_VERSIONS:
            answer = struct.pack(">i", correlation) + _api_versions()
        elif api_key == codec.SASL_HANDSHAKE:
            (n,) = struct.unpack(">h", rest[:2])
            mechanism = rest[2:2 + n].decode()
            error = 0 if mechanism in broker.mechanisms else 33
            body = codec.Writer().int16(error).int32(len(broker.mechanisms))
            for name in broker.mechanisms:
                body.string(name)
            answer = struct.pack(">i", correlation) + body.bytes()
        elif api_key == codec.SASL_AUTHENTICATE:
            reader = codec.Reader(rest, "SaslAuthenticateRequest", 2)
            reader.tagged_fields("header")
            token = reader.compact_bytes("AuthBytes") or b""
            broker.tokens.append(token)
            if mechanism == "PLAIN":
                _, user, password = token.split(b"\0")
                ok = broker.users.get(user.decode()) == password.decode()
                result = (0, None, b"") if ok else (58, "Authentication failed: Invalid username or password", b"")
            elif scram is None:
                scram = _Scram(mechanism, broker.users)
                result = scram.first(token)
            else:
                result = scram.final(token)
            answer = struct.pack(">i", correlation) + b"\x00" + _authenticated(*result)
        elif api_key == codec.FIND_COORDINATOR and broker.coordinator_port:
            found = (codec.Writer().int32(0).uvarint(2).compact_string("g").int32(2).compact_string("127.0.0.1")
                     .int32(broker.coordinator_port).int16(0).compact_string(None).tagged_fields().tagged_fields())
            answer = struct.pack(">i", correlation) + b"\x00" + found.bytes()
        else:
            return
        conn.sendall(struct.pack(">i", len(answer)) + answer)


@contextmanager
def sasl_broker(users: dict[str, str], mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
                tls: ssl.SSLContext | None = None) -> Iterator[SaslBroker]:
    """The listener on a free loopback port; SASL_SSL when ``tls`` (a server context) is given."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    broker = SaslBroker(listener.getsockname()[1], users, mechanisms)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            with suppress(OSError, ValueError, struct.error), conn:
                conn.settimeout(5)
                if tls is None:
                    _serve_one(conn, broker)
                else:
                    with tls.wrap_socket(conn, server_side=True) as wrapped:
                        _serve_one(wrapped, broker)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield broker
    finally:
        stop.set()
        thread.join(5)
        listener.close()
