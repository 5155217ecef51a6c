"""Record the frames a capture exchanges with a real broker, in the form ``frames_server`` serves them back:
``api_key``, ``api_version``, base64 ``request_b64`` and ``response_b64`` without their size prefix (the response
with its correlation id and header). Used to make ``tests/capture/data/recordings-4.4`` from a live broker.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ("recording_frames",)


@contextmanager
def recording_frames() -> Iterator[list[dict[str, Any]]]:
    """While open, every request/response pair of ``capture.streams_client`` connections is appended to the list
    yielded, in order."""
    from taskassign.capture import streams_client

    frames: list[dict[str, Any]] = []
    connection = streams_client._Connection
    send, receive = connection.send, connection.receive
    last: dict[int, bytes] = {}

    def recorded_send(self: Any, frame: bytes) -> None:
        last[id(self)] = frame
        send(self, frame)

    def recorded_receive(self: Any) -> bytes:
        response = receive(self)
        request = last.pop(id(self))
        api_key, api_version = struct.unpack(">hh", request[:4])
        frames.append({"api_key": api_key, "api_version": api_version,
                       "request_b64": base64.b64encode(request).decode("ascii"),
                       "response_b64": base64.b64encode(response).decode("ascii")})
        return response

    connection.send, connection.receive = recorded_send, recorded_receive  # type: ignore[method-assign]
    try:
        yield frames
    finally:
        connection.send, connection.receive = send, receive  # type: ignore[method-assign]
