"""Reading and writing Kafka's big-endian wire primitives, and message field tables.

Every message is described by a declarative table of ``Field``s (the attribute it fills, the
versions it exists in, its codec), in the spirit of Kafka's generated ``*Data.json`` schemas. One
generic loop reads or writes any table, so each message module is its table plus a thin
encode/decode pair.

Errors carry the path of the field and the byte offset: a codec raises ``FieldProblem(offset,
reason)``, and arrays, structs and tables prepend their part of the path while it propagates (no
cost on the happy path). The message module turns it into ``DecodeError`` / ``EncodeError``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self, TypeVar

from taskassign.errors import DecodeError, EncodeError
from taskassign.ids import ProcessId, TaskId

__all__ = (
    "ANY_VERSION_ABOVE",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "JCHARS",
    "JUTF",
    "KBYTES",
    "KSTRING",
    "NULLABLE_KBYTES",
    "NULLABLE_KSTRING",
    "UTF8_KBYTES",
    "UTF8_KBYTES_EMPTY_IS_NONE",
    "UUID",
    "Array",
    "Codec",
    "Field",
    "FieldProblem",
    "Reader",
    "Struct",
    "Writer",
    "decode_message",
    "encode_message",
    "field",
    "join_path",
    "read_fields",
    "read_version",
    "task_id",
    "unnamed_parts",
    "write_fields",
)

ANY_VERSION_ABOVE = 2**31 - 1
T = TypeVar("T")


class FieldProblem(Exception):
    """A problem at byte ``offset``; ``path`` grows towards the message root as it propagates."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason
        self.path: list[str] = []

    def under(self, part: str) -> FieldProblem:
        self.path.insert(0, part)
        return self


def join_path(parts: Iterable[str]) -> str:
    """``["a", "[2]", "b"]`` -> ``a[2].b``."""
    out = ""
    for part in parts:
        out += part if part.startswith("[") or not out else "." + part
    return out or "(message)"


_I8, _I16, _U16, _I32, _I64 = (struct.Struct(f) for f in (">b", ">h", ">H", ">i", ">q"))
_UUID = struct.Struct(">qq")


