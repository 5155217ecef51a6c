"""A loopback TCP server that plays a broker from recorded frames: each request is answered with the recorded
response of the same API and version (the one with the same body when there is one), its correlation id
rewritten to the request's. Requests it has no answer for are remembered and the connection is closed.

Recordings: ``tests/capture/data/recordings/<run>/<epoch>/frames.json`` (real Kafka 4.2 brokers; data only:
``api_key``, ``api_version``, base64 request and response frames without their size prefix).
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

RECORDINGS = Path(__file__).parent / "data" / "recordings"


@dataclass
class Frame:
    api_key: int
    api_version: int
    request: bytes
    response: bytes
    used: bool = False


@dataclass
class Exchange:
    api_key: int
    api_version: int
    answered: bool
    exact: bool = False


def request_body(frame: bytes) -> tuple[int, int, int, bytes]:
    """(api key, version, correlation id, body) of a request frame with header v1 or v2."""
    api_key, version, correlation, client_len = struct.unpack(">hhih", frame[:10])
    pos = 10 + max(0, client_len)
    flexible = (api_key == 18 and version >= 3) or _flexible(api_key, version)
    if flexible:
        pos += 1  # an empty tagged-field section (what every client sends)
    return api_key, version, correlation, frame[pos:]


def _flexible(api_key: int, version: int) -> bool:
    first = {10: 3, 16: 3, 32: 4, 3: 9, 89: 0, 2: 6, 9: 6, 44: 1}
    return api_key in first and version >= first[api_key]


def load_frames(path: Path) -> list[Frame]:
    return [Frame(f["api_key"], f["api_version"], base64.b64decode(f["request_b64"]),
                  base64.b64decode(f["response_b64"])) for f in json.loads(path.read_text())]


@dataclass
class FrameServer:
    frames: list[Frame]
    port: int = 0
    exchanges: list[Exchange] = field(default_factory=list)

    def answer(self, request: bytes) -> bytes | None:
        api_key, version, correlation, body = request_body(request)
        candidates = [f for f in self.frames if f.api_key == api_key and f.api_version == version]
        exact = [f for f in candidates if request_body(f.request)[3] == body]
        chosen = next((f for f in exact if not f.used), None) or (exact[0] if exact else None)
        if chosen is None:
            chosen = next((f for f in candidates if not f.used), None) or (candidates[0] if candidates else None)
        self.exchanges.append(Exchange(api_key, version, chosen is not None, chosen is not None and chosen in exact))
        if chosen is None:
            return None
        chosen.used = True
        return struct.pack(">i", correlation) + chosen.response[4:]

    def inexact(self) -> list[tuple[int, int]]:
        """Requests answered though no recorded request had their body (another client's choice of topics)."""
        return [(e.api_key, e.api_version) for e in self.exchanges if e.answered and not e.exact]

    def unanswered(self) -> list[tuple[int, int]]:
        return [(e.api_key, e.api_version) for e in self.exchanges if not e.answered]


def _serve(server: FrameServer, listener: socket.socket, stop: threading.Event) -> None:
    listener.settimeout(0.1)
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        threading.Thread(target=_connection, args=(server, conn), daemon=True).start()


def _connection(server: FrameServer, conn: socket.socket) -> None:
    with conn:
        while True:
            head = _exactly(conn, 4)
            if head is None:
                return
            (size,) = struct.unpack(">i", head)
            request = _exactly(conn, size)
            if request is None:
                return
            response = server.answer(request)
            if response is None:
                return
            conn.sendall(struct.pack(">i", len(response)) + response)


def _exactly(conn: socket.socket, n: int) -> bytes | None:
    chunks = b""
    while len(chunks) < n:
        try:
            chunk = conn.recv(n - len(chunks))
        except OSError:
            return None
        if not chunk:
            return None
        chunks += chunk
    return chunks


@contextmanager
def serve_frames(frames: list[Frame]) -> Iterator[FrameServer]:
    """Serve ``frames`` on a free loopback port; every address the client is sent to (the coordinator's,
    recorded as the recording proxy's) is connected to this server instead."""
    from taskassign.capture import streams_client

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = FrameServer(frames, listener.getsockname()[1])
    stop = threading.Event()
    thread = threading.Thread(target=_serve, args=(server, listener, stop), daemon=True)
    thread.start()
    original = streams_client.open_socket
    streams_client.open_socket = lambda host, port, timeout: original("127.0.0.1", server.port, timeout)
    try:
        yield server
    finally:
        streams_client.open_socket = original
        stop.set()
        thread.join(2)
        listener.close()


def recording_dirs(run: str | None = None) -> list[Path]:
    runs = [RECORDINGS / run] if run else sorted(p for p in RECORDINGS.iterdir() if p.is_dir())
    return [d for r in runs for d in sorted(r.iterdir()) if (d / "frames.json").exists()]
