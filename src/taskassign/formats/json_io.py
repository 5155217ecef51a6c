"""JSON in and out: reading documents with errors that name the JSON path of the offending value, and
writing them deterministically (same document, same bytes; atomically, so a crash never leaves half a file).

Every input file taskassign reads goes through ``read_input_bytes`` (the one safe reader): the path must be
a regular file, or ``-`` for standard input, and at most ``max_input_bytes()`` bytes are read
(``TASKASSIGN_MAX_INPUT_BYTES``, default 256 MiB). A FIFO, a socket or a device (``/dev/zero``,
``/dev/urandom``) is refused before it is opened for reading, so it can neither block nor fill the memory.

Every check raises ScenarioError(path, message); paths look like ``$.tasks[3].partitions[0].topic``.
Every taskassign file starts with a ``format`` tag (``taskassign/<kind>/v1``); ``expect_format`` checks it.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import sys
import uuid
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from taskassign.errors import InputFileError, OutputFileError, ScenarioError, UserInputError
from taskassign.formats.json_indent import indented_json

__all__ = (
    "DEFAULT_MAX_INPUT_BYTES",
    "MAX_INPUT_BYTES_ENV",
    "STDIN",
    "JsonObject",
    "describe",
    "dump_json",
    "fail",
    "load_json_file",
    "load_json_text",
    "max_input_bytes",
    "prepare_output_dir",
    "read_input_bytes",
    "read_input_text",
    "source_name",
    "to_json_text",
    "write_output_bytes",
    "write_output_text",
)

#: The environment variable that sets the input cap (bytes), and its default: far above any real
#: scenario, group or events file (a 10^5-task scenario is ~30 MB), far below what would exhaust memory.
MAX_INPUT_BYTES_ENV = "TASKASSIGN_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
#: The path that means standard input.
STDIN = "-"

T = TypeVar("T")
_MISSING: Any = object()
LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1


def fail(path: str, message: str, source: str | None = None) -> NoReturn:
    raise ScenarioError(path, message, source=source)


def describe(value: Any) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # built in C; a shorter dict means a key came twice (found only then)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


class _NonFinite:
    """What ``NaN``, ``Infinity`` or an overflowing number parse into: a marker found again by its JSON path."""

    __slots__ = ("text",)

    def __init__(self, text: str, seen: list[str]) -> None:
        self.text = text
        seen.append(text)


def _finite_float(digits: str, seen: list[str]) -> float | _NonFinite:
    value = float(digits)
    return value if math.isfinite(value) else _NonFinite(digits, seen)


def _fail_non_finite(doc: Any, source: str) -> None:
    """Raise naming the JSON path of the first non-finite number in ``doc``."""
    stack: list[tuple[str, Any]] = [("$", doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _NonFinite):
            fail(path, f"{value.text} is not a number JSON allows (it must be finite)", source)
        if isinstance(value, dict):
            stack.extend((f"{path}.{key}", item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in reversed(list(enumerate(value))))


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


#: A ``\\uXXXX`` escape of a surrogate: only such escapes can put an unpaired surrogate into parsed text.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
#: What a number past a double's range needs: an exponent of 3 digits or more, or 309 digits in a row; found
#: with one ``str.translate`` (digits to 0, E to e, + dropped) and two substring searches, at C speed.
_DIGITS_FOLDED = str.maketrans({**{str(d): "0" for d in range(1, 10)}, "E": "e", "+": None})


def _may_overflow(text: str) -> bool:
    folded = text.translate(_DIGITS_FOLDED)
    return "e000" in folded or "0" * 309 in folded


def load_json_text(text: str, source: str) -> Any:
    """Parse JSON text; syntax errors name line, column and character offset; duplicate keys fail; a string
    holding an unpaired surrogate (``"\\ud800"``: not Unicode text, so not writable as UTF-8) fails naming
    its JSON path; so does a number that is not finite (``NaN``, ``Infinity``: not JSON, though Python's parser
    takes them; ``1e999``: past a double), which no check downstream could compare or print."""
    non_finite: list[str] = []
    try:
        # Only a number with a 3-digit exponent or 309 digits can overflow a double: the float hook (a Python
        # call per float) is installed only when the text holds one.
        parse_float = (lambda digits: _finite_float(digits, non_finite)) if _may_overflow(text) else None
        doc = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_float=parse_float,
                         parse_constant=lambda name: _NonFinite(name, non_finite))
        if non_finite:
            _fail_non_finite(doc, source)
        if _SURROGATE_ESCAPE.search(text):
            _check_surrogates(doc, source)
        return doc
    except ScenarioError:
        raise
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            "$", f"invalid JSON at line {exc.lineno}, column {exc.colno} (char {exc.pos}): {exc.msg}",
            source=source,
        ) from None
    except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ScenarioError("$", "a number with too many digits to be any integer taskassign reads",
                            source=source) from None
    except _DuplicateKey as exc:
        raise ScenarioError("$", f"duplicate key {exc.key!r} in a JSON object", source=source) from None
    except RecursionError:
        # Python's parser recurses once per level: a document nested deeper than the interpreter's stack
        # allows (about sys.getrecursionlimit() levels) is not a taskassign document.
        raise ScenarioError("$", f"JSON nested too deeply (taskassign documents nest a few levels; this one "
                                 f"exceeds the parser's limit of about {sys.getrecursionlimit()})",
                            source=source) from None


def load_json_file(path: str | Path) -> Any:
    """Read and parse a JSON file (``-``: standard input), turning I/O and syntax errors into user errors
    naming the file."""
    text = read_input_text(path, what="JSON file")
    return load_json_text(text, source_name(path))


# --- reading input files safely ---------------------------------------------------------------------


def max_input_bytes() -> int:
    """The input cap: ``TASKASSIGN_MAX_INPUT_BYTES`` if set (a positive integer), else the default."""
    raw = os.environ.get(MAX_INPUT_BYTES_ENV)
    if raw is None or raw.strip() == "":
        return DEFAULT_MAX_INPUT_BYTES
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise UserInputError(f"{MAX_INPUT_BYTES_ENV} must be a positive number of bytes, got {raw!r}")
    return value


def source_name(path: str | Path) -> str:
    """How error messages name an input: ``stdin`` for ``-``, else the path."""
    return "stdin" if str(path) == STDIN else str(path)


def read_input_bytes(path: str | Path, *, what: str = "input file", limit: int | None = None) -> bytes:
    """The bytes of ``path``: a regular file (symbolic links followed), or standard input for ``-``.

    At most ``limit`` bytes (default ``max_input_bytes()``); more is an InputFileError, as is a path that is
    missing, unreadable, a directory or not a regular file. ``os.stat`` runs first, so a FIFO or a device is
    refused without being opened (opening a FIFO blocks until a writer comes); the descriptor is opened
    non-blocking and checked again with ``fstat``, so a file swapped for a FIFO in between is refused too.
    Never more than ``limit + 1`` bytes are read, from a file that grows meanwhile or from a pipe on stdin.
    """
    cap = max_input_bytes() if limit is None else limit
    source = source_name(path)
    if str(path) == STDIN:
        data = sys.stdin.buffer.read(cap + 1)
        if len(data) > cap:
            raise InputFileError(source, _too_large(cap, what, limit is None))
        return data
    try:
        _check_regular(os.stat(path), what, cap, limit is None)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(source, _os_reason(exc)) from None
    try:
        _check_regular(os.fstat(fd), what, cap, limit is None)
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InputFileError(source, _os_reason(exc)) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap:
        raise InputFileError(source, _too_large(cap, what, limit is None))
    return data


def read_input_text(path: str | Path, *, what: str = "input file", limit: int | None = None) -> str:
    """``read_input_bytes`` decoded as UTF-8; invalid UTF-8 is an error naming its byte offset."""
    data = read_input_bytes(path, what=what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(source_name(path), f"not UTF-8 text (byte offset {exc.start})") from None


def _check_regular(status: os.stat_result, what: str, cap: int, configurable: bool) -> None:
    if stat.S_ISDIR(status.st_mode):
        raise _Refused(f"is a directory, not a {what}")
    if not stat.S_ISREG(status.st_mode):
        raise _Refused(f"is not a regular file, not read (a pipe, socket or device could block or never end; "
                       f"give {STDIN} to read standard input)")
    if status.st_size > cap:
        raise _Refused(_too_large(cap, what, configurable))


def _too_large(cap: int, what: str, configurable: bool) -> str:
    hint = f"; {MAX_INPUT_BYTES_ENV} raises the limit" if configurable else ""
    return f"larger than {cap} bytes: not read as a {what}{hint}"


class _Refused(OSError):
    """A path refused before or after opening it (an OSError, so one handler turns both into errors)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _os_reason(error: OSError) -> str:
    """Why ``error`` stopped the read: the refusal's own words, or the OS's (without the exception's repr)."""
    if isinstance(error, _Refused):
        return error.reason
    words = error.strerror or errno.errorcode.get(error.errno or 0, "") or type(error).__name__
    return f"cannot read the file: {words}"


