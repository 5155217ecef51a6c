"""TaskId and ProcessId: the two identifiers every assignor sorts, hashes and compares.

Both are tuple subclasses so that sorting and hashing run at C speed (assignors sort 10^5 task ids
many times), while their tuple layout reproduces Kafka's orders exactly:

* ``TaskId`` is ``(topology_name, subtopology, partition)``. Two unnamed ids compare by subtopology
  then partition; two named ids compare by name first; a named and an unnamed id cannot be compared
  (Python raises ``TypeError`` comparing ``None`` with ``str``, as Kafka throws
  ``IllegalStateException``). Names compare by code point, Java by UTF-16 unit: they differ only for
  characters outside the Basic Multilingual Plane.
* ``ProcessId`` is ``(signed msb, signed lsb, canonical text)``: Java's ``UUID.compareTo`` compares
  the two 64-bit halves as *signed* longs, so ``8...`` sorts before ``0...``.
"""

from __future__ import annotations

import binascii
import re
import sys
import uuid
from operator import mul
from typing import SupportsIndex

from taskassign.errors import ProcessIdFormatError, TaskIdFormatError

__all__ = ("LONG_MAX", "ProcessId", "TaskId", "java_string_hash", "saturated_long", "to_int32")

_INT32_MAX = 2**31 - 1
#: Java's Long.MAX_VALUE: Kafka's offsets and timestamps, and every count taskassign writes, are Java longs.
LONG_MAX = 2**63 - 1
_TASK_ID = re.compile(r"^(?:(?P<name>.+?)__)?(?P<sub>[0-9]+)_(?P<part>[0-9]+)$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


class TaskId(tuple[str | None, int, int]):
    """A task: subtopology x partition, optionally of a named topology. String form ``0_1``."""

    __slots__ = ()

    def __new__(cls, subtopology: int, partition: int, topology_name: str | None = None) -> TaskId:
        if topology_name == "":
            topology_name = None
        return tuple.__new__(cls, (topology_name, subtopology, partition))

    @property
    def subtopology(self) -> int:
        return self[1]

    @property
    def partition(self) -> int:
        return self[2]

    @property
    def topology_name(self) -> str | None:
        return self[0]

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse ``"<s>_<p>"`` or ``"<name>__<s>_<p>"``; raise TaskIdFormatError naming the text."""
        if not isinstance(text, str):
            raise TaskIdFormatError(f"task id must be a string like '0_1', got {text!r}")
        match = _TASK_ID.match(text)
        if match is None:
            raise TaskIdFormatError(
                f"task id {text!r} does not parse: expected '<subtopology>_<partition>' "
                "(non-negative integers), optionally prefixed by '<topology>__'"
            )
        sub, part = int(match["sub"]), int(match["part"])
        if sub > _INT32_MAX or part > _INT32_MAX:
            raise TaskIdFormatError(f"task id {text!r} does not parse: numbers must fit a 32-bit int")
        return cls(sub, part, match["name"])

    def __str__(self) -> str:
        name, sub, part = self
        return f"{sub}_{part}" if name is None else f"{name}__{sub}_{part}"

    def __repr__(self) -> str:
        return f"TaskId({self})"

    def __getnewargs__(self) -> tuple[int, int, str | None]:
        return (self[1], self[2], self[0])

    def java_hash(self) -> int:
        """Java's ``Objects.hash(subtopology, partition, topologyName)`` as a signed 32-bit int."""
        h = 29791 + 961 * self[1] + 31 * self[2]
        if self[0] is not None:
            h += java_string_hash(self[0])
        return to_int32(h)


class ProcessId(tuple[int, int, str]):
    """A Kafka Streams client (one KafkaStreams instance), identified by a UUID; sorts like Java."""

    __slots__ = ()

    def __new__(cls, value: str | uuid.UUID | ProcessId) -> ProcessId:
        if type(value) is str and len(value) == 36 and value[8] == value[13] == value[18] == value[23] == "-":
            # the 8-4-4-4-12 text (clients are parsed by the 10^4): its 32 digits as 16 bytes, the halves read as
            # signed longs, no regular expression or uuid.UUID run; any other text takes the checks below
            try:
                raw = _unhexlify(value.replace("-", ""))
            except ValueError:  # (binascii.Error too) a character that is no hex digit, or a dash too many
                raw = b""
            if len(raw) == 16:
                return tuple.__new__(cls, (_from_bytes(raw[:8], "big", signed=True),
                                           _from_bytes(raw[8:], "big", signed=True), value.lower()))
        if isinstance(value, ProcessId):
            return value
        if isinstance(value, uuid.UUID):
            u = value
        elif isinstance(value, str) and _UUID.fullmatch(value):
            if len(value) == 36:  # the 8-4-4-4-12 text itself (no uuid.UUID made: clients are parsed by the 10^4)
                bits = int(value.replace("-", ""), 16)
                return tuple.__new__(cls, (_to_int64(bits >> 64), _to_int64(bits & 0xFFFFFFFFFFFFFFFF), value.lower()))
            u = uuid.UUID(value)
        else:
            raise ProcessIdFormatError(
                f"process id {value!r} is not a UUID (expected 8-4-4-4-12 hex digits, "
                "e.g. '8f6b4a52-0c1e-4a43-9a34-3c2f1a0e9d11')"
            )
        msb, lsb = u.int >> 64, u.int & 0xFFFFFFFFFFFFFFFF
        return tuple.__new__(cls, (_to_int64(msb), _to_int64(lsb), str(u)))

    @classmethod
    def of_ints(cls, msb: int, lsb: int) -> ProcessId:
        """``new UUID(msb, lsb)``; Kafka's tests use ``UUID(0, n)`` as ``PID_n``."""
        return cls(uuid.UUID(int=((msb & 0xFFFFFFFFFFFFFFFF) << 64) | (lsb & 0xFFFFFFFFFFFFFFFF)))

    @property
    def id(self) -> uuid.UUID:
        return uuid.UUID(self[2])

    @property
    def msb(self) -> int:
        """Most significant 64 bits as a signed long (Java's ``getMostSignificantBits``)."""
        return self[0]

    @property
    def lsb(self) -> int:
        return self[1]

    def __str__(self) -> str:
        return self[2]

    def __repr__(self) -> str:
        return f"ProcessId({self[2]})"

    def __getnewargs__(self) -> tuple[str]:
        return (self[2],)

    def java_hash(self) -> int:
        """Java's ``UUID.hashCode``: (int)(hilo >> 32) ^ (int)hilo with hilo = msb ^ lsb."""
        hilo = (self[0] ^ self[1]) & 0xFFFFFFFFFFFFFFFF
        return to_int32((hilo >> 32) ^ (hilo & 0xFFFFFFFF))


#: 31**k mod 2**32, k = 0, 1, ... (extended on demand): String.hashCode is sum(unit[i] * 31**(n-1-i)) mod 2**32.
_POWERS_OF_31: list[int] = [1]


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units, as a signed 32-bit int (evaluated as one sum of
    products, at C speed: member and process ids are hashed by the thousand). A Java String may hold an
    unpaired surrogate and hashes it as the code unit it is; ``surrogatepass`` does the same here, so hashing
    never fails on text that a later step (the wire codecs) refuses with an error naming the field."""
    units = text.encode("ascii") if text.isascii() else memoryview(
        text.encode(_NATIVE_UTF16, "surrogatepass")).cast("H")
    n = len(units)
    powers = _POWERS_OF_31
    while len(powers) < n:
        powers.append(powers[-1] * 31 & 0xFFFFFFFF)
    return to_int32(sum(map(mul, units, reversed(powers[:n]))))


_unhexlify = binascii.unhexlify
_from_bytes = int.from_bytes
_NATIVE_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def to_int32(value: SupportsIndex) -> int:
    v = int(value) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def saturated_long(value: int) -> int:
    """A non-negative sum as a Java long: pinned at Long.MAX_VALUE when it passes it (as the leader pins an
    overflowing changelog end-offset sum), so that every count taskassign writes is one its readers, Parquet
    columns and Kafka's own types accept. Each term is a long already; only sums of many can pass it."""
    return value if value <= LONG_MAX else LONG_MAX


def _to_int64(value: int) -> int:
    v = value & 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= 1 << 63 else v