class Reader:
    """A cursor over bytes; ``base`` is added to offsets so nested messages report outer offsets.
    ``version`` is the message version once read (for error messages)."""

    __slots__ = ("base", "buf", "pos", "version")

    def __init__(self, data: bytes, base: int = 0) -> None:
        self.buf = bytes(data)
        self.pos = 0
        self.base = base
        self.version: int | None = None

    @property
    def offset(self) -> int:
        return self.base + self.pos

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def need(self, n: int, what: str) -> None:
        if n > len(self.buf) - self.pos:
            left = len(self.buf) - self.pos
            raise FieldProblem(self.offset, f"{what} needs {n} byte{'s' if n != 1 else ''}, "
                                            f"only {left} left (message is {len(self.buf)} bytes)")

    def take(self, n: int, what: str = "value") -> bytes:
        self.need(n, what)
        start = self.pos
        self.pos += n
        return self.buf[start:self.pos]

    def unpack(self, st: struct.Struct, what: str) -> int:
        self.need(st.size, what)
        (value,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return int(value)

    def int8(self) -> int:
        return self.unpack(_I8, "an int8")

    def int16(self) -> int:
        return self.unpack(_I16, "an int16")

    def uint16(self) -> int:
        return self.unpack(_U16, "a uint16 length")

    def int32(self) -> int:
        return self.unpack(_I32, "an int32")

    def int64(self) -> int:
        return self.unpack(_I64, "an int64")


class Writer:
    """Appends big-endian primitives to a buffer."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    @property
    def offset(self) -> int:
        return len(self.buf)

    def pack(self, st: struct.Struct, value: int, what: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldProblem(self.offset, f"expected an integer for {what}, got {type(value).__name__}")
        try:
            self.buf += st.pack(value)
        except struct.error:
            raise FieldProblem(self.offset, f"{value} does not fit {what}") from None

    def raw(self, data: bytes) -> None:
        self.buf += data

    def getvalue(self) -> bytes:
        return bytes(self.buf)


class Codec(Protocol):
    """How one value is read and written; ``min_size`` bounds array counts against the buffer."""

    min_size: int

    def read(self, r: Reader) -> Any: ...

    def write(self, w: Writer, value: Any) -> None: ...


class _Int:
    __slots__ = ("min_size", "name", "st")

    def __init__(self, st: struct.Struct, name: str) -> None:
        self.st, self.name, self.min_size = st, name, st.size

    def read(self, r: Reader) -> int:
        return r.unpack(self.st, f"an {self.name}")

    def write(self, w: Writer, value: Any) -> None:
        w.pack(self.st, value, f"an {self.name}")


INT8: Codec = _Int(_I8, "int8")
INT16: Codec = _Int(_I16, "int16")
INT32: Codec = _Int(_I32, "int32")
INT64: Codec = _Int(_I64, "int64")


class _Uuid:
    """16 bytes: most then least significant 64 bits, read as a ProcessId (Java's UUID)."""

    min_size = 16

    def read(self, r: Reader) -> ProcessId:
        r.need(16, "a UUID")
        msb, lsb = _UUID.unpack_from(r.buf, r.pos)
        r.pos += 16
        return ProcessId.of_ints(msb, lsb)

    def write(self, w: Writer, value: Any) -> None:
        if not isinstance(value, ProcessId):
            raise FieldProblem(w.offset, f"expected a process id (UUID), got {type(value).__name__}")
        w.raw(_UUID.pack(value.msb, value.lsb))


UUID: Codec = _Uuid()


def _utf8(data: bytes, start: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FieldProblem(start + exc.start, f"invalid UTF-8 ({exc.reason})") from None


class _KString:
    """Kafka's generated string: int16 byte length (-1 = null when nullable) + UTF-8."""

    min_size = 2

    def __init__(self, nullable: bool) -> None:
        self.nullable = nullable

    def read(self, r: Reader) -> str | None:
        start = r.offset
        length = r.int16()
        if length < 0:
            if length == -1 and self.nullable:
                return None
            raise FieldProblem(start, "null is not allowed here" if length == -1 else f"invalid length {length}")
        body = r.offset
        return _utf8(r.take(length, f"a string of length {length}"), body)

    def write(self, w: Writer, value: Any) -> None:
        if value is None:
            if not self.nullable:
                raise FieldProblem(w.offset, "null is not allowed here")
            w.pack(_I16, -1, "an int16")
            return
        data = _encode_text(value, w)
        if len(data) > 0x7FFF:
            raise FieldProblem(w.offset, f"string of {len(data)} UTF-8 bytes is longer than 32767")
        w.pack(_I16, len(data), "an int16")
        w.raw(data)


def _encode_text(value: Any, w: Writer) -> bytes:
    if not isinstance(value, str):
        raise FieldProblem(w.offset, f"expected a string, got {type(value).__name__}")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldProblem(w.offset, "string contains a lone surrogate (not valid Unicode)") from None


KSTRING: Codec = _KString(False)
NULLABLE_KSTRING: Codec = _KString(True)


class _KBytes:
    """Kafka's generated bytes: int32 length (-1 = null when nullable) + raw bytes."""

    min_size = 4

    def __init__(self, nullable: bool) -> None:
        self.nullable = nullable

    def read(self, r: Reader) -> bytes | None:
        start = r.offset
        length = r.int32()
        if length < 0:
            if length == -1 and self.nullable:
                return None
            raise FieldProblem(start, "null is not allowed here" if length == -1 else f"invalid length {length}")
        return r.take(length, f"a byte string of length {length}")

    def write(self, w: Writer, value: Any) -> None:
        if value is None:
            if not self.nullable:
                raise FieldProblem(w.offset, "null is not allowed here")
            w.pack(_I32, -1, "an int32")
            return
        if not isinstance(value, bytes | bytearray):
            raise FieldProblem(w.offset, f"expected bytes, got {type(value).__name__}")
        w.pack(_I32, len(value), "an int32")
        w.raw(bytes(value))


KBYTES: Codec = _KBytes(False)
NULLABLE_KBYTES: Codec = _KBytes(True)


class _Utf8Bytes:
    """Non-nullable Kafka bytes holding UTF-8 text; with ``empty_is_none`` empty <-> None."""

    min_size = 4

    def __init__(self, empty_is_none: bool) -> None:
        self.empty_is_none = empty_is_none

    def read(self, r: Reader) -> str | None:
        start = r.offset
        length = r.int32()
        if length < 0:
            raise FieldProblem(start, f"invalid length {length}")
        body = r.offset
        text = _utf8(r.take(length, f"a byte string of length {length}"), body)
        return None if self.empty_is_none and not text else text

    def write(self, w: Writer, value: Any) -> None:
        data = b"" if value is None and self.empty_is_none else _encode_text(value, w)
        w.pack(_I32, len(data), "an int32")
        w.raw(data)


UTF8_KBYTES: Codec = _Utf8Bytes(False)
UTF8_KBYTES_EMPTY_IS_NONE: Codec = _Utf8Bytes(True)


class _JUtf:
    """Java's ``DataOutputStream.writeUTF``: uint16 byte length + *modified* UTF-8 (NUL as C0 80,
    characters outside the BMP as two 3-byte surrogates)."""

    min_size = 2

    def read(self, r: Reader) -> str:
        length = r.uint16()
        start = r.offset
        return _decode_modified_utf8(r.take(length, f"a string of length {length}"), start)

    def write(self, w: Writer, value: Any) -> None:
        if not isinstance(value, str):
            raise FieldProblem(w.offset, f"expected a string, got {type(value).__name__}")
        data = _encode_modified_utf8(value, w)
        if len(data) > 0xFFFF:
            raise FieldProblem(w.offset, f"string of {len(data)} modified-UTF-8 bytes is longer than 65535")
        w.pack(_U16, len(data), "a uint16")
        w.raw(data)


def _encode_modified_utf8(text: str, w: Writer) -> bytes:
    if text.isascii() and "\0" not in text:
        return text.encode("ascii")
    try:
        units = text.encode("utf-16-be")
    except UnicodeEncodeError:
        raise FieldProblem(w.offset, "string contains a lone surrogate (not valid Unicode)") from None
    out = bytearray()
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    return bytes(out)


def _decode_modified_utf8(data: bytes, start: int) -> str:
    """Decode like ``DataInputStream.readUTF`` (which also accepts a raw NUL byte and overlong forms),
    but reject lone surrogates: they are not text."""
    if data.isascii():
        return data.decode("ascii")
    units = bytearray()
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            c, size = b, 1
        elif b >> 5 == 0b110:
            if i + 1 >= n or data[i + 1] >> 6 != 0b10:
                raise FieldProblem(start + i, "malformed modified UTF-8 (truncated 2-byte sequence)")
            c, size = ((b & 0x1F) << 6) | (data[i + 1] & 0x3F), 2
        elif b >> 4 == 0b1110:
            if i + 2 >= n or data[i + 1] >> 6 != 0b10 or data[i + 2] >> 6 != 0b10:
                raise FieldProblem(start + i, "malformed modified UTF-8 (truncated 3-byte sequence)")
            c, size = ((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F), 3
        else:
            raise FieldProblem(start + i, f"malformed modified UTF-8 (byte 0x{b:02x} cannot start a character)")
        units += bytes((c >> 8, c & 0xFF))
        i += size
    try:
        return bytes(units).decode("utf-16-be")
    except UnicodeDecodeError as exc:
        raise FieldProblem(start, f"modified UTF-8 holds an unpaired surrogate ({exc.reason})") from None


JUTF: Codec = _JUtf()


class _JChars:
    """Java's ``writeChars`` after an int32 char count: UTF-16BE code units; empty <-> None."""

    min_size = 4

    def read(self, r: Reader) -> str | None:
        start = r.offset
        count = r.int32()
        if count < 0:
            raise FieldProblem(start, f"invalid character count {count}")
        body = r.offset
        r.need(2 * count, f"{count} UTF-16 characters")
        data = r.take(2 * count)
        try:
            text = data.decode("utf-16-be")
        except UnicodeDecodeError as exc:
            raise FieldProblem(body + exc.start, f"invalid UTF-16 ({exc.reason})") from None
        return text or None

    def write(self, w: Writer, value: Any) -> None:
        if value is None:
            w.pack(_I32, 0, "an int32")
            return
        if not isinstance(value, str):
            raise FieldProblem(w.offset, f"expected a string, got {type(value).__name__}")
        try:
            data = value.encode("utf-16-be")
        except UnicodeEncodeError:
            raise FieldProblem(w.offset, "string contains a lone surrogate (not valid Unicode)") from None
        w.pack(_I32, len(data) // 2, "an int32")
        w.raw(data)


JCHARS: Codec = _JChars()


class Array:
    """int32 element count + elements, read into a tuple; the count is checked against the buffer
    before anything is allocated, so a corrupt count fails at once."""

    min_size = 4

    def __init__(self, element: Codec) -> None:
        self.element = element

    def read(self, r: Reader) -> tuple[Any, ...]:
        start = r.offset
        count = r.int32()
        if count < 0:
            raise FieldProblem(start, "null is not allowed here" if count == -1 else f"invalid count {count}")
        least = count * self.element.min_size
        if least > r.remaining:
            raise FieldProblem(start, f"count {count} needs at least {least} more bytes, only {r.remaining} left")
        read = self.element.read
        items = []
        for i in range(count):
            try:
                items.append(read(r))
            except FieldProblem as problem:
                raise problem.under(f"[{i}]") from None
        return tuple(items)

    def write(self, w: Writer, value: Any) -> None:
        if not isinstance(value, tuple | list):
            raise FieldProblem(w.offset, f"expected a list, got {type(value).__name__}")
        w.pack(_I32, len(value), "an int32")
        write = self.element.write
        for i, item in enumerate(value):
            try:
                write(w, item)
            except FieldProblem as problem:
                raise problem.under(f"[{i}]") from None


class Struct:
    """A record of named parts; ``make`` builds the value from the parts read, ``parts`` splits a value."""

    def __init__(
        self, fields: Sequence[tuple[str, Codec]], make: Callable[..., Any], parts: Callable[[Any], Sequence[Any]]
    ) -> None:
        self.fields = tuple(fields)
        self.make = make
        self.parts = parts
        self.min_size = sum(c.min_size for _, c in self.fields)

    def read(self, r: Reader) -> Any:
        start = r.offset
        values = []
        for name, codec in self.fields:
            try:
                values.append(codec.read(r))
            except FieldProblem as problem:
                raise problem.under(name) from None
        try:
            return self.make(*values)
        except ValueError as exc:  # the parts read fine but do not form a valid value
            raise FieldProblem(start, str(exc)) from None

    def write(self, w: Writer, value: Any) -> None:
        try:
            parts = self.parts(value)
        except (TypeError, ValueError, AttributeError) as exc:
            raise FieldProblem(w.offset, f"not a valid value here ({exc})") from None
        for (name, codec), part in zip(self.fields, parts, strict=True):
            try:
                codec.write(w, part)
            except FieldProblem as problem:
                raise problem.under(name) from None


def task_id(subtopology: int, partition: int, topology_name: str | None = None) -> TaskId:
    """A TaskId from wire parts; negative numbers are rejected (Kafka's TaskId forbids them)."""
    if subtopology < 0 or partition < 0:
        raise ValueError(f"task id {subtopology}_{partition} has a negative subtopology or partition")
    return TaskId(subtopology, partition, topology_name)


def unnamed_parts(t: TaskId) -> tuple[int, int]:
    if not isinstance(t, TaskId):
        raise TypeError(f"expected a TaskId, got {type(t).__name__}")
    if t.topology_name is not None:
        raise ValueError(f"task {t} has a topology name, which this version cannot carry (needs version 10+)")
    return (t.subtopology, t.partition)


@dataclass(frozen=True, slots=True)
class Field:
    """One row of a message table: the attributes it fills, its versions (inclusive), its codec.

    ``label`` prefixes error paths; composite codecs that name their own parts use ``label=""``.
    """

    attrs: tuple[str, ...]
    low: int
    high: int
    codec: Codec
    label: str

    def present(self, version: int) -> bool:
        return self.low <= version <= self.high


def field(attrs: str | tuple[str, ...], versions: str, codec: Codec, label: str | None = None) -> Field:
    """``field("prev_tasks", "1-6", ...)``; versions are ``"3"``, ``"1-6"`` or ``"7+"``."""
    names = (attrs,) if isinstance(attrs, str) else attrs
    if versions.endswith("+"):
        low, high = int(versions[:-1]), ANY_VERSION_ABOVE
    elif "-" in versions:
        a, b = versions.split("-")
        low, high = int(a), int(b)
    else:
        low = high = int(versions)
    return Field(names, low, high, codec, names[0] if label is None else label)


def read_fields(table: Sequence[Field], version: int, r: Reader) -> dict[str, Any]:
    """Read every field of ``table`` present in ``version``, in table order."""
    values: dict[str, Any] = {}
    for f in table:
        if not f.present(version):
            continue
        try:
            value = f.codec.read(r)
        except FieldProblem as problem:
            raise (problem.under(f.label) if f.label else problem) from None
        if len(f.attrs) == 1:
            values[f.attrs[0]] = value
        else:
            values.update(zip(f.attrs, value, strict=True))
    return values


def write_fields(table: Sequence[Field], version: int, w: Writer, message: Any) -> None:
    """Write every field of ``table`` present in ``version`` from the attributes of ``message``."""
    for f in table:
        if not f.present(version):
            continue
        value = getattr(message, f.attrs[0]) if len(f.attrs) == 1 else tuple(getattr(message, a) for a in f.attrs)
        try:
            f.codec.write(w, value)
        except FieldProblem as problem:
            raise (problem.under(f.label) if f.label else problem) from None


def read_version(r: Reader, codec: Codec) -> int:
    """Read a message's leading version (errors under ``version``) and remember it on the reader."""
    try:
        version: int = codec.read(r)
    except FieldProblem as problem:
        raise problem.under("version") from None
    r.version = version
    return version


def encode_message(message: str, version: int, write: Callable[[Writer], None]) -> bytes:
    """Run ``write`` on a fresh buffer; a FieldProblem becomes an EncodeError naming the field."""
    w = Writer()
    try:
        write(w)
    except FieldProblem as problem:
        raise EncodeError(message, join_path(problem.path), problem.reason, version=version) from None
    return w.getvalue()


def decode_message(message: str, data: bytes, base: int, read: Callable[[Reader], T]) -> tuple[T, int]:
    """Run ``read`` over ``data``; returns the value and the bytes it took. A FieldProblem becomes a
    DecodeError naming the field and byte offset."""
    r = Reader(data, base)
    try:
        value = read(r)
    except FieldProblem as problem:
        raise DecodeError(message, join_path(problem.path), problem.offset, problem.reason,
                          version=r.version) from None
    return value, r.pos


class DecodableMessage:
    """``decode`` and ``decode_prefix`` for every wire message, written once: a message class names
    itself in ``MESSAGE`` (for errors) and reads its fields in ``_read``."""

    __slots__ = ()

    MESSAGE: ClassVar[str]

    @classmethod
    def _read(cls, r: Reader) -> Self:
        raise NotImplementedError

    @classmethod
    def decode(cls, data: bytes, *, base: int = 0) -> Self:
        """Decode Kafka's bytes; DecodeError names the field and the byte offset (plus ``base``).
        Trailing bytes are ignored, as Kafka does."""
        return cls.decode_prefix(data, base=base)[0]

    @classmethod
    def decode_prefix(cls, data: bytes, *, base: int = 0) -> tuple[Self, int]:
        """Decode and also return how many bytes the message took (the rest is trailing)."""
        return decode_message(cls.MESSAGE, data, base, cls._read)