def _check_surrogates(doc: Any, source: str) -> None:
    """Fail on the first string (key or value) with an unpaired surrogate, naming its JSON path."""
    stack: list[tuple[Any, str]] = [(doc, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if not _is_unicode(value):
                fail(path, "the string holds an unpaired surrogate (\\uD800-\\uDFFF alone is not Unicode text)",
                     source)
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if not _is_unicode(key):
                    fail(path, "a key holds an unpaired surrogate (\\uD800-\\uDFFF alone is not Unicode text)",
                         source)
                stack.append((item, f"{path}.{key}"))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in reversed(list(enumerate(value))))


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class JsonObject:
    """A JSON object being read at ``path``: typed getters, and ``finish`` rejects unknown keys."""

    __slots__ = ("_seen", "data", "path", "source")

    def __init__(self, value: Any, path: str, source: str | None = None) -> None:
        if not isinstance(value, dict):
            fail(path, f"expected an object, got {describe(value)}", source)
        self.data: dict[str, Any] = value
        self.path = path
        self.source = source
        self._seen: set[str] = set()

    def sub(self, key: str) -> str:
        return f"{self.path}.{key}"

    def fail(self, key: str | None, message: str) -> NoReturn:
        fail(self.sub(key) if key else self.path, message, self.source)

    def expect_format(self, expected: str, *, what: str = "") -> None:
        """The document's ``format`` tag must be ``expected`` (``what`` says which file that is), so that a
        file of another kind fails on its first key instead of somewhere inside."""
        fmt = self.string("format")
        if fmt != expected:
            self.fail("format", f"expected {expected!r}{what}, got {fmt!r}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        self._seen.add(key)
        if key not in self.data:
            if default is _MISSING:
                self.fail(None, f"missing required key {key!r}")
            return default
        return self.data[key]

    def obj(self, key: str, default: Any = _MISSING) -> JsonObject:
        value = self.raw(key, {} if default is _MISSING else default)
        if value is None and default is None:
            return JsonObject({}, self.sub(key), self.source)
        return JsonObject(value, self.sub(key), self.source)

    def string(self, key: str, default: Any = _MISSING, *, nullable: bool = False, non_empty: bool = False) -> Any:
        value = self.raw(key, default)
        if value is None and (nullable or default is None):
            return None
        if not isinstance(value, str):
            self.fail(key, f"expected a string, got {describe(value)}")
        if non_empty and not value:
            self.fail(key, "must not be empty")
        return value

    def integer(
        self, key: str, default: Any = _MISSING, *, minimum: int | None = None, maximum: int = LONG_MAX,
        nullable: bool = False, allowed: Collection[int] = (),
    ) -> Any:
        value = self.raw(key, default)
        if value is None and (nullable or (default is None and key not in self.data)):
            return None
        return check_int(value, self.sub(key), minimum=minimum, maximum=maximum, allowed=allowed,
                         source=self.source)

    def boolean(self, key: str, default: Any = _MISSING) -> Any:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"expected true or false, got {describe(value)}")
        return value

    def array(self, key: str, default: Any = _MISSING) -> list[Any]:
        value = self.raw(key, default)
        if not isinstance(value, list):
            self.fail(key, f"expected an array, got {describe(value)}")
        return value

    def string_list(self, key: str, default: Any = _MISSING, *, unique: bool = True) -> list[str]:
        items = self.array(key, default)
        seen: set[str] = set()
        for i, item in enumerate(items):
            if not isinstance(item, str):
                fail(f"{self.sub(key)}[{i}]", f"expected a string, got {describe(item)}", self.source)
            if unique and item in seen:
                fail(f"{self.sub(key)}[{i}]", f"{item!r} is listed twice", self.source)
            seen.add(item)
        return items

    def map_of(self, key: str, convert: Callable[[Any, str], T]) -> dict[str, T]:
        """An object whose values all pass ``convert(value, path)``; keys kept in document order."""
        value = self.raw(key, {})
        if not isinstance(value, dict):
            self.fail(key, f"expected an object, got {describe(value)}")
        return {k: convert(v, f"{self.sub(key)}.{k}") for k, v in value.items()}

    def finish(self, allowed_extra: Collection[str] = ()) -> None:
        """Reject keys that no getter asked for (typos must not be silently ignored)."""
        unknown = [k for k in self.data if k not in self._seen and k not in allowed_extra]
        if unknown:
            known = ", ".join(sorted(self._seen | set(allowed_extra)))
            self.fail(unknown[0], f"unknown key {unknown[0]!r} (known keys here: {known})")


def check_int(
    value: Any, path: str, *, minimum: int | None = None, maximum: int = LONG_MAX,
    allowed: Collection[int] = (), source: str | None = None,
) -> int:
    """``value`` must be a JSON integer (not a boolean or float) within range, or one of ``allowed``."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(path, f"expected an integer, got {describe(value)}", source)
    if value in allowed:
        return value
    low = LONG_MIN if minimum is None else minimum
    if value < low or value > maximum:
        extra = f" (or one of {', '.join(map(str, sorted(allowed)))})" if allowed else ""
        fail(path, f"must be between {low} and {maximum}{extra}, got {value}", source)
    return value


# --- writing ----------------------------------------------------------------------------------------


def to_json_text(doc: Any, *, indent: int | None = 2) -> str:
    """``doc`` as JSON text, indented as ``json.dumps`` indents (``json_indent``: same bytes, faster)."""
    if indent is None:
        return json.dumps(doc, ensure_ascii=False) + "\n"
    return indented_json(doc, indent) + "\n"


def dump_json(doc: Any, path: str | Path, *, indent: int | None = 2) -> None:
    """Write ``doc`` atomically (``write_output_text``)."""
    write_output_text(to_json_text(doc, indent=indent), path)


def write_output_text(text: str, path: str | Path, *, encoding: str = "utf-8") -> None:
    """``write_output_bytes`` of ``text`` encoded."""
    write_output_bytes(text.encode(encoding), path)


def write_output_bytes(data: bytes, path: str | Path) -> None:
    """Write an output file atomically (temp file beside it, then a rename), so a crash never leaves a
    half-written file. The file gets the permissions of any file the user creates (0666 less the umask).

    Missing parent directories are created. A directory at ``path``, a file among its parents, or a
    directory that cannot be written is an OutputFileError naming the path (exit code 2), never an
    IsADirectoryError or FileExistsError traceback."""
    target = Path(path)
    if target.is_dir():
        raise OutputFileError(str(target), "is a directory; give the path of a file to write")
    prepare_output_dir(target.parent, for_file=target)
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise OutputFileError(str(target), f"cannot write the file: {_os_words(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputFileError(str(target), f"cannot write the file: {_os_words(exc)}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def prepare_output_dir(path: str | Path, *, for_file: Path | None = None) -> Path:
    """Make sure ``path`` is a directory (creating it and its parents); a file in the way is an
    OutputFileError naming it (``for_file``: the file being written there, named in the message)."""
    directory = Path(path)
    named = str(for_file) if for_file is not None else str(directory)
    for candidate in (directory, *directory.parents):
        if candidate.exists() or candidate.is_symlink():
            if not candidate.is_dir():
                if candidate == directory and for_file is None:
                    raise OutputFileError(named, "exists and is not a directory")
                raise OutputFileError(named, f"{candidate} is in the way: it exists and is not a directory")
            break
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFileError(named, f"cannot create the directory {directory}: {_os_words(exc)}") from None
    return directory


def _os_words(error: OSError) -> str:
    return error.strerror or errno.errorcode.get(error.errno or 0, "") or type(error).__name__
